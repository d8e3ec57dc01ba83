/*
 * CONV_2D, the SIMD path on packed int16 weights (see conv.c for the semantics; int8 weights:
 * conv_s8w.c): for each pair of output pixels the two input patches are widened to int16
 * (offset added, padding = 0) into an interleaved column buffer (conv_im2col.c); the inner
 * loop then computes 2 output channels x 2 pixels with 4 SMLADs per SIMD word (one LDRD of
 * weights, one LDRD of inputs). The MAC loop and the rq4 stores are a few lines of
 * inline assembly on a DSP core; the whole-pair loops of doubled layers are in conv_asm.c.
 * Invariant: every path gives the bytes of the portable one.
 */
#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "conv_simd.h"

#if TA_SIMD
/* 2 output channels x 2 pixels, x words [xp, xend) (2 per k word): the hot loop.
 * On a real DSP core it is written in assembly: per 4 k values 2+2 LDRD (post-increment) and
 * 8 SMLAD, plus CMP/BNE once per 4 (0.875 instructions per MAC) or, when K is a multiple of 8,
 * once per 8 k values (0.8125). */
static inline void mac_2x2(const ta_i32a **pw, const ta_i32a *xp, const ta_i32a *xend, int32_t *a00, int32_t *a01,
                           int32_t *a10, int32_t *a11) {
  const ta_i32a *wp = *pw;
#if TA_CONV_MVE
  /* Helium: per 8 k values VLD2 separates the channels' and the pixels' interleaved words and
   * four VMLADAVA add 8 products each (0.125 instructions/MAC); the last 4 words (K % 8 == 4)
   * take the C loop below. Same int32 sums as SMLAD, so the same bytes. */
  int32_t b00 = *a00, b01 = *a01, b10 = *a10, b11 = *a11;
  for (; xend - xp >= 8; wp += 8, xp += 8) {
    const int32x4x2_t w = vld2q_s32((const int32_t *)wp), x = vld2q_s32((const int32_t *)xp);
    const int16x8_t w0 = vreinterpretq_s16_s32(w.val[0]), w1 = vreinterpretq_s16_s32(w.val[1]);
    const int16x8_t x0 = vreinterpretq_s16_s32(x.val[0]), x1 = vreinterpretq_s16_s32(x.val[1]);
    b00 = vmladavaq_s16(b00, w0, x0);
    b01 = vmladavaq_s16(b01, w0, x1);
    b10 = vmladavaq_s16(b10, w1, x0);
    b11 = vmladavaq_s16(b11, w1, x1);
  }
  for (; xp < xend; wp += 4, xp += 4) {
    b00 = ta_smlad(wp[2], xp[2], ta_smlad(wp[0], xp[0], b00));
    b01 = ta_smlad(wp[2], xp[3], ta_smlad(wp[0], xp[1], b01));
    b10 = ta_smlad(wp[3], xp[2], ta_smlad(wp[1], xp[0], b10));
    b11 = ta_smlad(wp[3], xp[3], ta_smlad(wp[1], xp[1], b11));
  }
  *a00 = b00;
  *a01 = b01;
  *a10 = b10;
  *a11 = b11;
#elif TA_SIMD_NATIVE
/* The loop over [xp, xend) with the step repeated (STEPS): operands shared by both variants. */
#define TA_MAC_2X2_LOOP(STEPS)                                                                          \
  do {                                                                                                 \
    int32_t w0, w1, x0, x1;                                                                            \
    __asm__ volatile("1:\n\t" STEPS "cmp %[xp], %[xe]\n\tbne 1b\n\t"                                  \
                     : [a00] "+r"(*a00), [a01] "+r"(*a01), [a10] "+r"(*a10), [a11] "+r"(*a11), [wp] "+r"(wp), \
                       [xp] "+r"(xp), [w0] "=&r"(w0), [w1] "=&r"(w1), [x0] "=&r"(x0), [x1] "=&r"(x1)      \
                     : [xe] "r"(xend)                                                                  \
                     : "cc", "memory");                                                                \
  } while (0)
  if (xp < xend && ((xend - xp) & 7) == 0) /* 8 k values per iteration: 0.8125 instructions/MAC */
    TA_MAC_2X2_LOOP(TA_MAC_2X2_STEP TA_MAC_2X2_STEP TA_MAC_2X2_STEP TA_MAC_2X2_STEP);
  else if (xp < xend)
    TA_MAC_2X2_LOOP(TA_MAC_2X2_STEP TA_MAC_2X2_STEP);
#else
  int32_t b00 = *a00, b01 = *a01, b10 = *a10, b11 = *a11;
  while (xp < xend) {
    int32_t w0 = wp[0], w1 = wp[1], x0 = xp[0], x1 = xp[1];
    b00 = ta_smlad(w0, x0, b00);
    b01 = ta_smlad(w0, x1, b01);
    b10 = ta_smlad(w1, x0, b10);
    b11 = ta_smlad(w1, x1, b11);
    w0 = wp[2], w1 = wp[3], x0 = xp[2], x1 = xp[3];
    b00 = ta_smlad(w0, x0, b00);
    b01 = ta_smlad(w0, x1, b01);
    b10 = ta_smlad(w1, x0, b10);
    b11 = ta_smlad(w1, x1, b11);
    wp += 4;
    xp += 4;
  }
  *a00 = b00;
  *a01 = b01;
  *a10 = b10;
  *a11 = b11;
#endif
  *pw = wp;
}

