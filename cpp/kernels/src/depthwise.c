/*
 * DEPTHWISE_CONV_2D int8 (TFLite reference_integer_ops::DepthwiseConvPerChannel semantics):
 *   oc = ic * depth_multiplier + m
 *   acc = bias[oc] + sum over taps inside the input of (in[..][ic] + input_offset) * w[ky][kx][oc]
 *
 * This file: the portable path (direct loops), the portable in-place variant and the scratch
 * sizes; the entry points take the SIMD path (depthwise_simd.c, its assembly in
 * depthwise_asm.c) when it is compiled and the params have packed weights.
 */
#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "depthwise_simd.h"

static inline int8_t rq(const ta_dwconv_params *p, int32_t acc, int32_t oc) {
  return ta_requant_acc(acc, p->out_mult[oc], p->out_shift[oc], p->output_offset, p->act_min, p->act_max);
}

TA_NOINLINE static void dw_portable(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1) {
  const int32_t in_c = p->in_c, dm = p->depth_multiplier, out_c = in_c * dm;
  const int32_t in_h = p->in_h, in_w = p->in_w, kh = p->kernel_h, kw = p->kernel_w, out_w = p->out_w;
  const int32_t in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, in_c);
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, in_w * in_pix_stride);
  const int32_t out_pix_stride = TA_OR_DEFAULT(p->out_pix_stride, out_c);
  const int32_t out_row_stride = TA_OR_DEFAULT(p->out_row_stride, out_w * out_pix_stride);
  const int32_t sh = p->stride_h, sw = p->stride_w, dh = p->dilation_h, dw = p->dilation_w;
  const int32_t in_off = p->input_offset, oo = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int8_t *const weights = p->weights;
  const int32_t *const bias = p->bias, *const mult = p->out_mult, *const shift = p->out_shift;
  int32_t oy, ox, ic, m, ky, kx;
  for (oy = y0; oy < y1; ++oy) {
    const int32_t iy0 = oy * sh - p->pad_top;
    int32_t ky0 = 0, ky1 = kh;
    while (ky0 < kh && iy0 + ky0 * dh < 0) ++ky0;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * dh >= in_h) --ky1;
    for (ox = 0; ox < out_w; ++ox) {
      const int32_t ix0 = ox * sw - p->pad_left;
      int32_t kx0 = 0, kx1 = kw;
      int8_t *const o = output + oy * out_row_stride + ox * out_pix_stride;
      while (kx0 < kw && ix0 + kx0 * dw < 0) ++kx0;
      while (kx1 > kx0 && ix0 + (kx1 - 1) * dw >= in_w) --kx1;
      for (ic = 0; ic < in_c; ++ic) {
        const int8_t *const ib = input + (iy0 + ky0 * dh) * in_row_stride + (ix0 + kx0 * dw) * in_pix_stride + ic;
        for (m = 0; m < dm; ++m) {
          const int32_t oc = ic * dm + m;
          const int8_t *wrow = weights + (ky0 * kw + kx0) * out_c + oc;
          const int8_t *irow = ib;
          int32_t acc = bias ? bias[oc] : 0;
          for (ky = ky0; ky < ky1; ++ky, irow += dh * in_row_stride, wrow += kw * out_c) {
            const int8_t *ip = irow, *wp = wrow;
            for (kx = kx0; kx < kx1; ++kx, ip += dw * in_pix_stride, wp += out_c) acc += (*ip + in_off) * *wp;
          }
          o[oc] = ta_requant_acc(acc, mult[oc], shift[oc], oo, lo, hi);
        }
      }
    }
  }
}

/* SIMD scratch: the int16 plane (+2 slack values, rounded to 4 bytes; 4 of them for
 * small_square layers), then out_w + 1 words the SIMD path also fills with plane rows. */
static size_t plane_bytes(const ta_dwconv_params *p) {
  return (((size_t)plane_rows(p, 0, p->out_h) * (size_t)plane_width(p) + 2) * sizeof(int16_t) + 3) & ~(size_t)3;
}

