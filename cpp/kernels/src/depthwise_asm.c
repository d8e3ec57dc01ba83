/*
 * DEPTHWISE_CONV_2D, the 3x3 stride 1 and stride 2 row kernels in Cortex-M DSP assembly, for jobs
 * whose channel takes ta_rqd on the doubled accumulator with all of int8 as the range and the
 * output offset folded (dw_job.use_asm; depthwise_simd.c runs the same sums in C otherwise).
 * A row runs in blocks of four outputs (each kernel row's plane words loaded once with LDM, each
 * weight word pair once with LDRD, per output 6 multiplies and ADD, SMMLAR, ASR, SSAT, STRB),
 * then a pair and a single output for what is left (stride 2: three outputs as one block). With kernel row words A_i = (x_2i, x_2i+1)
 * from the block's first column and the job's W = (w0, w1), z = (w2, w1):
 *   stride 1: out_2i = SMLAD(A_i, W) + SMLABB(A_i+1, z), out_2i+1 = SMLATB(A_i, W) + SMLADX(A_i+1, z);
 *   stride 2: out_i = SMLAD(A_i, W) + SMLABB(A_i+1, z).
 * Registers: r0 the block's kernel row 0, r1 the kernel row pitch, r2 rows 1 and 2, r3 the
 * output, r4-r8 data, weights and temporaries, r9-r12 accumulators, lr the job.
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
                                  offsetof(dw_job, r) == 36 && offsetof(dw_job, out_pix_stride) == 40 &&
                                  offsetof(dw_job, row0) == 44 && offsetof(dw_job, in_skip) == 48 &&
                                  offsetof(dw_job, out_skip) == 52 && offsetof(dw_job, out) == 56 &&
                                  offsetof(dw_job, pitch) == 60 && offsetof(dw_job, quad_bytes) == 64 &&
                                  offsetof(dw_job, last) == 68 && offsetof(dw_job, n) == 72 &&
                                  offsetof(dw_job, end) == 76)
                                     ? 1
                                     : -1];

/* Kernel row k's weight words W, z into r7, r8; r2 to kernel row k (k = 1, 2) from row k - 1. */
#define DW_WEIGHTS(K) "ldrd r7, r8, [lr, #" #K "*8]\n\t"
#define DW_NEXT_ROW(K) DW_NEXT_ROW_##K
#define DW_NEXT_ROW_1 "add r2, r0, r1\n\t"
#define DW_NEXT_ROW_2 "add r2, r2, r1\n\t"

/* ta_rqd of accumulators r9..r12 (N = 4), r9..r11 (N = 3), r9..r10 (N = 2) or r9 (N = 1), stored at r3 with the
 * output pixel stride, r3 stepped past them. */
#define DW_REQ4                                                                                      \
  "ldrd r4, r5, [lr, #28]\n\t"                                                                       \
  "add r6, r5, r9, asr #31\n\t"                                                                      \
  "add r7, r5, r10, asr #31\n\t"                                                                     \
  "add r8, r5, r11, asr #31\n\t"                                                                     \
  "add r5, r5, r12, asr #31\n\t"                                                                     \
  "smmlar r9, r9, r4, r6\n\t"                                                                        \
  "smmlar r10, r10, r4, r7\n\t"                                                                      \
  "smmlar r11, r11, r4, r8\n\t"                                                                      \
  "smmlar r12, r12, r4, r5\n\t"                                                                      \
  "ldrd r4, r5, [lr, #36]\n\t"                                                                       \
  "asr r9, r9, r4\n\t"                                                                               \
  "asr r10, r10, r4\n\t"                                                                             \
  "asr r11, r11, r4\n\t"                                                                             \
  "asr r12, r12, r4\n\t"                                                                             \
  "ssat r9, #8, r9\n\t"                                                                              \
  "ssat r10, #8, r10\n\t"                                                                            \
  "ssat r11, #8, r11\n\t"                                                                            \
  "ssat r12, #8, r12\n\t"                                                                            \
  "strb r9, [r3]\n\t"                                                                                \
  "strb r10, [r3, r5]\n\t"                                                                           \
  "add r3, r3, r5, lsl #1\n\t"                                                                       \
  "strb r11, [r3]\n\t"                                                                               \
  "strb r12, [r3, r5]\n\t"                                                                           \
  "add r3, r3, r5, lsl #1\n\t"
