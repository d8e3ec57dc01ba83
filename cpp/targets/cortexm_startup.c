/*
 * Minimal Cortex-M startup for QEMU's mps2 boards (tinyarena test and benchmark images).
 * The vector table holds the initial stack pointer and the reset handler; every fault
 * reports and exits non-zero through semihosting, so a crash never hangs. The reset
 * handler enables the FPU (CP10/CP11) and branches to newlib's _start, which zeroes .bss,
 * sets up semihosting stdio and calls main. QEMU's ELF loader writes .data straight to
 * RAM, so no copy loop is needed.
 *
 * newlib's start-up moves the stack and bounds its heap where QEMU's SYS_HEAPINFO says: on the
 * mps2 boards the top of the board's PSRAM, on mps3-an547 the 512 KB ITCM at 0 -- which lies
 * below the linked RAM, so newlib's own _sbrk would refuse every allocation (and stdio could not
 * open a file). The _sbrk here gives malloc the linked RAM from the end of .bss to its end, or to
 * the stack pointer when the stack is in that RAM.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern uint32_t __stack_top;
extern char end; /* the end of .bss: the heap starts here */
extern void _start(void);

void *_sbrk(ptrdiff_t increment) {
  static char *heap_end = &end;
  char *const sp = (char *)__builtin_frame_address(0);
  char *const limit = sp > heap_end && sp < (char *)&__stack_top ? sp : (char *)&__stack_top;
  char *const previous = heap_end;
  if (increment > limit - heap_end) {
    errno = ENOMEM;
    return (void *)-1;
  }
  heap_end += increment;
  return previous;
}

void ta_fault_handler(void) {
  printf("tinyarena: CPU fault\n");
  exit(3);
}

void ta_reset_handler(void) {
#if defined(__ARM_FP)
  volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
  *cpacr |= (0xFu << 20);
  __asm volatile("dsb\n isb");
#endif
  _start();
  for (;;) {
  }
}

__attribute__((section(".vectors"), used)) const void *const ta_vectors[16] = {
    &__stack_top,       ta_reset_handler, ta_fault_handler, ta_fault_handler, ta_fault_handler,
    ta_fault_handler,   ta_fault_handler, 0,                0,                0,
    0,                  ta_fault_handler, ta_fault_handler, 0,                ta_fault_handler,
    ta_fault_handler,
};
