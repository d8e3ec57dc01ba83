/*
 * Minimal Cortex-M startup for QEMU's mps2 boards (tinyarena test and benchmark images).
 * The vector table holds the initial stack pointer and the reset handler; every fault
 * reports and exits non-zero through semihosting, so a crash never hangs. The reset
 * handler enables the FPU (CP10/CP11) and branches to newlib's _start, which zeroes .bss,
 * sets up semihosting stdio and calls main. QEMU's ELF loader writes .data straight to
 * RAM, so no copy loop is needed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern uint32_t __stack_top;
extern void _start(void);

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
