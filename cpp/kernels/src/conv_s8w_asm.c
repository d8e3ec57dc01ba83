/*
 * CONV_2D on int8 weights, the channel loops of doubled layers in Cortex-M DSP assembly
 * (conv_s8w.c picks them; built on a core with the DSP extension in an optimised build, else
 * conv_s8w.c runs the same loop in C). One naked function per unrolling, all registers its own:
 *   r0..r7  accumulators: pixel 0 in r2 (channel 0), r3 (channel 1), pixel 1 in r4, r5, pixel 2
 *           in r6, r7, pixel 3 in r0, r1 (TA_S8W_ACC_INDEX)
 *   r8      weights (TA_PACKED_S8), r9 column, r10/r11 the two widened weight words, r12/lr inputs
 * and the job's fields (ta_s8w_job, conv_simd.h) on the stack. Per SIMD word: LDR, 2 SXTB16, 2 LDRD,
 * 8 SMLAD (13 instructions for 16 MACs); a pair's first word starts the accumulators from the
 * biases (TA_S8W_FIRST_STEP), then the loop, 8 words per pass, runs until the next slot-0 word is
 * TA_COL_END_MARK (CMP/BNE per 8 words), entered past the steps the remaining word count (nwords
 * - 1, at least 1: nwords is even) does not fill (LDR PC of an address the prologue computes).
 * Per channel pair then per channel LDRD of m, c and RBIT + CLZ of c (r - 1: conv_ch_r), per
 * output ADD, SMMLAR, ASR, SSAT (ta_rqd; the last 1 of r shifted in SSAT), one LDM of records,
 * o0 and d1..d3, and per pixel BFI + STRH of both channels; a constant pair (bias
 * TA_CONSTANT_PAIR) stores its two values c >> 1 and steps over its (zero) weights.
 * Invariant: the bytes equal conv_s8w.c's gemm_4px_doubled.
 */
#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "conv_simd.h"

#if TA_S8W_ASM
/* One SIMD word: weights of both channels widened, 8 SMLAD, the next word's slots 0 and 1 loaded.
 * ACC0 / ACC1: what channel 0 / 1 of each pixel adds to (the accumulators themselves, or the biases
 * r0, r1 in a pair's first word, where pixel 3's accumulators r0, r1 come last). */
#define TA_S8W_STEP_FROM(P0C0, P0C1, P1C0, P1C1, P2C0, P2C1) \
  "ldr r11, [r8], #4\n\t"              \
  "sxtb16 r10, r11\n\t"                \
  "sxtb16 r11, r11, ror #8\n\t"        \
  "smlad r2, r10, r12, " P0C0 "\n\t"   \
  "smlad r3, r11, r12, " P0C1 "\n\t"   \
  "smlad r4, r10, lr, " P1C0 "\n\t"    \
  "smlad r5, r11, lr, " P1C1 "\n\t"    \
  "ldrd r12, lr, [r9, #8]\n\t"         \
  "smlad r6, r10, r12, " P2C0 "\n\t"   \
  "smlad r7, r11, r12, " P2C1 "\n\t"   \
  "smlad r0, r10, lr, r0\n\t"          \
  "smlad r1, r11, lr, r1\n\t"          \
  "ldrd r12, lr, [r9, #16]!\n\t"
#define TA_S8W_STEP TA_S8W_STEP_FROM("r2", "r3", "r4", "r5", "r6", "r7")
/* The pair's first SIMD word, the biases in r0 (channel 0) and r1 (channel 1). */
#define TA_S8W_FIRST_STEP TA_S8W_STEP_FROM("r0", "r1", "r0", "r1", "r0", "r1")

/* Accumulator X requantized (ta_rqd: m in r10, c in r11, r - 1 in lr; (y >> (r - 1)) >> 1 is
 * y >> r) and saturated, in place. */
#define TA_S8W_RQD(X)                  \
  "add r12, r11, " X ", asr #31\n\t"   \
  "smmlar r12, " X ", r10, r12\n\t"    \
  "asr r12, r12, lr\n\t"               \
  "ssat " X ", #8, r12, asr #1\n\t"

/* A channel's m, c (r10, r11) from its record at r9 + OFFSET, and r - 1 (c's trailing zeros) in lr. */
#define TA_S8W_RECORD(OFFSET)          \
  "ldrd r10, r11, [r9, #" OFFSET "]\n\t" \
  "rbit lr, r11\n\t"                   \
  "clz lr, lr\n\t"

/* A pixel's two outputs (channel 0 in X, channel 1 in Y) as one halfword at o0 (r10) + D. */
#define TA_S8W_STORE(X, Y, D)          \
  "bfi " X ", " Y ", #8, #8\n\t"       \
  "strh " X ", [r10, " D "]\n\t"

#define TA_S8W_STEPS4 TA_S8W_STEP TA_S8W_STEP TA_S8W_STEP TA_S8W_STEP

