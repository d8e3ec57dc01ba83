/*
 * CONV_2D int8 (TFLite reference_integer_ops::ConvPerChannel semantics):
 *   acc = bias[oc] + sum over taps inside the input of (in + input_offset) * w
 *   out = clamp(multiply_by_quantized_multiplier(acc, mult[oc], shift[oc]) + output_offset, act_min, act_max)
 *
 * This file: the portable path (pixel pairs through a column in scratch), the per-channel records,
 * the scratch size and the entry points, which take a SIMD path when it is compiled and the params
 * have its weights and per-channel records:
 * ta_conv_s8 the int8-weight one (conv_s8w.c, conv_s8w_asm.c), ta_conv_s8_packed16 the
 * int16-weight one (conv_simd.c, conv_asm.c); both share the column builders (conv_im2col.c).
 */
#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_chan_rq.h"
#include "ta_simd.h"
#include "conv_simd.h"
#include "conv_mve.h"

/*
 * The portable path (no DSP extension, or TA_NO_SIMD): the patches of two output pixels, as int32
 * x + input_offset (0 outside the input), interleaved in scratch (col[2k] pixel 0's value k,
 * col[2k+1] pixel 1's: 8 K bytes, within the SIMD column's 8 (round_up(K, 4) + 2)), then per pair
 * of output channels one pass over k: LDRD of both pixels' values, 2 LDRSB weights, 4 MLA -- 7
 * instructions for 4 MACs. The offset is in the column, so the weights stay the int8 ones in flash.
 * Where every channel's requantization is ta_rq4 with the output offset folded in (rq_all_folded,
 * checked once per call) each channel pair's epilogue derives those constants from the multiplier
 * and shift in a few instructions (store_folded; an activation range of all of int8 clamps with one
 * SSAT); otherwise each channel's ta_chan_rq is prepared per pixel pair.
 */

/* The taps of output pixel i inside the input: input row of kernel row 0, input column of tap 0,
 * kernel columns [kx0, kx1) inside the input row. */
typedef struct conv_pix {
  int32_t iy0, ix0, kx0, kx1;
} conv_pix;

static conv_pix pixel_taps(const ta_conv_params *p, int32_t i) {
  const int32_t oy = i / p->out_w, ox = i - oy * p->out_w, kw = p->kernel_w, dw = p->dilation_w;
  conv_pix t;
  t.iy0 = oy * p->stride_h - p->pad_top, t.ix0 = ox * p->stride_w - p->pad_left;
  t.kx0 = 0, t.kx1 = kw;
  while (t.kx0 < kw && t.ix0 + t.kx0 * dw < 0) ++t.kx0;
  while (t.kx1 > t.kx0 && t.ix0 + (t.kx1 - 1) * dw >= p->in_w) --t.kx1;
  return t;
}

/* n values s[c] + off (zeros where s is NULL) into every other word of col. */
static TA_ALWAYS_INLINE void col_run(const int8_t *s, int32_t n, int32_t off, int32_t *col) {
  int32_t c;
  if (!s) {
    for (c = 0; c < n; ++c) col[2 * c] = 0;
  } else {
    for (c = 0; c < n; ++c) col[2 * c] = s[c] + off;
  }
}

/* Zeros for n values: one slot (every other word of col) or both. */
static TA_ALWAYS_INLINE void col_zero(int32_t *col, int32_t n, int both) {
  int32_t *const end = col + 2 * n;
  for (; col < end; col += both ? 1 : 2) *col = 0;
}

/* n values of both pixels (s0, s1) into both slots of col. */
static TA_ALWAYS_INLINE void col_run2(const int8_t *s0, const int8_t *s1, int32_t n, int32_t off, int32_t *col) {
  int32_t *const end = col + 2 * n;
  for (; col < end; col += 2) col[0] = *s0++ + off, col[1] = *s1++ + off;
}

/* Kernel row ky of pixel t into one slot (col: that slot's first word; stride 2 words), or of both
 * pixels when `u` is given (then t and u have the same taps in this row, col: slot 0). */
