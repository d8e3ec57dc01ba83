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
 * instructions for 4 MACs. The offset is in the column, so the weights stay the int8 ones in flash;
 * each channel's requantization is prepared once per pixel pair (ta_chan_rq).
 */

/* Pixel (oy, ox)'s patch into every other word of col (padding 0). */
static void column_pixel(const ta_conv_params *p, const int8_t *input, int32_t in_row_stride, int32_t in_pix_stride,
                         int32_t oy, int32_t ox, int32_t *col) {
  const int32_t in_c = p->in_c, kw = p->kernel_w, off = p->input_offset;
  const int32_t iy0 = oy * p->stride_h - p->pad_top, ix0 = ox * p->stride_w - p->pad_left;
  int32_t ky, kx, c;
  for (ky = 0; ky < p->kernel_h; ++ky) {
    const int32_t iy = iy0 + ky * p->dilation_h;
    for (kx = 0; kx < kw; ++kx, col += 2 * in_c) {
      const int32_t ix = ix0 + kx * p->dilation_w;
      if (iy < 0 || iy >= p->in_h || ix < 0 || ix >= p->in_w) {
        for (c = 0; c < in_c; ++c) col[2 * c] = 0;
      } else {
        const int8_t *const src = input + iy * in_row_stride + ix * in_pix_stride;
        for (c = 0; c < in_c; ++c) col[2 * c] = src[c] + off;
      }
    }
  }
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
 * outputs): per channel pair, four k steps per iteration (33 instructions for 16 MACs on the M3),
 * then single steps; an odd last channel runs as a pair with itself. */
TA_NOINLINE static void gemm_pixel_pair(const ta_conv_params *p, const int32_t *const col0, int32_t k, int8_t *o0,
                                        int8_t *o1) {
  const int32_t out_c = p->out_c, k4 = k & ~3;
  int32_t oc;
  for (oc = 0; oc < out_c; oc += 2) {
    const int32_t oc1 = oc + 1 < out_c ? oc + 1 : oc;
    const int8_t *w0 = p->weights + (size_t)oc * k, *w1 = p->weights + (size_t)oc1 * k;
    const int32_t *col = col0, *const end4 = col0 + 2 * k4, *const end = col0 + 2 * k;
    int32_t a = p->bias ? p->bias[oc] : 0, c = p->bias ? p->bias[oc1] : 0, b = a, d = c;
    ta_chan_rq r;
    for (; col < end4; col += 8, w0 += 4, w1 += 4) {
      TA_MAC_2X2(0);
      TA_MAC_2X2(1);
      TA_MAC_2X2(2);
      TA_MAC_2X2(3);
    }
    for (; col < end; col += 2, ++w0, ++w1) TA_MAC_2X2(0);
    r = ta_chan_rq_prep(p->out_mult[oc1], p->out_shift[oc1], p->output_offset, p->act_min, p->act_max);
    o0[oc1] = ta_chan_rq_apply(&r, c);
    o1[oc1] = ta_chan_rq_apply(&r, d);
    r = ta_chan_rq_prep(p->out_mult[oc], p->out_shift[oc], p->output_offset, p->act_min, p->act_max);
    o0[oc] = ta_chan_rq_apply(&r, a);
    o1[oc] = ta_chan_rq_apply(&r, b);
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
  int32_t i;
  for (i = y0 * out_w; i <= last; i += 2) {
    /* an odd last pixel fills both slots (the same outputs are written twice) */
    const int32_t j = i < last ? i + 1 : i;
    column_pixel(p, input, in_row_stride, in_pix_stride, i / out_w, i % out_w, col);
    column_pixel(p, input, in_row_stride, in_pix_stride, j / out_w, j % out_w, col + 1);
    gemm_pixel_pair(p, col, k, output + (i / out_w) * out_row_stride + (i % out_w) * out_pix_stride,
                    output + (j / out_w) * out_row_stride + (j % out_w) * out_pix_stride);
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
       * m = 0 the output is (c + (b >> 31)) >> 1: the value for b = 0 and c = 2 value, or for a
       * constant pair b = TA_CONSTANT_PAIR and c = 2 value + 1 */
      const int pair = (oc ^ 1) < p->out_c && ta_conv_s8_constant_channel(p, oc ^ 1, &partner);
      chs[oc].m = 0, chs[oc].c = 2 * value + pair, chs[oc].r = 1;
      chs[oc].bias = pair ? TA_CONSTANT_PAIR : 0;
    } else if (p->packed_doubled) {
      const ta_rqd q = ta_rqd_prep(m, shift, p->output_offset);
      chs[oc].m = m, chs[oc].r = q.oo == 0 ? q.r : -1; /* an offset not folded: the general path */
      chs[oc].c = chs[oc].r >= 0 ? q.c : shift;        /* which reads the shift there (conv_ch_shift) */
      chs[oc].bias = 2 * bias;
    } else {
      const ta_rq4 q = ta_rq4_prep(m, shift, p->output_offset);
      chs[oc].m = m, chs[oc].r = q.oo == 0 ? q.rs : -1;
      chs[oc].c = chs[oc].r >= 0 ? q.c_hi : shift;
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