/* The frame below the saved registers: records [sp] and o0 [sp, #4] (stored per pair), d1..d3
 * [sp, #8..16], col [sp, #20], the MAC loop's entry address [sp, #24] (Thumb bit set), end
 * [sp, #28], pair_bytes [sp, #32]. A record (conv_ch) is m, c, bias: a pair's biases at [r9, #8]
 * and [r9, #20], its m, c at [r9] and [r9, #12]. Between pairs r8 holds the weights, r9 the
 * records, r10 o0. The MAC loop's first pass starts job->entry bytes into its 8 steps (each
 * step 13 32-bit instructions, TA_S8W_STEP_BYTES). */
__attribute__((naked)) void ta_conv_s8w_gemm_doubled(const ta_s8w_job *job __attribute__((unused))) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "ldm r0, {r1-r10}\n\t" /* wp, ch, o0, d1, d2, d3, col, entry, end, pair_bytes */
      "adr.w r11, 2f\n\t"
      "add r8, r8, r11\n\t"
      "orr r8, r8, #1\n\t"
      "push {r2-r10}\n\t"
      "mov r8, r1\n\t"
      "mov r9, r2\n\t"
      "mov r10, r3\n\t"
      "1:\n\t" /* channel pair: r9 its records, r8 its weights, r10 o0 */
      "ldr r0, [r9, #8]\n\t"
      "cmp r0, #0x80000000\n\t"
      "beq 3f\n\t"
      "ldr r1, [r9, #20]\n\t"
      "strd r9, r10, [sp]\n\t"
      "ldr r9, [sp, #20]\n\t"
      "ldrd r12, lr, [r9]\n\t" TA_S8W_FIRST_STEP
      "ldr pc, [sp, #24]\n\t"
      ".p2align 2\n\t"
      "2:\n\t" TA_S8W_STEPS4 TA_S8W_STEPS4
      "cmp r12, #0x80008000\n\t"
      "bne 2b\n\t"
      "ldr r9, [sp]\n\t"
        TA_S8W_RECORD("0") TA_S8W_RQD("r2") TA_S8W_RQD("r4") TA_S8W_RQD("r6") TA_S8W_RQD("r0")
        TA_S8W_RECORD("12") TA_S8W_RQD("r3") TA_S8W_RQD("r5") TA_S8W_RQD("r7") TA_S8W_RQD("r1")
      "ldm sp, {r9-r12, lr}\n\t" /* records, o0, d1, d2, d3 */
        TA_S8W_STORE("r4", "r5", "r11") TA_S8W_STORE("r6", "r7", "r12") TA_S8W_STORE("r0", "r1", "lr")
      "bfi r2, r3, #8, #8\n\t"
      "strh r2, [r10], #2\n\t" /* pixel 0 last: o0 steps to the next pair */
      "4:\n\t" /* next pair: r9 records, r10 o0 */
      "ldr r12, [sp, #28]\n\t"
      "adds r9, r9, #24\n\t"
      "cmp r9, r12\n\t"
      "bne 1b\n\t"
      "add sp, sp, #36\n\t"
      "pop {r4-r11, pc}\n\t"
      "3:\n\t" /* constant pair: r9 records, r10 o0 */
      "ldr r0, [r9, #4]\n\t"
      "asr r0, r0, #1\n\t"
      "ldr r1, [r9, #16]\n\t"
      "asr r1, r1, #1\n\t"
      "bfi r0, r1, #8, #8\n\t"
      "ldrd r11, r12, [sp, #8]\n\t"
      "strh r0, [r10, r11]\n\t"
      "strh r0, [r10, r12]\n\t"
      "ldr r11, [sp, #16]\n\t"
      "strh r0, [r10, r11]\n\t"
      "strh r0, [r10], #2\n\t"
      "ldr r11, [sp, #32]\n\t"
      "add r8, r8, r11\n\t"
      "b 4b\n\t");
}

/* The MAC loop alone, for the C channel loop (any records, any activation range):
 * acc[TA_S8W_ACC_INDEX(j, c)] (pixel j, channel c) += the pair's products; returns the weights
 * past the pair's. */
__attribute__((naked)) const int8_t *ta_conv_s8w_mac(int32_t *acc __attribute__((unused)),
                                                     const int8_t *wp __attribute__((unused)),
                                                     const ta_i32a *col __attribute__((unused))) {
  __asm__ volatile("push {r0, r4-r11, lr}\n\t"
                   "mov r8, r1\n\t"
                   "mov r9, r2\n\t"
                   "ldm r0, {r0-r7}\n\t"
                   "ldrd r12, lr, [r9]\n\t"
                   "2:\n\t" TA_S8W_STEP TA_S8W_STEP
                   "cmp r12, #0x80008000\n\t"
                   "bne 2b\n\t"
                   "ldr r9, [sp]\n\t"
                   "stm r9, {r0-r7}\n\t"
                   "mov r0, r8\n\t"
                   "pop {r1, r4-r11, pc}\n\t");
}

#else
/* Nothing here without the assembly; ISO C wants a declaration in every translation unit. */
typedef int ta_conv_s8w_asm_not_compiled;
#endif