static void kernel_row(const ta_conv_params *p, const int8_t *input, int32_t in_row_stride, int32_t in_pix_stride,
                       const conv_pix *t, const conv_pix *u, int32_t ky, int32_t *col) {
  const int32_t in_c = p->in_c, kw = p->kernel_w, dw = p->dilation_w, off = p->input_offset;
  const int32_t iy = t->iy0 + ky * p->dilation_h;
  const int8_t *row = input + iy * in_row_stride, *row_u = u ? input + (u->iy0 + ky * p->dilation_h) * in_row_stride : 0;
  int32_t kx;
  if (iy < 0 || iy >= p->in_h) {
    col_zero(col, kw * in_c, u != 0);
    return;
  }
  col_zero(col, t->kx0 * in_c, u != 0);
  col += 2 * t->kx0 * in_c;
  if (in_pix_stride == in_c && dw == 1) { /* the taps inside: one run of bytes */
    const int32_t n = (t->kx1 - t->kx0) * in_c;
    const int8_t *s = row + (t->ix0 + t->kx0) * in_pix_stride;
    if (u) col_run2(s, row_u + (u->ix0 + u->kx0) * in_pix_stride, n, off, col);
    else col_run(s, n, off, col);
    col += 2 * n;
  } else {
    for (kx = t->kx0; kx < t->kx1; ++kx, col += 2 * in_c) {
      const int8_t *s = row + (t->ix0 + kx * dw) * in_pix_stride;
      if (u) col_run2(s, row_u + (u->ix0 + kx * dw) * in_pix_stride, in_c, off, col);
      else col_run(s, in_c, off, col);
    }
  }
  col_zero(col, (kw - t->kx1) * in_c, u != 0);
}

/* The patches of output pixels i and j into slots 0 and 1 of col (padding 0): kernel rows where
 * both pixels have the same taps inside the input are built together. */
TA_NOINLINE static void column_pair(const ta_conv_params *p, const int8_t *input, int32_t in_row_stride,
                                    int32_t in_pix_stride, int32_t i, int32_t j, int32_t *col) {
  const conv_pix t = pixel_taps(p, i), u = pixel_taps(p, j);
  const int32_t step = 2 * p->kernel_w * p->in_c, same_x = t.kx0 == u.kx0 && t.kx1 == u.kx1;
  int32_t ky;
  for (ky = 0; ky < p->kernel_h; ++ky, col += step) {
    const int32_t iy = t.iy0 + ky * p->dilation_h, iy_u = u.iy0 + ky * p->dilation_h;
    if (same_x && (iy >= 0 && iy < p->in_h) == (iy_u >= 0 && iy_u < p->in_h)) {
      kernel_row(p, input, in_row_stride, in_pix_stride, &t, &u, ky, col);
    } else {
      kernel_row(p, input, in_row_stride, in_pix_stride, &t, 0, ky, col);
      kernel_row(p, input, in_row_stride, in_pix_stride, &u, 0, ky, col + 1);
    }
  }
}

/* Whether every channel's requantization is ta_rq4 with the output offset folded in. */
static int rq_all_folded(const ta_conv_params *p) {
  int32_t oc;
  for (oc = 0; oc < p->out_c; ++oc) {
    const ta_rq4 q = ta_rq4_prep(p->out_mult[oc], p->out_shift[oc], p->output_offset);
    if (q.rs < 0 || q.oo != 0) return 0;
  }
  return 1;
}

/* Channel oc's outputs at accumulators x0, x1 where rq_all_folded(p): ta_rq4_prep's constants
 * (a dead channel, m = 0, as shift -2) from the multiplier and shift. */
static TA_ALWAYS_INLINE void store_folded(const ta_conv_params *p, int32_t oc, int32_t x0, int32_t x1, int8_t *o0,
                                          int8_t *o1, int full) {
  ta_rq4 q;
  q.m = p->out_mult[oc];
  q.rs = q.m != 0 ? -p->out_shift[oc] - 1 : 1;
  q.c_hi = (int32_t)(1u << (q.rs - 1)) + (int32_t)((uint32_t)p->output_offset << q.rs);
  q.oo = 0;
  if (full) { /* the int8 range: one SSAT */
    o0[oc] = (int8_t)ta_sat8(ta_rq4_apply(q, x0));
    o1[oc] = (int8_t)ta_sat8(ta_rq4_apply(q, x1));
  } else {
    o0[oc] = (int8_t)ta_clamp32(ta_rq4_apply(q, x0), p->act_min, p->act_max);
    o1[oc] = (int8_t)ta_clamp32(ta_rq4_apply(q, x1), p->act_min, p->act_max);
  }
}

/* The same for any channel (ta_chan_rq prepared here). */
TA_NOINLINE static void store_general(const ta_conv_params *p, int32_t oc, int32_t x0, int32_t x1, int8_t *o0,
                                           int8_t *o1) {
  const ta_chan_rq r = ta_chan_rq_prep(p->out_mult[oc], p->out_shift[oc], p->output_offset, p->act_min, p->act_max);
  o0[oc] = ta_chan_rq_apply(&r, x0);
  o1[oc] = ta_chan_rq_apply(&r, x1);
}

/* One k step of the 2x2 block: pixels' values x0, x1 (col[2t], col[2t + 1]) times the two
 * channels' weights w0[t], w1[t]. */
