/*
 * CONV_2D int8 (TFLite reference_integer_ops::ConvPerChannel semantics):
 *   acc = bias[oc] + sum over taps inside the input of (in + input_offset) * w
 *   out = clamp(multiply_by_quantized_multiplier(acc, mult[oc], shift[oc]) + output_offset, act_min, act_max)
 *
 * This file: the portable path (direct loops), the per-channel records, the scratch size and the
 * entry points, which take a SIMD path when it is compiled and the params have its weights and
 * per-channel records:
 * ta_conv_s8 the int8-weight one (conv_s8w.c, conv_s8w_asm.c), ta_conv_s8_packed16 the
 * int16-weight one (conv_simd.c, conv_asm.c); both share the column builders (conv_im2col.c).
 */
#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "conv_simd.h"

/* acc + sum (x[i] + off) * w[i]: the portable inner loop, out of line to keep it in registers. */
TA_NOINLINE static int32_t dot_s8(const int8_t *x, const int8_t *w, int32_t n, int32_t off, int32_t acc) {
  const int8_t *const end = x + n;
  while (x < end) acc += (*x++ + off) * *w++;
  return acc;
}

static void conv_portable(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1) {
  const int32_t in_c = p->in_c, in_h = p->in_h, in_w = p->in_w, kh = p->kernel_h, kw = p->kernel_w;
  const int32_t in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, in_c);
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, in_w * in_pix_stride);
  const int32_t out_c = p->out_c, out_w = p->out_w;
  const int32_t out_pix_stride = TA_OR_DEFAULT(p->out_pix_stride, out_c);
  const int32_t out_row_stride = TA_OR_DEFAULT(p->out_row_stride, out_w * out_pix_stride);
  const int32_t sh = p->stride_h, sw = p->stride_w, dh = p->dilation_h, dw = p->dilation_w;
  const int32_t pt = p->pad_top, pl = p->pad_left;
  const int32_t in_off = p->input_offset, oo = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int8_t *const weights = p->weights;
  const int32_t *const bias = p->bias, *const mult = p->out_mult, *const shift = p->out_shift;
  /* A run of taps along x is one contiguous span of input and weights when pixels are dense and
   * the kernel is not dilated along x. */
  const int dense_x = in_pix_stride == in_c && dw == 1;
  int32_t oy, ox, oc, ky, kx;
  for (oy = y0; oy < y1; ++oy) {
    const int32_t iy0 = oy * sh - pt;
    for (ox = 0; ox < out_w; ++ox) {
      const int32_t ix0 = ox * sw - pl;
      /* taps inside the input: kx in [kx0, kx1) */
      int32_t kx0 = 0, kx1 = kw;
      int8_t *const o = output + oy * out_row_stride + ox * out_pix_stride;
      while (kx0 < kw && ix0 + kx0 * dw < 0) ++kx0;
      while (kx1 > kx0 && ix0 + (kx1 - 1) * dw >= in_w) --kx1;
      for (oc = 0; oc < out_c; ++oc) {
        const int8_t *const wc = weights + (size_t)oc * kh * kw * in_c;
        int32_t acc = bias ? bias[oc] : 0;
        for (ky = 0; ky < kh; ++ky) {
          const int32_t iy = iy0 + ky * dh;
          if (iy < 0 || iy >= in_h) continue;
          if (dense_x) {
            const int8_t *ip = input + iy * in_row_stride + (ix0 + kx0) * in_pix_stride;
            const int8_t *wp = wc + (ky * kw + kx0) * in_c;
            acc = dot_s8(ip, wp, (kx1 - kx0) * in_c, in_off, acc);
          } else {
            for (kx = kx0; kx < kx1; ++kx) {
              const int8_t *ip = input + iy * in_row_stride + (ix0 + kx * dw) * in_pix_stride;
              acc = dot_s8(ip, wc + (ky * kw + kx) * in_c, in_c, in_off, acc);
            }
          }
        }
        o[oc] = ta_requant_acc(acc, mult[oc], shift[oc], oo, lo, hi);
      }
    }
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

void ta_conv_s8(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                void *scratch) {
#if TA_KERNELS_HELIUM
  ta_conv_s8_packed16(p, input, output, y0, y1, scratch);
  return;
#elif TA_SIMD
  if (p->packed_s8_weights && p->rq_records && scratch) {
    ta_conv_s8w_simd(p, input, output, y0, y1, (int16_t *)scratch);
    return;
  }
#else
  (void)scratch;
#endif
  conv_portable(p, input, output, y0, y1);
}

void ta_conv_s8_packed16(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                         void *scratch) {
#if TA_SIMD
  if (p->packed_weights && p->rq_records && scratch) {
    ta_conv_s8_simd(p, input, output, y0, y1, (int16_t *)scratch);
    return;
  }
#else
  (void)scratch;
#endif
  conv_portable(p, input, output, y0, y1);
}