/* Every output channel of the two pixels in the column buffer (o1 == NULL: one pixel); chs
 * holds one conv_ch per channel (the bias, and the output offset folded in). */
TA_INLINE void gemm_2px(const ta_i32a *wp, const ta_i32a *col, int32_t nwords, const ta_conv_params *p,
                        const conv_ch *ch, int32_t lo, int32_t hi, int full, int8_t *restrict o0, int8_t *restrict o1) {
  const ta_i32a *const col_end = col + 2 * nwords;
  const int32_t out_c = p->out_c, oo = p->output_offset, dbl = p->packed_doubled;
  int32_t oc;
  for (oc = 0; oc + 2 <= out_c; oc += 2) {
    int32_t a00 = ch[oc].bias, a01 = a00, a10 = ch[oc + 1].bias, a11 = a10; /* a<channel><pixel> */
    mac_2x2(&wp, col, col_end, &a00, &a01, &a10, &a11);
    o0[oc] = conv_out(&ch[oc], a00, oo, lo, hi, full, dbl);
    o0[oc + 1] = conv_out(&ch[oc + 1], a10, oo, lo, hi, full, dbl);
    if (o1) {
      o1[oc] = conv_out(&ch[oc], a01, oo, lo, hi, full, dbl);
      o1[oc + 1] = conv_out(&ch[oc + 1], a11, oo, lo, hi, full, dbl);
    }
  }
  if (oc < out_c) { /* odd last channel: one weight word per k step */
    int32_t a0 = ch[oc].bias, a1 = a0, t;
    for (t = 0; t < nwords; ++t) {
      a0 = ta_smlad(wp[t], col[2 * t], a0);
      a1 = ta_smlad(wp[t], col[2 * t + 1], a1);
    }
    o0[oc] = conv_out(&ch[oc], a0, oo, lo, hi, full, dbl);
    if (o1) o1[oc] = conv_out(&ch[oc], a1, oo, lo, hi, full, dbl);
  }
}

/* One value of rq4_store_pair: lo, hi scratch; m, c the channel's constants, rs - 1 in rs
 * ((y >> (rs - 1)) >> 1 is y >> rs, the last shift in SSAT). */
#define TA_RQ4_STEP(X, D)                            \
  "and %[lo], %[" X "], #0x80000000\n\t"            \
  "orr %[lo], %[lo], #0x40000000\n\t"               \
  "add %[hi], %[c], %[" X "], asr #31\n\t"          \
  "smlal %[lo], %[hi], %[" X "], %[m]\n\t"          \
  "asr %[hi], %[hi], %[rs]\n\t"                     \
  "ssat %[hi], #8, %[hi], asr #1\n\t"               \
  "strb %[hi], [%[" D "]]\n\t"

/* o[d1] = ta_ssat8(conv_ch_rq4(ch, x1)), then o[0] likewise from x0 (d1 may be 0: the second
 * store wins). LDRD of the channel's constants and RBIT + CLZ of c (rs - 1: conv_ch_r), then AND,
 * ORR, ADD, SMLAL, ASR, SSAT, STRB per value. */
TA_INLINE void rq4_store_pair(const conv_ch *ch, int32_t x0, int32_t x1, int8_t *o, int32_t d1) {
#if TA_SIMD_NATIVE && defined(__OPTIMIZE__)
  int32_t m, c_hi, rs, lo, hi;
  __asm__ volatile("ldrd %[m], %[c], [%[q]]\n\t"
                   "rbit %[rs], %[c]\n\t"
                   "clz %[rs], %[rs]\n\t" TA_RQ4_STEP("x1", "o], %[d1") TA_RQ4_STEP("x0", "o")
                   : [m] "=&r"(m), [c] "=&r"(c_hi), [rs] "=&r"(rs), [lo] "=&r"(lo), [hi] "=&r"(hi)
                   : [q] "r"(ch), [x0] "r"(x0), [x1] "r"(x1), [o] "r"(o), [d1] "r"(d1)
                   : "memory");
#else
  o[d1] = (int8_t)ta_ssat8(conv_ch_rq4(ch, x1));
  o[0] = (int8_t)ta_ssat8(conv_ch_rq4(ch, x0));
#endif
}