#define TA_MAC_2X2(t)                                        \
  do {                                                       \
    const int32_t x0 = col[2 * (t)], x1 = col[2 * (t) + 1]; \
    const int32_t u = w0[t], v = w1[t];                      \
    a += x0 * u, b += x1 * u, c += x0 * v, d += x1 * v;      \
  } while (0)

/* Every output channel of the pixel pair whose interleaved columns are `col` (o0, o1: their
 * outputs): per channel pair, four k steps per iteration (31 instructions for 16 MACs on the M3),
 * then single steps; an odd last channel runs as a pair with itself. */
TA_NOINLINE static void gemm_pixel_pair(const ta_conv_params *p, const int32_t *const col0, int32_t k, int8_t *o0,
                                        int8_t *o1, int folded) {
  const int32_t out_c = p->out_c;
  const int32_t *const bias = p->bias, *const end4 = col0 + 2 * (k & ~3), *const end = col0 + 2 * k;
  const int8_t *w = p->weights; /* channel oc's weights */
  int32_t oc;
  for (oc = 0; oc < out_c; oc += 2) {
    const int32_t oc1 = oc + 1 < out_c ? oc + 1 : oc;
    const int8_t *w0 = w, *w1 = oc1 != oc ? w + k : w;
    const int32_t *col = col0;
    int32_t a = bias ? bias[oc] : 0, c = bias ? bias[oc1] : 0, b = a, d = c;
    for (; col < end4; col += 8, w0 += 4, w1 += 4) {
      TA_MAC_2X2(0);
      TA_MAC_2X2(1);
      TA_MAC_2X2(2);
      TA_MAC_2X2(3);
    }
    for (; col < end; col += 2, ++w0, ++w1) TA_MAC_2X2(0);
    w = w1; /* channel oc + 2's */
    /* oc1 first: an odd last channel's pair writes oc's own outputs last */
    if (folded == 2) {
      store_folded(p, oc1, c, d, o0, o1, 1);
      store_folded(p, oc, a, b, o0, o1, 1);
    } else if (folded) {
      store_folded(p, oc1, c, d, o0, o1, 0);
      store_folded(p, oc, a, b, o0, o1, 0);
    } else {
      store_general(p, oc1, c, d, o0, o1);
      store_general(p, oc, a, b, o0, o1);
    }
  }
}
#undef TA_MAC_2X2

static void conv_portable(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                          int32_t *col) {
  const int32_t in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, p->in_c);
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, p->in_w * in_pix_stride);
  const int32_t out_w = p->out_w, k = p->kernel_h * p->kernel_w * p->in_c;
  const int32_t out_pix_stride = TA_OR_DEFAULT(p->out_pix_stride, p->out_c);
  const int32_t out_row_stride = TA_OR_DEFAULT(p->out_row_stride, out_w * out_pix_stride);
  const int32_t last = y1 * out_w - 1;
  /* 2: the folded epilogue with the full int8 range as the activation range */
  const int32_t folded = rq_all_folded(p) ? 1 + (p->act_min <= -128 && p->act_max >= 127) : 0;
  int32_t i;
  for (i = y0 * out_w; i <= last; i += 2) {
    /* an odd last pixel fills both slots (the same outputs are written twice) */
    const int32_t j = i < last ? i + 1 : i;
    int8_t *const o0 = output + (i / out_w) * out_row_stride + (i % out_w) * out_pix_stride;
    int8_t *const o1 = output + (j / out_w) * out_row_stride + (j % out_w) * out_pix_stride;
    column_pair(p, input, in_row_stride, in_pix_stride, i, j, col);
    gemm_pixel_pair(p, col, k, o0, o1, folded);
  }
}

/* Channel oc's requantized output at accumulator x: TFLite's double rounding (single: the
 * TFLITE_SINGLE_ROUNDING form), output offset, activation range; shift <= 0. */
static int32_t channel_out(const ta_conv_params *p, int32_t oc, int32_t x, int single) {
  const int32_t m = p->out_mult[oc], shift = p->out_shift[oc];
  const int32_t y = single ? (int32_t)(((int64_t)x * m + ((int64_t)1 << (30 - shift))) >> (31 - shift))
                           : ta_rounding_divide_by_pot(ta_srdhm(x, m), -shift);
  return ta_clamp_act(y + p->output_offset, p->act_min, p->act_max);
}

