/*
 * DEPTHWISE_CONV_2D, the 3x3 stride 1 and stride 2 row kernels in Cortex-M DSP assembly, for jobs
 * whose channel takes ta_rqd on the doubled accumulator with all of int8 as the range and the
 * output offset folded (dw_job.use_asm; depthwise_simd.c runs the same loops in C otherwise).
 * Built only on a core with the DSP extension. Invariant: the bytes equal the C loops'.
 */
#include <stddef.h>

#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "depthwise_simd.h"

#if TA_SIMD_NATIVE
/* The assembly reads the job at fixed offsets. */
typedef char dw_job_layout_check[(offsetof(dw_job, bias) == 24 && offsetof(dw_job, m) == 28 &&
                                  offsetof(dw_job, out_pix_stride) == 40 && offsetof(dw_job, row0) == 44 &&
                                  offsetof(dw_job, out) == 52 && offsetof(dw_job, pitch) == 60 &&
                                  offsetof(dw_job, end) == 76)
                                     ? 1
                                     : -1];

/* Per output row: row pointers, end of the pairs; after it the single last output (odd n) and
 * the step to the next row. Shared text of the two assembly kernels. */
#define DW_ASM_ROW_START                                                                             \
  "1:\n\t"                                                                                           \
  "ldr r0, [lr, #44]\n\t"                                                                            \
  "ldr r3, [lr, #60]\n\t"                                                                            \
  "add r1, r0, r3\n\t"                                                                               \
  "add r2, r1, r3\n\t"                                                                               \
  "ldr r3, [lr, #52]\n\t"                                                                            \
  "ldr r6, [lr, #64]\n\t"                                                                            \
  "add r6, r3, r6\n\t"                                                                               \
  "str r6, [lr, #76]\n\t"                                                                            \
  "cmp r3, r6\n\t"                                                                                   \
  "beq 3f\n\t"
#define DW_ASM_PAIRS_END                                                                             \
  "ldr r4, [lr, #76]\n\t"                                                                            \
  "cmp r3, r4\n\t"                                                                                   \
  "bne 2b\n\t"                                                                                       \
  "3:\n\t"                                                                                           \
  "ldr r4, [lr, #72]\n\t"                                                                            \
  "cmp r4, #0\n\t"                                                                                   \
  "beq 4f\n\t"
#define DW_ASM_ROW_END                                                                               \
  "4:\n\t"                                                                                           \
  "ldr r4, [lr, #68]\n\t"                                                                            \
  "subs r4, r4, #1\n\t"                                                                              \
  "str r4, [lr, #68]\n\t"                                                                            \
  "beq 5f\n\t"                                                                                       \
  "ldrd r4, r5, [lr, #44]\n\t"                                                                       \
  "add r4, r4, r5\n\t"                                                                               \
  "str r4, [lr, #44]\n\t"                                                                            \
  "ldrd r4, r5, [lr, #52]\n\t"                                                                       \
  "add r4, r4, r5\n\t"                                                                               \
  "str r4, [lr, #52]\n\t"                                                                            \
  "b 1b\n\t"                                                                                         \
  "5:\n\t"

/* dw3x3s1_rows_c (depthwise_simd.c) for a job with use_asm: per 2 outputs 3 LDRD, 12 multiplies, 5 loads of
 * constants, 2 x (ADD, SMMLAR, ASR, SSAT, STRB), 4 of loop -- 34 instructions for 18 MACs.
 * r0-r2 kernel rows, r3 output, r4/r5 data, r6/r7 accumulators, r8-r11 W0 z0 W1 W2, r12 m,
 * lr the job. Saves and restores r4-r11 and lr itself. */
void ta_dw3x3s1_asm(dw_job *job) {
  register dw_job *j __asm__("r0") = job;
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "mov lr, r0\n\t"
      "ldm lr, {r8-r11}\n\t"
      "ldr r12, [lr, #28]\n\t" DW_ASM_ROW_START
      "2:\n\t"
      "ldrd r4, r5, [r0], #4\n\t"
      "ldr r6, [lr, #24]\n\t"
      "smlatb r7, r4, r8, r6\n\t"
      "smlad r6, r4, r8, r6\n\t"
      "smlabb r6, r5, r9, r6\n\t"
      "smladx r7, r5, r9, r7\n\t"
      "ldrd r4, r5, [r1], #4\n\t"
      "smlad r6, r4, r10, r6\n\t"
      "smlatb r7, r4, r10, r7\n\t"
      "ldr r4, [lr, #16]\n\t"
      "smlabb r6, r5, r4, r6\n\t"
      "smladx r7, r5, r4, r7\n\t"
      "ldrd r4, r5, [r2], #4\n\t"
      "smlad r6, r4, r11, r6\n\t"
      "smlatb r7, r4, r11, r7\n\t"
      "ldr r4, [lr, #20]\n\t"
      "smlabb r6, r5, r4, r6\n\t"
      "smladx r7, r5, r4, r7\n\t"
      "ldr r4, [lr, #32]\n\t"
      "add r5, r4, r6, asr #31\n\t"
      "add r4, r4, r7, asr #31\n\t"
      "smmlar r6, r6, r12, r5\n\t"
      "smmlar r7, r7, r12, r4\n\t"
      "ldrd r4, r5, [lr, #36]\n\t"
      "asr r6, r6, r4\n\t"
      "asr r7, r7, r4\n\t"
      "ssat r6, #8, r6\n\t"
      "ssat r7, #8, r7\n\t"
      "strb r6, [r3]\n\t"
      "strb r7, [r3, r5]\n\t"
      "add r3, r3, r5, lsl #1\n\t" DW_ASM_PAIRS_END
      "ldrd r4, r5, [r0]\n\t"
      "ldr r6, [lr, #24]\n\t"
      "smlad r6, r4, r8, r6\n\t"
      "smlabb r6, r5, r9, r6\n\t"
      "ldrd r4, r5, [r1]\n\t"
      "smlad r6, r4, r10, r6\n\t"
      "ldr r4, [lr, #16]\n\t"
      "smlabb r6, r5, r4, r6\n\t"
      "ldrd r4, r5, [r2]\n\t"
      "smlad r6, r4, r11, r6\n\t"
      "ldr r4, [lr, #20]\n\t"
      "smlabb r6, r5, r4, r6\n\t"
      "ldr r4, [lr, #32]\n\t"
      "add r4, r4, r6, asr #31\n\t"
      "smmlar r6, r6, r12, r4\n\t"
      "ldr r4, [lr, #36]\n\t"
      "asr r6, r6, r4\n\t"
      "ssat r6, #8, r6\n\t"
      "strb r6, [r3]\n\t" DW_ASM_ROW_END
      "pop {r4-r11, lr}\n\t"
      : "+r"(j)
      :
      : "r1", "r2", "r3", "r12", "cc", "memory");
}