/* The channel loops conv_simd picks from, out of line so that each owns the registers: the
 * fast loop and the general loop for a full int8 and for a clamped activation range. */
#define TA_GEMM_LOOP(NAME, BODY)                                                                     \
  static TA_NOINLINE void NAME(const ta_conv_params *p, const ta_i32a *col, int32_t nwords, const conv_ch *chs, \
                               int8_t *o0, int8_t *o1) {                                            \
    BODY;                                                                                            \
  }

/* gemm_2px when the activation range is all of int8 and every channel has the fast form, with
 * an even number of channels: no per-channel test, and a single pixel (o1 == NULL)
 * is computed as two with the second written first over the same outputs. The bias sits in
 * each channel's record (conv_ch), so the loop walks one array. */
static TA_NOINLINE void gemm_2px_fast(const ta_conv_params *p, const ta_i32a *col, int32_t nwords, const conv_ch *ch,
                                      int8_t *o0, int8_t *o1) {
  const ta_i32a *wp = (const ta_i32a *)p->packed_weights;
  const ta_i32a *const col_end = col + 2 * nwords;
  const conv_ch *const end = ch + p->out_c;
  const int32_t d1 = o1 ? (int32_t)(o1 - o0) : 0;
  for (; ch < end; o0 += 2, ch += 2) {
    int32_t a00 = ch[0].bias, a01 = a00, a10 = ch[1].bias, a11 = a10; /* a<channel><pixel> */
    mac_2x2(&wp, col, col_end, &a00, &a01, &a10, &a11);
    rq4_store_pair(&ch[0], a00, a01, o0, d1);
    rq4_store_pair(&ch[1], a10, a11, o0 + 1, d1);
  }
}

TA_GEMM_LOOP(gemm_2px_full, gemm_2px((const ta_i32a *)p->packed_weights, col, nwords, p, chs, -128, 127, 1, o0, o1))
TA_GEMM_LOOP(gemm_2px_clamped, gemm_2px((const ta_i32a *)p->packed_weights, col, nwords, p, chs, p->act_min,
                                        p->act_max, 0, o0, o1))

/* One value of gemm_2px_doubled's assembly: x1 = ssat8((SMMLAR(X, m, c + (X >> 31))) >> r) stored
 * at STORE, with w0 = m, w1 = c, x0 = r (the MAC loop's registers, free by then). */
/* Without the assembly: gemm_2px_doubled's loop in C (constant pairs tested in every variant). */
#if !TA_CONV_ASM_LOOPS
static TA_NOINLINE void gemm_2px_doubled8(const ta_conv_params *p, const ta_i32a *col, int32_t nwords,
                                          const conv_ch *ch, int8_t *o0, int8_t *o1) {
  const ta_i32a *wp = (const ta_i32a *)p->packed_weights, *const col_end = col + 2 * nwords;
  const conv_ch *const end = ch + p->out_c;
  for (; ch < end; o0 += 2, o1 += 2, ch += 2) {
    int32_t a00 = ch[0].bias, a01 = a00, a10 = ch[1].bias, a11 = a10; /* a<channel><pixel> */
    if (a00 == TA_CONSTANT_PAIR) { /* as the _skip variants */
      o0[0] = o1[0] = (int8_t)(ch[0].c >> 1);
      o0[1] = o1[1] = (int8_t)(ch[1].c >> 1);
      wp += 2 * nwords;
      continue;
    }
    mac_2x2(&wp, col, col_end, &a00, &a01, &a10, &a11);
    o0[0] = (int8_t)ta_ssat8(conv_ch_rqd(&ch[0], a00));
    o1[0] = (int8_t)ta_ssat8(conv_ch_rqd(&ch[0], a01));
    o0[1] = (int8_t)ta_ssat8(conv_ch_rqd(&ch[1], a10));
    o1[1] = (int8_t)ta_ssat8(conv_ch_rqd(&ch[1], a11));
  }
}
#define ta_conv_gemm_2px_doubled8 gemm_2px_doubled8
#define ta_conv_gemm_2px_doubled4 gemm_2px_doubled8
#define ta_conv_gemm_2px_doubled8_skip gemm_2px_doubled8
#define ta_conv_gemm_2px_doubled4_skip gemm_2px_doubled8
#endif