int ta_conv_s8_constant_channel(const ta_conv_params *p, int32_t oc, int32_t *value) {
  const int32_t k = p->kernel_h * p->kernel_w * p->in_c, xlo = -128 + p->input_offset, xhi = 127 + p->input_offset;
  const int8_t *const w = p->weights + (size_t)oc * k;
  int64_t lo = p->bias ? p->bias[oc] : 0, hi = lo; /* the accumulator's range (padding adds 0, inside it) */
  int32_t i, v;
  if (p->out_mult[oc] == 0) { /* a dead channel */
    *value = ta_clamp_act(p->output_offset, p->act_min, p->act_max);
    return 1;
  }
  if (p->out_shift[oc] > 0 || p->out_mult[oc] < 0) return 0;
  for (i = 0; i < k; ++i) {
    const int32_t a = xlo * w[i], b = xhi * w[i];
    lo += ta_min32(a, b), hi += ta_max32(a, b);
  }
  if (lo < INT32_MIN || hi > INT32_MAX) return 0;
  /* both roundings are non-decreasing in x (m > 0, no left shift): equal ends, equal everywhere */
  v = channel_out(p, oc, (int32_t)lo, 0);
  if (channel_out(p, oc, (int32_t)hi, 0) != v || channel_out(p, oc, (int32_t)lo, 1) != v ||
      channel_out(p, oc, (int32_t)hi, 1) != v)
    return 0;
  *value = v;
  return 1;
}


void ta_conv_s8_rq_records(const ta_conv_params *p, int32_t *records) {
  conv_ch *const chs = (conv_ch *)(void *)records;
  int32_t oc, value, partner;
  for (oc = 0; oc < p->out_c; ++oc) {
    const int32_t bias = p->bias ? p->bias[oc] : 0;
    const int32_t m = p->out_mult[oc], shift = p->out_shift[oc];
    if (p->packed_doubled && ta_conv_s8_constant_channel(p, oc, &value)) {
      /* zero weights (ta_conv_s8_pack_weights), so the accumulator is the bias word b and with
       * m = 0 and c = 2 value + 1 (odd: r = 1) the output is (c + (b >> 31)) >> 1 = value, for
       * b = 0 as for a constant pair's b = TA_CONSTANT_PAIR */
      const int pair = (oc ^ 1) < p->out_c && ta_conv_s8_constant_channel(p, oc ^ 1, &partner);
      chs[oc].m = 0, chs[oc].c = 2 * value + 1;
      chs[oc].bias = pair ? TA_CONSTANT_PAIR : 0;
    } else if (p->packed_doubled) {
      const ta_rqd q = ta_rqd_prep(m, shift, p->output_offset);
      /* an offset not folded (or no fast form): the general path, which reads the shift in c */
      chs[oc].m = m, chs[oc].c = q.r >= 0 && q.oo == 0 ? q.c : TA_CONV_RQ_GENERAL + shift;
      chs[oc].bias = 2 * bias;
    } else {
      const ta_rq4 q = ta_rq4_prep(m, shift, p->output_offset);
      chs[oc].m = m, chs[oc].c = q.rs >= 0 && q.oo == 0 ? q.c_hi : TA_CONV_RQ_GENERAL + shift;
      chs[oc].bias = bias;
    }
  }
}

size_t ta_conv_s8_scratch_bytes(const ta_conv_params *p) { return ta_conv_col_bytes(p); }

/* Whether this build compiles the portable path: always but in a DSP build without Helium whose
 * generated Makefile set TA_CONV_PORTABLE to 0 (no layer of the model in int8 weights without
 * records: every call takes a SIMD path, as op_params::kernel_variants decides). */
#ifndef TA_CONV_PORTABLE
#define TA_CONV_PORTABLE 1
#endif
#define CONV_PORTABLE (!TA_SIMD || TA_MVE || TA_CONV_PORTABLE)

void ta_conv_s8(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                void *scratch) {
#if TA_MVE
  if (p->packed_s8_weights && p->rq_records && scratch) {
    ta_conv_s8_mve(p, input, output, y0, y1, (int8_t *)scratch);
    return;
  }
  ta_conv_s8_packed16(p, input, output, y0, y1, scratch);
  return;
#elif TA_SIMD
  if (p->packed_s8_weights && p->rq_records && scratch) {
    ta_conv_s8w_simd(p, input, output, y0, y1, (int16_t *)scratch);
    return;
  }
#endif
  if (CONV_PORTABLE && y1 > y0 && p->out_w > 0) conv_portable(p, input, output, y0, y1, (int32_t *)scratch);
}

void ta_conv_s8_packed16(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                         void *scratch) {
#if TA_SIMD
  if (p->packed_weights && p->rq_records && scratch) {
    ta_conv_s8_simd(p, input, output, y0, y1, (int16_t *)scratch);
    return;
  }
#endif
  if (CONV_PORTABLE && y1 > y0 && p->out_w > 0) conv_portable(p, input, output, y0, y1, (int32_t *)scratch);
}