#define DW_REQ2                                                                                      \
  "ldrd r4, r5, [lr, #28]\n\t"                                                                       \
  "add r6, r5, r9, asr #31\n\t"                                                                      \
  "add r5, r5, r10, asr #31\n\t"                                                                     \
  "smmlar r9, r9, r4, r6\n\t"                                                                        \
  "smmlar r10, r10, r4, r5\n\t"                                                                      \
  "ldrd r4, r5, [lr, #36]\n\t"                                                                       \
  "asr r9, r9, r4\n\t"                                                                               \
  "asr r10, r10, r4\n\t"                                                                             \
  "ssat r9, #8, r9\n\t"                                                                              \
  "ssat r10, #8, r10\n\t"                                                                            \
  "strb r9, [r3]\n\t"                                                                                \
  "strb r10, [r3, r5]\n\t"                                                                           \
  "add r3, r3, r5, lsl #1\n\t"
#define DW_REQ3                                                                                      \
  "ldrd r4, r5, [lr, #28]\n\t"                                                                       \
  "add r6, r5, r9, asr #31\n\t"                                                                      \
  "add r7, r5, r10, asr #31\n\t"                                                                     \
  "add r5, r5, r11, asr #31\n\t"                                                                     \
  "smmlar r9, r9, r4, r6\n\t"                                                                        \
  "smmlar r10, r10, r4, r7\n\t"                                                                      \
  "smmlar r11, r11, r4, r5\n\t"                                                                      \
  "ldrd r4, r5, [lr, #36]\n\t"                                                                       \
  "asr r9, r9, r4\n\t"                                                                               \
  "asr r10, r10, r4\n\t"                                                                             \
  "asr r11, r11, r4\n\t"                                                                             \
  "ssat r9, #8, r9\n\t"                                                                              \
  "ssat r10, #8, r10\n\t"                                                                            \
  "ssat r11, #8, r11\n\t"                                                                            \
  "strb r9, [r3]\n\t"                                                                                \
  "strb r10, [r3, r5]\n\t"                                                                           \
  "add r3, r3, r5, lsl #1\n\t"                                                                       \
  "strb r11, [r3]\n\t"                                                                               \
  "add r3, r3, r5\n\t"
#define DW_REQ1                                                                                      \
  "ldrd r4, r5, [lr, #28]\n\t"                                                                       \
  "add r5, r5, r9, asr #31\n\t"                                                                      \
  "smmlar r9, r9, r4, r5\n\t"                                                                        \
  "ldrd r4, r5, [lr, #36]\n\t"                                                                       \
  "asr r9, r9, r4\n\t"                                                                               \
  "ssat r9, #8, r9\n\t"                                                                              \
  "strb r9, [r3]\n\t"                                                                                \
  "add r3, r3, r5\n\t"

/* The rows: r0, r3 from the job, per row the blocks of four up to r3 + quad_bytes (the end kept
 * in the job), then the row's last n % 4 outputs (TAIL), then the skips to the next row, until r3
 * is the job's last. */
#define DW_ROWS(BLOCK4, TAIL)                                                                        \
  "push {r4-r11, lr}\n\t"                                                                            \
  "mov lr, r0\n\t"                                                                                   \
  "ldr r1, [lr, #60]\n\t"                                                                            \
  "ldr r0, [lr, #44]\n\t"                                                                            \
  "ldr r3, [lr, #56]\n\t"                                                                            \
  "1:\n\t"                                                                                           \
  "ldr r4, [lr, #64]\n\t"                                                                            \
  "add r4, r3, r4\n\t"                                                                               \
  "str r4, [lr, #76]\n\t"                                                                            \
  "cmp r3, r4\n\t"                                                                                   \
  "beq 3f\n\t"                                                                                       \
  "2:\n\t" BLOCK4 DW_REQ4                                                                            \
  "ldr r4, [lr, #76]\n\t"                                                                            \
  "cmp r3, r4\n\t"                                                                                   \
  "bne 2b\n\t"                                                                                       \
  "3:\n\t" TAIL                                                                                      \
  "5:\n\t"                                                                                           \
  "ldrd r4, r5, [lr, #48]\n\t"                                                                       \
  "add r0, r0, r4\n\t"                                                                               \
  "add r3, r3, r5\n\t"                                                                               \
  "ldr r4, [lr, #68]\n\t"                                                                            \
  "cmp r3, r4\n\t"                                                                                   \
  "bne 1b\n\t"                                                                                       \
  "pop {r4-r11, lr}\n\t"

/* A row's last n % 4 outputs: a pair if n & 2 and a single output if n & 1 (PAIR, SINGLE: the
 * stride's code, each stepping r0 and r3 past what it did); DW_TAIL3 runs n % 4 == 3 as one
 * block of three (TRIPLE) instead. DW_N_FLAGS: n << 31 sets C to n & 2 and Z to !(n & 1), so
 * HI is n % 4 == 3. All fall through to label 5. */
