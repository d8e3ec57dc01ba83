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

/* A 3x3, 5x5 or 7x7 layer (dilation 1) whose plane has at most DW_SMALL_PLANE values gets room
 * for 4 planes: the SIMD path's group of 4 channels, whole, without bands (at most 1,200 bytes
 * more, on the small maps late in a network, where bands cost most per MAC). */
#define DW_SMALL_PLANE 200
static int small_square(const ta_dwconv_params *p) {
  const int32_t k = p->kernel_h;
  return k == p->kernel_w && (k == 3 || k == 5 || k == 7) && p->dilation_h == 1 && p->dilation_w == 1 &&
         p->in_c > 1 && (size_t)plane_rows(p, 0, p->out_h) * (size_t)plane_width(p) <= DW_SMALL_PLANE;
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

/*
 * The portable plane path (scratch given): per input channel its padded plane of x + input_offset
 * (0 outside the input) as int16 in scratch -- the rows the output rows [y0, y1) read, width
 * (out_w - 1) * stride_w + (kernel_w - 1) * dilation_w + 1, within the SIMD plane's room -- then
 * per output channel 4 outputs of a row at a time: each input value loaded once per kernel row
 * serves every output of the 4 that reads it (3x3 stride 1: 6 loads, 3 weights, 12 MLA a kernel
 * row), requantized with ta_rq4 (five instructions) where its range allows.
 */
typedef struct dw_plane {
  const int16_t *x; /* plane row of output row y0's first kernel row */
  int32_t width, row_step; /* values per plane row; plane values between output rows */
} dw_plane;

/* Channel ic's plane (rows from input row y0 * stride_h - pad_top on) into `plane`. */
static void fill_plane(const ta_dwconv_params *p, const int8_t *input, int32_t ic, int32_t y0, int32_t y1,
                       int32_t width, int16_t *plane) {
  const int32_t in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, p->in_c);
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, p->in_w * in_pix_stride);
  const int32_t rows = plane_rows(p, y0, y1), iy0 = y0 * p->stride_h - p->pad_top, off = p->input_offset;
  const int32_t x0 = ta_clamp32(p->pad_left, 0, width), x1 = ta_clamp32(p->pad_left + p->in_w, x0, width);
  int32_t r, i;
  for (r = 0; r < rows; ++r, plane += width) {
    const int32_t iy = iy0 + r;
    if (iy < 0 || iy >= p->in_h) {
      for (i = 0; i < width; ++i) plane[i] = 0;
    } else {
      const int8_t *src = input + iy * in_row_stride + (x0 - p->pad_left) * in_pix_stride + ic;
      for (i = 0; i < x0; ++i) plane[i] = 0;
      for (; i < x1; ++i, src += in_pix_stride) plane[i] = (int16_t)(*src + off);
      for (; i < width; ++i) plane[i] = 0;
    }
  }
}

/* An output channel's requantization: ta_rq4 when q.rs >= 0, else the general form. */
typedef struct dw_rq {
  ta_rq4 q;
  int32_t m, shift, oo, lo, hi;
} dw_rq;

TA_NOINLINE static int8_t dw_requant_general(const dw_rq *r, int32_t acc) {
  return ta_requant_acc(acc, r->m, r->shift, r->oo, r->lo, r->hi);
}

static TA_ALWAYS_INLINE int8_t dw_requant(const dw_rq *r, int32_t acc) {
  return r->q.rs >= 0 ? (int8_t)ta_clamp32(ta_rq4_apply(r->q, acc), r->lo, r->hi) : dw_requant_general(r, acc);
}

/* One output at plane position x (its first tap): taps (ky, kx) at x + ky * dh * width + kx * dw,
 * weights w[(ky * kw + kx) * w_stride]. */
static int32_t dw_single(const ta_dwconv_params *p, const int16_t *x, int32_t width, const int8_t *w,
                         int32_t w_stride, int32_t acc) {
  int32_t ky, kx;
  for (ky = 0; ky < p->kernel_h; ++ky, x += p->dilation_h * width)
    for (kx = 0; kx < p->kernel_w; ++kx, w += w_stride) acc += x[kx * p->dilation_w] * *w;
  return acc;
}

/* a[0..3] += the 3-tap kernel row w dotted at x, x + S, x + 2S, x + 3S (S = 1 or 2). */
static TA_ALWAYS_INLINE void row3(const int16_t *x, const int32_t *w, int32_t S, int32_t *a) {
  const int32_t w0 = w[0], w1 = w[1], w2 = w[2];
  int32_t j, v;
  if (S == 1) {
    v = x[0], a[0] += v * w0;
    v = x[1], a[0] += v * w1, a[1] += v * w0;
    v = x[2], a[0] += v * w2, a[1] += v * w1, a[2] += v * w0;
    v = x[3], a[1] += v * w2, a[2] += v * w1, a[3] += v * w0;
    v = x[4], a[2] += v * w2, a[3] += v * w1;
    v = x[5], a[3] += v * w2;
  } else {
    for (j = 0; j < 4; ++j) {
      a[j] += x[2 * j] * w0 + x[2 * j + 1] * w1;
      if (j > 0) a[j - 1] += x[2 * j] * w2;
    }
    a[3] += x[8] * w2;
  }
}