/* A 3x3, 5x5 or 7x7 layer (dilation 1) whose plane has at most DW_SMALL_PLANE values (a map at
 * most as tall as wide: DW_SMALL_SQUARE) gets room for 4 planes: the SIMD path's group of 4
 * channels, whole, without bands (at most 1,548 bytes more, on the small maps late in a network,
 * where bands cost most per MAC: 3x3 maps up to 12 x 12, 5x5 stride 1 up to 10 x 10; taller
 * maps such as kws's 25 x 5, which run transposed, keep the smaller bound). */
#define DW_SMALL_PLANE 200
#define DW_SMALL_SQUARE 256
static int small_square(const ta_dwconv_params *p) {
  const int32_t k = p->kernel_h;
  const size_t plane = (size_t)plane_rows(p, 0, p->out_h) * (size_t)plane_width(p);
  return k == p->kernel_w && (k == 3 || k == 5 || k == 7) && p->dilation_h == 1 && p->dilation_w == 1 &&
         p->in_c > 1 && (plane <= DW_SMALL_PLANE || (plane <= DW_SMALL_SQUARE && p->out_h <= p->out_w));
}

size_t ta_depthwise_conv_s8_scratch_bytes(const ta_dwconv_params *p) {
  if (p->out_h <= 0 || p->out_w <= 0) return 0;
  return (small_square(p) ? 4 : 1) * plane_bytes(p) + ((size_t)p->out_w + 1) * sizeof(int32_t);
}

size_t ta_depthwise_conv_s8_inplace_scratch_bytes(const ta_dwconv_params *p) {
  const size_t simd = ta_depthwise_conv_s8_scratch_bytes(p);
  const size_t plain = ((size_t)p->in_h * (size_t)p->in_w + 3) & ~(size_t)3;
  return simd > plain ? simd : plain;
}

void ta_depthwise_conv_s8(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                          void *scratch) {
#if TA_SIMD
  if (p->packed_weights && scratch && y1 > y0) {
    ta_depthwise_conv_s8_simd(p, input, output, y0, y1, scratch, ta_depthwise_conv_s8_scratch_bytes(p));
    return;
  }
#else
  (void)scratch;
#endif
  dw_portable(p, input, output, y0, y1);
}

/* Portable in place: per channel the plane is copied to scratch as int8, then the channel's
 * outputs are written over the buffer. */
TA_NOINLINE static void dw_inplace_portable(const ta_dwconv_params *p, int8_t *buf, void *scratch) {
  const int32_t C = p->in_c, in_h = p->in_h, in_w = p->in_w;
  int8_t *plane = (int8_t *)scratch;
  int32_t c, oy, ox, ky, kx, i;
  for (c = 0; c < C; ++c) {
    const int32_t bias = p->bias ? p->bias[c] : 0;
    for (i = 0; i < in_h * in_w; ++i) plane[i] = buf[i * C + c];
    for (oy = 0; oy < p->out_h; ++oy) {
      const int32_t iy0 = oy * p->stride_h - p->pad_top;
      for (ox = 0; ox < p->out_w; ++ox) {
        const int32_t ix0 = ox * p->stride_w - p->pad_left;
        int32_t acc = 0;
        for (ky = 0; ky < p->kernel_h; ++ky) {
          const int32_t iy = iy0 + ky * p->dilation_h;
          if (iy < 0 || iy >= in_h) continue;
          for (kx = 0; kx < p->kernel_w; ++kx) {
            const int32_t ix = ix0 + kx * p->dilation_w;
            if (ix < 0 || ix >= in_w) continue;
            acc += (plane[iy * in_w + ix] + p->input_offset) * p->weights[(ky * p->kernel_w + kx) * C + c];
          }
        }
        buf[(oy * p->out_w + ox) * C + c] = rq(p, acc + bias, c);
      }
    }
  }
}

void ta_depthwise_conv_s8_inplace(const ta_dwconv_params *p, int8_t *buf, void *scratch) {
#if TA_SIMD
  if (p->packed_weights) {
    ta_depthwise_conv_s8_inplace_simd(p, buf, scratch, ta_depthwise_conv_s8_inplace_scratch_bytes(p));
    return;
  }
#endif
  dw_inplace_portable(p, buf, scratch);
}