#define DW_N_FLAGS                                                                                   \
  "ldr r4, [lr, #72]\n\t"                                                                            \
  "lsls r4, r4, #31\n\t"
#define DW_PAIR_SINGLE(PAIR, SINGLE)                                                                 \
  "bcc 4f\n\t" PAIR DW_REQ2 DW_N_FLAGS                                                               \
  "4:\n\t"                                                                                           \
  "beq 5f\n\t" SINGLE DW_REQ1
#define DW_TAIL(PAIR, SINGLE) DW_N_FLAGS DW_PAIR_SINGLE(PAIR, SINGLE)
#define DW_TAIL3(TRIPLE, PAIR, SINGLE)                                                               \
  DW_N_FLAGS "bls 6f\n\t" TRIPLE DW_REQ3                                                             \
  "b 5f\n\t"                                                                                         \
  "6:\n\t" DW_PAIR_SINGLE(PAIR, SINGLE)

/* Stride 1. Row 0 of a block starts its accumulators from the bias (r12, overwritten last);
 * rows 1 and 2 accumulate. A block reads A0..A2 (LDM), a pair A0, A1 (LDRD), a single too. */
#define S1_FIRST_ROW(LOAD)                                                                           \
  LOAD DW_WEIGHTS(0) "ldr r12, [lr, #24]\n\t"
#define S1_BLOCK_ROW(K)                                                                              \
  DW_NEXT_ROW(K) "ldm r2, {r4, r5, r6}\n\t" DW_WEIGHTS(K)                                            \
  "smlad r9, r4, r7, r9\n\t"                                                                         \
  "smlatb r10, r4, r7, r10\n\t"                                                                      \
  "smlad r11, r5, r7, r11\n\t"                                                                       \
  "smlatb r12, r5, r7, r12\n\t"                                                                      \
  "smlabb r9, r5, r8, r9\n\t"                                                                        \
  "smladx r10, r5, r8, r10\n\t"                                                                      \
  "smlabb r11, r6, r8, r11\n\t"                                                                      \
  "smladx r12, r6, r8, r12\n\t"
#define S1_BLOCK                                                                                     \
  S1_FIRST_ROW("ldm r0, {r4, r5, r6}\n\t")                                                           \
  "smlad r9, r4, r7, r12\n\t"                                                                        \
  "smlatb r10, r4, r7, r12\n\t"                                                                      \
  "smlad r11, r5, r7, r12\n\t"                                                                       \
  "smlatb r12, r5, r7, r12\n\t"                                                                      \
  "smlabb r9, r5, r8, r9\n\t"                                                                        \
  "smladx r10, r5, r8, r10\n\t"                                                                      \
  "smlabb r11, r6, r8, r11\n\t"                                                                      \
  "smladx r12, r6, r8, r12\n\t" S1_BLOCK_ROW(1) S1_BLOCK_ROW(2) "add r0, r0, #8\n\t"
#define S1_PAIR_ROW(K)                                                                               \
  DW_NEXT_ROW(K) "ldrd r4, r5, [r2]\n\t" DW_WEIGHTS(K)                                               \
  "smlad r9, r4, r7, r9\n\t"                                                                         \
  "smlatb r10, r4, r7, r10\n\t"                                                                      \
  "smlabb r9, r5, r8, r9\n\t"                                                                        \
  "smladx r10, r5, r8, r10\n\t"
#define S1_PAIR                                                                                      \
  S1_FIRST_ROW("ldrd r4, r5, [r0]\n\t")                                                              \
  "smlad r9, r4, r7, r12\n\t"                                                                        \
  "smlatb r10, r4, r7, r12\n\t"                                                                      \
  "smlabb r9, r5, r8, r9\n\t"                                                                        \
  "smladx r10, r5, r8, r10\n\t" S1_PAIR_ROW(1) S1_PAIR_ROW(2) "add r0, r0, #4\n\t"
/* Stride 2: the same shapes; a block reads A0..A4 (LDM, then LDRD), a pair A0..A2. */
#define S2_SINGLE_ROW(K)                                                                             \
  DW_NEXT_ROW(K) "ldrd r4, r5, [r2]\n\t" DW_WEIGHTS(K)                                               \
  "smlad r9, r4, r7, r9\n\t"                                                                         \
  "smlabb r9, r5, r8, r9\n\t"
#define DW_SINGLE(STEP)                                                                              \
  S1_FIRST_ROW("ldrd r4, r5, [r0]\n\t")                                                              \
  "smlad r9, r4, r7, r12\n\t"                                                                        \
  "smlabb r9, r5, r8, r9\n\t" S2_SINGLE_ROW(1) S2_SINGLE_ROW(2) "add r0, r0, #" #STEP "\n\t"