/* A row of outputs of one 3x3 channel (stride S, dilation 1): 4 at a time, the rest one by one. */
static TA_ALWAYS_INLINE void row_3x3(const ta_dwconv_params *p, const int16_t *x, int32_t width, const int32_t *w,
                                    const int8_t *wc, int32_t w_stride, int32_t bias, const dw_rq *r, int8_t *o,
                                    int32_t o_stride, int32_t S) {
  int32_t ox = 0;
  for (; ox + 4 <= p->out_w; ox += 4, x += 4 * S, o += 4 * o_stride) {
    int32_t a[4];
    a[0] = a[1] = a[2] = a[3] = bias;
    row3(x, w, S, a);
    row3(x + width, w + 3, S, a);
    row3(x + 2 * width, w + 6, S, a);
    o[0] = dw_requant(r, a[0]), o[o_stride] = dw_requant(r, a[1]);
    o[2 * o_stride] = dw_requant(r, a[2]), o[3 * o_stride] = dw_requant(r, a[3]);
  }
  for (; ox < p->out_w; ++ox, x += S, o += o_stride) *o = dw_requant(r, dw_single(p, x, width, wc, w_stride, bias));
}

TA_NOINLINE static void rows_3x3_s1(const ta_dwconv_params *p, const dw_plane *pl, int32_t rows, const int32_t *w,
                                    const int8_t *wc, int32_t bias, const dw_rq *r, int8_t *o, int32_t o_row,
                                    int32_t o_pix) {
  int32_t y;
  for (y = 0; y < rows; ++y)
    row_3x3(p, pl->x + y * pl->row_step, pl->width, w, wc, p->in_c * p->depth_multiplier, bias, r, o + y * o_row, o_pix, 1);
}

TA_NOINLINE static void rows_3x3_s2(const ta_dwconv_params *p, const dw_plane *pl, int32_t rows, const int32_t *w,
                                    const int8_t *wc, int32_t bias, const dw_rq *r, int8_t *o, int32_t o_row,
                                    int32_t o_pix) {
  int32_t y;
  for (y = 0; y < rows; ++y)
    row_3x3(p, pl->x + y * pl->row_step, pl->width, w, wc, p->in_c * p->depth_multiplier, bias, r, o + y * o_row, o_pix, 2);
}

/* Any other kernel: one output at a time. */
TA_NOINLINE static void rows_any(const ta_dwconv_params *p, const dw_plane *pl, int32_t rows, const int8_t *wc,
                                 int32_t bias, const dw_rq *r, int8_t *o, int32_t o_row, int32_t o_pix) {
  const int32_t w_stride = p->in_c * p->depth_multiplier;
  int32_t y, ox;
  for (y = 0; y < rows; ++y)
    for (ox = 0; ox < p->out_w; ++ox)
      o[y * o_row + ox * o_pix] =
          dw_requant(r, dw_single(p, pl->x + y * pl->row_step + ox * p->stride_w, pl->width, wc, w_stride, bias));
}

/* Output rows [y0, y1) through the plane in `scratch`; `output` may be `input` (in place: dense,
 * multiplier 1, each channel's plane is taken before that channel is written). */
static void dw_planes(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                      int16_t *scratch) {
  const int32_t dm = p->depth_multiplier, out_c = p->in_c * dm;
  const int32_t out_pix_stride = TA_OR_DEFAULT(p->out_pix_stride, out_c);
  const int32_t out_row_stride = TA_OR_DEFAULT(p->out_row_stride, p->out_w * out_pix_stride);
  const int fast3 = p->kernel_h == 3 && p->kernel_w == 3 && p->dilation_h == 1 && p->dilation_w == 1 &&
                    (p->stride_w == 1 || p->stride_w == 2);
  dw_plane pl;
  int32_t ic, m, t;
  pl.x = scratch;
  pl.width = (p->out_w - 1) * p->stride_w + (p->kernel_w - 1) * p->dilation_w + 1;
  pl.row_step = p->stride_h * pl.width;
  for (ic = 0; ic < p->in_c; ++ic) {
    fill_plane(p, input, ic, y0, y1, pl.width, scratch);
    for (m = 0; m < dm; ++m) {
      const int32_t oc = ic * dm + m, bias = p->bias ? p->bias[oc] : 0;
      const int8_t *const wc = p->weights + oc;
      int8_t *const o = output + y0 * out_row_stride + oc;
      dw_rq r;
      r.q = ta_rq4_prep(p->out_mult[oc], p->out_shift[oc], p->output_offset);
      r.m = p->out_mult[oc], r.shift = p->out_shift[oc], r.oo = p->output_offset, r.lo = p->act_min, r.hi = p->act_max;
      if (fast3) {
        int32_t w[9];
        for (t = 0; t < 9; ++t) w[t] = wc[t * out_c];
        (p->stride_w == 1 ? rows_3x3_s1 : rows_3x3_s2)(p, &pl, y1 - y0, w, wc, bias, &r, o, out_row_stride,
                                                       out_pix_stride);
      } else {
        rows_any(p, &pl, y1 - y0, wc, bias, &r, o, out_row_stride, out_pix_stride);
      }
    }
  }
}

void ta_depthwise_conv_s8(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                          void *scratch) {
#if TA_SIMD
  if (p->packed_weights && scratch && y1 > y0) {
    ta_depthwise_conv_s8_simd(p, input, output, y0, y1, scratch, ta_depthwise_conv_s8_scratch_bytes(p));
    return;
  }
#endif
  if (scratch && y1 > y0 && p->out_w > 0)
    dw_planes(p, input, output, y0, y1, (int16_t *)scratch);
  else
    dw_portable(p, input, output, y0, y1);
}

void ta_depthwise_conv_s8_inplace(const ta_dwconv_params *p, int8_t *buf, void *scratch) {
#if TA_SIMD
  if (p->packed_weights) {
    ta_depthwise_conv_s8_inplace_simd(p, buf, scratch, ta_depthwise_conv_s8_inplace_scratch_bytes(p));
    return;
  }
#endif
  if (p->out_h > 0 && p->out_w > 0) dw_planes(p, buf, buf, 0, p->out_h, (int16_t *)scratch);
}