void ta_conv_s8_simd(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                     int16_t *col) {
  const int32_t in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, p->in_c);
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, p->in_w * in_pix_stride);
  const int32_t out_pix_stride = TA_OR_DEFAULT(p->out_pix_stride, p->out_c);
  const int32_t out_row_stride = TA_OR_DEFAULT(p->out_row_stride, p->out_w * out_pix_stride);
  const int32_t nwords = ((p->kernel_h * p->kernel_w * p->in_c + 3) & ~3) >> 1; /* SIMD words per pixel, even */
  const int32_t out_c = p->out_c, out_w = p->out_w;
  const int full = p->act_min == -128 && p->act_max == 127;
  const conv_ch *const chs = (const conv_ch *)(const void *)p->rq_records;
  int32_t oy, ox, oc;
  const int doubled = p->packed_doubled != 0;
  int all_fast = full && (out_c & 1) == 0, constant_pairs = 0;
  /* 1x1 over whole SIMD words, every tap inside the input: both pixels widen in one pass */
  const int pointwise_inside = p->kernel_h == 1 && p->kernel_w == 1 && (p->in_c & 3) == 0 && p->pad_top == 0 &&
                               p->pad_left == 0 && (p->out_h - 1) * p->stride_h < p->in_h &&
                               (out_w - 1) * p->stride_w < p->in_w;
  /* patches gathered as bytes, both pixels of a pair then widened in one pass */
  const int small_patch =
      !(p->kernel_h == 1 && p->kernel_w == 1) && p->kernel_h * p->kernel_w * p->in_c <= TA_SMALL_PATCH;
  const ta_col_geom g = {in_row_stride, in_pix_stride, p->input_offset, TA_COL_SLOTS_S16, 0};
  gemm_loop *gemm, *gemm1; /* for two pixels (a doubled fast loop: also one pixel twice), for one */
  for (oc = 0; oc < out_c; ++oc) {
    all_fast &= rq_usable(&chs[oc], doubled);
    constant_pairs |= doubled && chs[oc].bias == TA_CONSTANT_PAIR;
  }
  gemm1 = full ? gemm_2px_full : gemm_2px_clamped;
  if (all_fast && doubled)
    gemm = constant_pairs      ? ((nwords & 3) == 0 ? ta_conv_gemm_2px_doubled8_skip : ta_conv_gemm_2px_doubled4_skip)
           : (nwords & 3) == 0 ? ta_conv_gemm_2px_doubled8
                               : ta_conv_gemm_2px_doubled4;
  else
    gemm1 = gemm = all_fast ? gemm_2px_fast : gemm1;
  /* pixels in row-major order, two at a time (a pair may span two rows) */
  for (oy = y0, ox = 0; oy < y1;) {
    const int32_t oy1 = ox + 1 < out_w ? oy : oy + 1, ox1 = ox + 1 < out_w ? ox + 1 : 0;
    const int two = oy1 < y1, twin = !two && gemm != gemm1; /* a lone pixel in both slots */
    if (two && pointwise_inside) {
      ta_conv_widen_pair(input + (oy * p->stride_h) * in_row_stride + (ox * p->stride_w) * in_pix_stride,
                         input + (oy1 * p->stride_h) * in_row_stride + (ox1 * p->stride_w) * in_pix_stride, p->in_c,
                         col, 0, &g);
    } else if (two && small_patch) {
      ta_conv_small_patch_pair(p, input, &g, oy, ox, oy1, ox1, col, 0);
    } else if (TA_CONV_COL_PIXEL) { /* always compiled where this path runs (conv_simd.h) */
      ta_conv_im2col_pixel(p, input, &g, oy, ox, col, 0);
      if (two || twin) ta_conv_im2col_pixel(p, input, &g, two ? oy1 : oy, two ? ox1 : ox, col, 1);
    } else {
      TA_FAMILY_MISSING();
    }
    (two || twin ? gemm : gemm1)(p, (const ta_i32a *)col, nwords, chs,
                                 output + oy * out_row_stride + ox * out_pix_stride,
                                 two    ? output + oy1 * out_row_stride + ox1 * out_pix_stride
                                 : twin ? output + oy * out_row_stride + ox * out_pix_stride
                                        : NULL);
    oy = oy1 + (ox1 + 1 < out_w ? 0 : 1);
    ox = ox1 + 1 < out_w ? ox1 + 1 : 0;
  }
}
#else
/* Nothing here without the SIMD path; ISO C wants a declaration in every translation unit. */
typedef int ta_conv_simd_not_compiled;
#endif
