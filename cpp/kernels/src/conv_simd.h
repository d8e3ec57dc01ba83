/*
 * Internal to CONV_2D (conv.c, conv_simd.c, conv_asm.c): the per-channel record the SIMD loops
 * read, the column buffer's size, and the entry points of the SIMD path and of its assembly
 * channel loops. Invariant: a record is TA_CONV_RQ_WORDS int32, so the generator's constant
 * arrays read as conv_ch.
 */
#ifndef TA_CONV_SIMD_H
#define TA_CONV_SIMD_H

#include "tinyarena_kernels.h"
#include "ta_simd.h"

/* A channel's constants for the SIMD loops: requantization and bias (one array for the loop);
 * TA_CONV_RQ_WORDS int32, so a const int32_t array from the generator reads as conv_ch. With
 * doubled packed weights the accumulators are 2x: the bias is doubled and `rqd` is used. */
typedef struct conv_ch {
  union {
    ta_rq4 rq4; /* packed_doubled == 0 */
    ta_rqd rqd; /* packed_doubled == 1 */
  } q;
  int32_t bias;
} conv_ch;
typedef char conv_ch_is_rq_words[sizeof(conv_ch) == TA_CONV_RQ_WORDS * sizeof(int32_t) ? 1 : -1];

/* In a doubled layer, the bias word of both channels of a pair whose outputs are both constant:
 * the fast loop skips such pairs (a live channel's doubled bias is above -2^31). */
#define TA_CONSTANT_PAIR INT32_MIN

/* Scratch of the SIMD path: a column buffer of 2 pixels x Kq int16 (Kq = K rounded up to a
 * multiple of 4), followed by the per-channel records unless the caller passes them. */
static inline size_t ta_conv_col_bytes(const ta_conv_params *p) {
  const int32_t k = p->kernel_h * p->kernel_w * p->in_c;
  return (size_t)((k + 3) & ~3) * 2 * sizeof(int16_t);
}

#if TA_SIMD
/* The SIMD path (conv_simd.c): packed weights, `col` the scratch. */
void ta_conv_s8_simd(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                     int16_t *col);

/* The channel loops: every output channel of the two pixels in the column buffer. */
typedef void gemm_loop(const ta_conv_params *p, const ta_i32a *col, int32_t nwords, const conv_ch *chs, int8_t *o0,
                       int8_t *o1);
#endif

/* Helium (MVE, Cortex-M55): the 2x2 MAC loop runs on vectors, and doubled layers take the C
 * channel loop around it instead of the fused SMLAD assembly. */
#if TA_SIMD_NATIVE && defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#define TA_CONV_MVE 1
#else
#define TA_CONV_MVE 0
#endif

/* The assembly channel loops (conv_asm.c) exist on a DSP core without Helium in optimised builds. */
#if TA_SIMD_NATIVE && defined(__OPTIMIZE__) && !TA_CONV_MVE
#define TA_CONV_ASM_LOOPS 1
gemm_loop ta_conv_gemm_2px_doubled8, ta_conv_gemm_2px_doubled4, ta_conv_gemm_2px_doubled8_skip,
    ta_conv_gemm_2px_doubled4_skip;
#else
#define TA_CONV_ASM_LOOPS 0
#endif

#if TA_SIMD_NATIVE
/* One step of the 2x2 MAC loop: 2 channels x 2 pixels over 2 k words, 2 LDRD and 4 SMLAD. */
#define TA_MAC_2X2_STEP                               \
  "ldrd %[w0], %[w1], [%[wp]], #8\n\t"               \
  "ldrd %[x0], %[x1], [%[xp]], #8\n\t"               \
  "smlad %[a00], %[w0], %[x0], %[a00]\n\t"           \
  "smlad %[a01], %[w0], %[x1], %[a01]\n\t"           \
  "smlad %[a10], %[w1], %[x0], %[a10]\n\t"           \
  "smlad %[a11], %[w1], %[x1], %[a11]\n\t"
#endif

#endif /* TA_CONV_SIMD_H */