/* Stride 2: the sums of a row's first two outputs (pair, triple and block start alike). */
#define S2_PAIR_ROW(K)                                                                               \
  DW_NEXT_ROW(K) "ldm r2, {r4, r5, r6}\n\t" DW_WEIGHTS(K)                                            \
  "smlad r9, r4, r7, r9\n\t"                                                                         \
  "smlabb r9, r5, r8, r9\n\t"                                                                        \
  "smlad r10, r5, r7, r10\n\t"                                                                       \
  "smlabb r10, r6, r8, r10\n\t"
#define S2_PAIR_FIRST                                                                                \
  S1_FIRST_ROW("ldm r0, {r4, r5, r6}\n\t")                                                           \
  "smlad r9, r4, r7, r12\n\t"                                                                        \
  "smlabb r9, r5, r8, r9\n\t"                                                                        \
  "smlad r10, r5, r7, r12\n\t"                                                                       \
  "smlabb r10, r6, r8, r10\n\t"
#define S2_BLOCK_ROW(K)                                                                              \
  S2_PAIR_ROW(K)                                                                                     \
  "smlad r11, r6, r7, r11\n\t"                                                                       \
  "ldrd r4, r5, [r2, #12]\n\t"                                                                       \
  "smlabb r11, r4, r8, r11\n\t"                                                                      \
  "smlad r12, r4, r7, r12\n\t"                                                                       \
  "smlabb r12, r5, r8, r12\n\t"
#define S2_BLOCK                                                                                     \
  S2_PAIR_FIRST                                                                                      \
  "smlad r11, r6, r7, r12\n\t"                                                                       \
  "ldrd r4, r5, [r0, #12]\n\t"                                                                       \
  "smlabb r11, r4, r8, r11\n\t"                                                                      \
  "smlad r12, r4, r7, r12\n\t"                                                                       \
  "smlabb r12, r5, r8, r12\n\t" S2_BLOCK_ROW(1) S2_BLOCK_ROW(2) "add r0, r0, #16\n\t"
#define S2_PAIR S2_PAIR_FIRST S2_PAIR_ROW(1) S2_PAIR_ROW(2) "add r0, r0, #8\n\t"

/* Stride 2, a row's last three outputs: the block's sums without out3, reading A0..A3 (LDM, LDR). */
#define S2_TRIPLE_ROW(K)                                                                             \
  S2_PAIR_ROW(K)                                                                                     \
  "smlad r11, r6, r7, r11\n\t"                                                                       \
  "ldr r4, [r2, #12]\n\t"                                                                            \
  "smlabb r11, r4, r8, r11\n\t"
#define S2_TRIPLE                                                                                    \
  S2_PAIR_FIRST                                                                                      \
  "smlad r11, r6, r7, r12\n\t"                                                                       \
  "ldr r4, [r0, #12]\n\t"                                                                            \
  "smlabb r11, r4, r8, r11\n\t" S2_TRIPLE_ROW(1) S2_TRIPLE_ROW(2) "add r0, r0, #12\n\t"

/* 3x3 stride 1 (dw3x3_rows_c with stride 1): per 4 outputs 3 LDM, 3 LDRD, 24 multiplies, 24 of
 * requantization and stores, 7 of bias, pointers and loop -- 61 instructions for 36 MACs. */
void ta_dw3x3s1_asm(dw_job *job) {
  register dw_job *j __asm__("r0") = job;
  __asm__ volatile(DW_ROWS(S1_BLOCK, DW_TAIL(S1_PAIR, DW_SINGLE(2))) : "+r"(j) : : "r1", "r2", "r3", "r12", "cc", "memory");
}

/* 3x3 stride 2: per 4 outputs 3 LDM, 6 LDRD, 24 multiplies, as above -- 64 for 36 MACs; a row's
 * last three outputs one block of 3 LDM, 3 LDR, 3 LDRD, 18 multiplies (a pair and a single took
 * two bias loads, two requantizations and their branches). */
void ta_dw3x3s2_asm(dw_job *job) {
  register dw_job *j __asm__("r0") = job;
  __asm__ volatile(DW_ROWS(S2_BLOCK, DW_TAIL3(S2_TRIPLE, S2_PAIR, DW_SINGLE(4))) : "+r"(j) : : "r1", "r2", "r3", "r12", "cc", "memory");
}
#else
/* Nothing here without the DSP extension; ISO C wants a declaration in every translation unit. */
typedef int ta_depthwise_asm_not_compiled;
#endif
