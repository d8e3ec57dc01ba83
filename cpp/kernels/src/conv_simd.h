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
 * TA_CONV_RQ_WORDS int32, so a const int32_t array from the generator reads as conv_ch. m, c are
 * ta_rqd's m, c when packed_doubled (the accumulators are then 2x and the bias doubled), else
 * ta_rq4's m, c_hi, always with the output offset folded into c; the right shift is not stored
 * but read off c (conv_ch_r). A channel whose offset cannot be folded (ta_*_prep's oo != 0), or
 * whose multiplier has no fast form, has c = TA_CONV_RQ_GENERAL + its shift (the general
 * requantization, conv_out). */
typedef struct conv_ch {
  int32_t m, c;
  int32_t bias;
} conv_ch;
typedef char conv_ch_is_rq_words[sizeof(conv_ch) == TA_CONV_RQ_WORDS * sizeof(int32_t) ? 1 : -1];

/* Trailing zero bits of x != 0: RBIT + CLZ on ARMv7-M. */
static inline int32_t ta_ctz32(uint32_t x) {
#if defined(__GNUC__)
  return __builtin_ctz(x);
#else
  int32_t n = 0;
  while (!(x & 1u)) x >>= 1, ++n;
  return n;
#endif
}

/* A fast record's right shift (ta_rqd's r, ta_rq4's rs; both >= 1): c's lowest set bit is bit
 * r - 1, since c = 2^(r-1) + (offset << r) (a doubled constant channel's c = 2 value + 1: r = 1). */
static inline int32_t conv_ch_r(const conv_ch *ch) { return ta_ctz32((uint32_t)ch->c) + 1; }

/* In a doubled layer, the bias word of both channels of a pair whose outputs are both constant:
 * the fast loop skips such pairs (a live channel's doubled bias is above -2^31). */
#define TA_CONSTANT_PAIR INT32_MIN

/* Pixel slots of the column buffer: 2 with int16 weights (2 channels x 2 pixels per MAC step),
 * 4 with int8 weights (2 channels x 4 pixels, so each widened weight word serves 4 pixels). */
#define TA_COL_SLOTS_S16 2
#define TA_COL_SLOTS_S8 4

/* The int8-weight column ends with one word group (TA_COL_SLOTS_S8 words) holding this
 * value: no column word can (|value| <= 510), so the MAC loop stops on it (conv_s8w_asm.c). */
#define TA_COL_END_MARK ((int32_t)0x80008000u)

/* Scratch of the SIMD paths: a column buffer of slots x Kq int16 (Kq = K rounded up to a
 * multiple of 4). Its size is the int8 layout's (4 slots and the end group) for either layout, so
 * that a plan's scratch does not depend on the layout the generator picks. */
static inline size_t ta_conv_col_bytes(const ta_conv_params *p) {
  const size_t kq = (size_t)((p->kernel_h * p->kernel_w * p->in_c + 3) & ~3);
  return (kq + 2) * TA_COL_SLOTS_S8 * sizeof(int16_t); /* the int8 layout's; the int16 one uses less */
}

/* Small patches (first layers: few channels, so short unaligned runs; at most this many values)
 * are gathered as bytes first, then widened in one aligned span. */
#define TA_SMALL_PATCH 64

/* The SIMD paths' variant families (set to 0 by the generated Makefile when no layer of the model
 * reaches them, so --gc-sections drops their code; op_params::kernel_variants decides from the
 * same conditions; unset, a family is compiled). Unlike the portable path's, these have no more
 * general family to hand a layer on to: a family is left out only when no call can reach it.
 * TA_CONV_COL_PIXEL: the one-pixel column builder (ta_conv_im2col_pixel; conv_s8w.c's
 * COLUMN_PIXEL layers, and every int16-weight layer: conv_simd.c's odd pixels).
 * TA_CONV_S8W_GENERAL: conv_s8w.c's loop for the layers the doubled loops do not take
 * (doubled_loop_fits; every layer with TA_SINGLE_ROUNDING, so it is always compiled there). */
#ifndef TA_CONV_COL_PIXEL
#define TA_CONV_COL_PIXEL 1
#endif
/* A call into a family compiled out means op_params::kernel_variants and the kernels disagree:
 * stop there (a fault the harness reports) rather than return wrong bytes. */
#define TA_FAMILY_MISSING() __builtin_trap()
#if !defined(TA_CONV_S8W_GENERAL) || (defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING)
#undef TA_CONV_S8W_GENERAL
#define TA_CONV_S8W_GENERAL 1
#endif

/* What the column builders (conv_im2col.c) need besides the params: input strides, slots per
 * word group, and whether values are doubled (int8 weights of a doubled layer). */
typedef struct ta_col_geom {
  int32_t in_row_stride, in_pix_stride;
  int32_t input_offset;
  int32_t ns;  /* slots */
  int32_t dbl; /* 1: 2 (x + offset) */
} ta_col_geom;

/* Value k of slot s sits at this int16 of the column: word t = ta_gemm_word(k) of slot s is
 * int32 ns * t + s. */
static inline int32_t ta_col_index(int32_t k, int32_t slot, int32_t ns) {
  return 2 * (ns * ta_gemm_word(k) + slot) + ta_gemm_half(k);
}

#if TA_SIMD
/* v saturated to int8 (full: the activation range is all of int8) or clamped to [lo, hi]. */
TA_INLINE int32_t conv_act(int32_t v, int32_t lo, int32_t hi, int full) {
  return full ? ta_ssat8(v) : ta_clamp_act(v, lo, hi);
}

/* Whether a channel takes its fast form (TA_CONV_RQ_IS_FAST), and the build uses TFLite's double
 * rounding (records made on the host always assume it); a doubled layer's constant channels
 * (m = 0) take it in every build. */
TA_INLINE int rq_usable(const conv_ch *ch, int doubled) {
  if (doubled && ch->m == 0) return 1; /* a constant channel: exact in either rounding */
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  return 0;
#else
  return TA_CONV_RQ_IS_FAST(ch->c);
#endif
}

/* The fast forms on a record (the output offset folded in). */
TA_INLINE int32_t conv_ch_rqd(const conv_ch *ch, int32_t doubled_acc) {
  const ta_rqd q = {ch->m, ch->c, conv_ch_r(ch), 0};
  return ta_rqd_apply(q, doubled_acc);
}
TA_INLINE int32_t conv_ch_rq4(const conv_ch *ch, int32_t acc) {
  const ta_rq4 q = {ch->m, ch->c, conv_ch_r(ch), 0};
  return ta_rq4_apply(q, acc);
}

/* The channel's TFLite shift, from its record alone (the SIMD paths read no out_mult /
 * out_shift; the record keeps the multiplier m): -r (ta_rqd) or -(r + 1) (ta_rq4) where the fast
 * form applies, else c - TA_CONV_RQ_GENERAL (ta_conv_s8_rq_records). */
TA_INLINE int32_t conv_ch_shift(const conv_ch *ch, int doubled) {
  if (!TA_CONV_RQ_IS_FAST(ch->c)) return ch->c - TA_CONV_RQ_GENERAL;
  return doubled ? -conv_ch_r(ch) : -(conv_ch_r(ch) + 1);
}

/* acc (doubled: 2x the accumulator) requantized, offset added and limited to the activation
 * range: the channel's fast form when it can use it (rq_usable), else
 * ta_multiply_by_quantized_multiplier with the record's multiplier and shift. */
TA_INLINE int8_t conv_out(const conv_ch *ch, int32_t acc, int32_t oo, int32_t lo, int32_t hi, int full,
                          int doubled) {
  int32_t v;
  if (rq_usable(ch, doubled))
    v = doubled ? conv_ch_rqd(ch, acc) : conv_ch_rq4(ch, acc);
  else
    v = ta_offset_clamp(ta_multiply_by_quantized_multiplier(doubled ? acc >> 1 : acc, ch->m, conv_ch_shift(ch, doubled)),
                        oo, lo, hi);
  return (int8_t)conv_act(v, lo, hi, full);
}

/* The SIMD paths, `col` the scratch: int16 weights (conv_simd.c), int8 weights (conv_s8w.c). */
void ta_conv_s8_simd(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                     int16_t *col);
void ta_conv_s8w_simd(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                      int16_t *col);

/* The column builders (conv_im2col.c). The patch of output pixel (oy, ox) into slot `slot`: */
void ta_conv_im2col_pixel(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g, int32_t oy, int32_t ox,
                          int16_t *col, int32_t slot);
/* n (a multiple of 4) values of two pixels at s0 and s1 into slots slot and slot + 1 in one pass
 * (pointwise layers; per 4 values two loads and four SXTB16 + SADD16): */
void ta_conv_widen_pair(const int8_t *s0, const int8_t *s1, int32_t n, int16_t *col, int32_t slot,
                        const ta_col_geom *g);
/* n (a multiple of 4, > 0) values of the 4 pixels at s0 + j step (j = 0..3) into slots 0..3 (int8
 * weights, TA_COL_SLOTS_S8) in one pass where the column is doubled (per 4 values of the 4 pixels
 * 4 loads, 8 SXTAB16 + 8 SADD16, 4 STRD), else as two ta_conv_widen_pair: */
void ta_conv_widen_quad(const int8_t *s0, int32_t step, int32_t n, int16_t *col, const ta_col_geom *g);
/* The small patches (TA_SMALL_PATCH) of output pixels (oy, ox) and (oy1, ox1) gathered as bytes
 * then widened into slots slot and slot + 1 in one pass; out of line, so that its buffers are
 * not on the stack below the other calls. */
void ta_conv_small_patch_pair(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g, int32_t oy,
                              int32_t ox, int32_t oy1, int32_t ox1, int16_t *col, int32_t slot);

/* The same for the 4 pixels (py[j], px[j]) into slots 0..3 (int8 weights, TA_COL_SLOTS_S8), widened
 * in one pass (ta_conv_widen_quad); out of line for the same reason. */
void ta_conv_small_patch_quad(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g, const int32_t py[4],
                              const int32_t px[4], int16_t *col);

/* The channel loops: every output channel of the two pixels in the column buffer. */
typedef void gemm_loop(const ta_conv_params *p, const ta_i32a *col, int32_t nwords, const conv_ch *chs, int8_t *o0,
                       int8_t *o1);
#endif

#if TA_SIMD
/* One call of the int8-weight channel loops (conv_s8w.c, conv_s8w_asm.c): every channel pair
 * [ch, end) of the 4 pixels in the column, outputs at o0 + dj for pixel j (d0 = 0). The assembly
 * loads the fields in this order with one LDM (wp 0, ch 4, o0 8, d1 12, d2 16, d3 20, col 24,
 * entry 28, end 32, pair_bytes 36: bytes of weights per channel pair, 4 per SIMD word; entry:
 * bytes of its MAC loop's 8 steps the first pass skips, TA_S8W_STEP_BYTES per word of
 * 8 - (nwords - 1) % 8, the first word running before the loop). */
typedef struct ta_s8w_job {
  const int8_t *wp;
  const conv_ch *ch;
  int8_t *o0;
  int32_t d1, d2, d3;
  const ta_i32a *col;
  int32_t entry;
  const conv_ch *end;
  int32_t pair_bytes;
} ta_s8w_job;
typedef char ta_s8w_job_is_40_bytes[sizeof(ta_s8w_job) == 40 || sizeof(void *) != 4 ? 1 : -1];
/* Bytes of one step (one SIMD word) of the assembly MAC loop: 13 32-bit instructions. */
#define TA_S8W_STEP_BYTES 52
#endif

/* The int8-weight assembly channel loop (conv_s8w_asm.c) of doubled layers whose channels all
 * take ta_rqd, an even channel count and a full int8 range: 8 SIMD words per loop test, the first
 * pass entered job->entry bytes in. On a DSP core (Helium cores too) in optimised builds. */
#if TA_SIMD_NATIVE && defined(__OPTIMIZE__)
#define TA_S8W_ASM 1
void ta_conv_s8w_gemm_doubled(const ta_s8w_job *job);
const int8_t *ta_conv_s8w_mac(int32_t *acc, const int8_t *wp, const ta_i32a *col);
/* Where the assembly keeps pixel j's channel c (ta_conv_s8w_mac's acc[]): pixel 0 in r2, r3 ..
 * pixel 3 in r0, r1 (a pair's first word adds pixel 3 last to the biases in r0, r1). */
#define TA_S8W_ACC_INDEX(j, c) (2 * (((j) + 1) & 3) + (c))
#else
#define TA_S8W_ASM 0
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