/* dw3x3s2_rows_c for a job with use_asm: per 2 outputs 3 LDRD + 3 LDR, 12 multiplies, 4 loads
 * of constants, requantization as above -- 36 instructions for 18 MACs. r0-r2 kernel rows, r3
 * output, r4-r6 data, r7/r8 accumulators, r9-r12 W0 W1 W2 (w02, w12), lr the job. */
void ta_dw3x3s2_asm(dw_job *job) {
  register dw_job *j __asm__("r0") = job;
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "mov lr, r0\n\t"
      "ldm lr, {r9-r12}\n\t" DW_ASM_ROW_START
      "2:\n\t"
      "ldrd r4, r5, [r0], #8\n\t"
      "ldr r6, [r0]\n\t"
      "ldr r7, [lr, #24]\n\t"
      "smlad r8, r5, r9, r7\n\t"
      "smlad r7, r4, r9, r7\n\t"
      "smlabb r7, r5, r12, r7\n\t"
      "smlabb r8, r6, r12, r8\n\t"
      "ldrd r4, r5, [r1], #8\n\t"
      "ldr r6, [r1]\n\t"
      "smlad r8, r5, r10, r8\n\t"
      "smlad r7, r4, r10, r7\n\t"
      "smlabt r7, r5, r12, r7\n\t"
      "smlabt r8, r6, r12, r8\n\t"
      "ldrd r4, r5, [r2], #8\n\t"
      "ldr r6, [r2]\n\t"
      "smlad r8, r5, r11, r8\n\t"
      "smlad r7, r4, r11, r7\n\t"
      "ldr r4, [lr, #16]\n\t"
      "smlabb r7, r5, r4, r7\n\t"
      "smlabb r8, r6, r4, r8\n\t"
      "ldrd r4, r5, [lr, #28]\n\t"
      "add r6, r5, r7, asr #31\n\t"
      "add r5, r5, r8, asr #31\n\t"
      "smmlar r7, r7, r4, r6\n\t"
      "smmlar r8, r8, r4, r5\n\t"
      "ldrd r4, r5, [lr, #36]\n\t"
      "asr r7, r7, r4\n\t"
      "asr r8, r8, r4\n\t"
      "ssat r7, #8, r7\n\t"
      "ssat r8, #8, r8\n\t"
      "strb r7, [r3]\n\t"
      "strb r8, [r3, r5]\n\t"
      "add r3, r3, r5, lsl #1\n\t" DW_ASM_PAIRS_END
      "ldrd r4, r5, [r0]\n\t"
      "ldr r7, [lr, #24]\n\t"
      "smlad r7, r4, r9, r7\n\t"
      "smlabb r7, r5, r12, r7\n\t"
      "ldrd r4, r5, [r1]\n\t"
      "smlad r7, r4, r10, r7\n\t"
      "smlabt r7, r5, r12, r7\n\t"
      "ldrd r4, r5, [r2]\n\t"
      "smlad r7, r4, r11, r7\n\t"
      "ldr r4, [lr, #16]\n\t"
      "smlabb r7, r5, r4, r7\n\t"
      "ldrd r4, r5, [lr, #28]\n\t"
      "add r5, r5, r7, asr #31\n\t"
      "smmlar r7, r7, r4, r5\n\t"
      "ldr r4, [lr, #36]\n\t"
      "asr r7, r7, r4\n\t"
      "ssat r7, #8, r7\n\t"
      "strb r7, [r3]\n\t" DW_ASM_ROW_END
      "pop {r4-r11, lr}\n\t"
      : "+r"(j)
      :
      : "r1", "r2", "r3", "r12", "cc", "memory");
}
#else
/* Nothing here without the DSP extension; ISO C wants a declaration in every translation unit. */
typedef int ta_depthwise_asm_not_compiled;
#endif
