/*
 * Minimal Cortex-M startup for the QEMU test harness (mps2-an386 / Cortex-M4F).
 * Vector table in `.vectors` (placed first in ROM by m4.ld): initial SP and reset handler;
 * every fault handler exits QEMU with a non-zero status through semihosting so a crash never
 * hangs. The reset handler enables the FPU (CP10/CP11) and enters newlib's _start (rdimon),
 * which zeroes .bss, sets up semihosting stdio and calls main; main's return value becomes
 * QEMU's exit status.
 */
#include <stdint.h>

extern uint32_t __stack_top;
extern void _start(void);

static void semihost_exit_error(uint32_t reason) {
  register uint32_t r0 __asm__("r0") = 0x18; /* SYS_EXIT */
  register uint32_t r1 __asm__("r1") = reason;
  __asm__ volatile("bkpt 0xAB" : : "r"(r0), "r"(r1) : "memory");
  for (;;) {
  }
}

void Reset_Handler(void) {
  volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
  *cpacr |= (0xFu << 20); /* full access to CP10 and CP11 */
  __asm__ volatile("dsb\n\tisb");
  _start();
  semihost_exit_error(0x20023u);
}

void Fault_Handler(void) { semihost_exit_error(0x20023u); /* ADP_Stopped_RunTimeErrorUnknown */ }

__attribute__((section(".vectors"), used)) const void *const vector_table[16] = {
    &__stack_top,          /* initial SP */
    (void *)Reset_Handler, /* reset */
    (void *)Fault_Handler, /* NMI */
    (void *)Fault_Handler, /* HardFault */
    (void *)Fault_Handler, /* MemManage */
    (void *)Fault_Handler, /* BusFault */
    (void *)Fault_Handler, /* UsageFault */
    0, 0, 0, 0,
    (void *)Fault_Handler, /* SVC */
    (void *)Fault_Handler, /* DebugMon */
    0,
    (void *)Fault_Handler, /* PendSV */
    (void *)Fault_Handler, /* SysTick */
};
