/*
 * DEPTHWISE_CONV_2D int8 (TFLite reference_integer_ops::DepthwiseConvPerChannel semantics):
 *   oc = ic * depth_multiplier + m
 *   acc = bias[oc] + sum over taps inside the input of (in[..][ic] + input_offset) * w[ky][kx][oc]
 *
 * This file: the portable path (per-channel planes in scratch, below), also in place, and the
 * scratch sizes; the entry points take the SIMD path (depthwise_simd.c, its assembly in
 * depthwise_asm.c) when it is compiled, the params have weights it reads (ta_dw_simd_weights:
 * packed, or int8 with simd_int8_weights) and its compiled row families run the layer
 * (ta_dw_simd_covers; the families: depthwise_simd.h).
 */
#include <string.h>

#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_chan_rq.h"
#include "ta_simd.h"
#include "depthwise_simd.h"
#include "depthwise_mve.h"

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

/* A one-column map under a K x 1 kernel (1-D layers down the time axis, str_ww's) is, byte for
 * byte, a one-row map under a 1 x K kernel: NHWC [H][1][C] is [1][H][C], the int8 weights
 * [K][1][C] are [1][K][C]. 1 and *t that row form (the SIMD path runs it with its tap pairs along
 * the row, several outputs a pass, instead of H rows of one tap padded to a pair). */
static int column_as_row(const ta_dwconv_params *p, ta_dwconv_params *t) {
  const int32_t in_pix = TA_OR_DEFAULT(p->in_pix_stride, p->in_c);
  const int32_t out_pix = TA_OR_DEFAULT(p->out_pix_stride, p->in_c * p->depth_multiplier);
  if (p->in_w != 1 || p->out_w != 1 || p->kernel_w != 1 || p->kernel_h < 2) return 0;
  *t = *p;
  t->in_h = t->out_h = t->kernel_h = t->stride_h = t->dilation_h = 1;
  t->in_w = p->in_h, t->out_w = p->out_h, t->kernel_w = p->kernel_h;
  t->stride_w = p->stride_h, t->dilation_w = p->dilation_h;
  t->pad_top = t->pad_bottom = 0, t->pad_left = p->pad_top, t->pad_right = p->pad_bottom;
  if (p->in_pix_stride || p->in_row_stride) /* a column's pixels lie a row stride apart */
    t->in_pix_stride = TA_OR_DEFAULT(p->in_row_stride, in_pix), t->in_row_stride = t->in_w * t->in_pix_stride;
  if (p->out_pix_stride || p->out_row_stride)
    t->out_pix_stride = TA_OR_DEFAULT(p->out_row_stride, out_pix), t->out_row_stride = t->out_w * t->out_pix_stride;
  return 1;
}

/* The layer's own planes, and for a one-column map also its row form's (column_as_row). */
size_t ta_depthwise_conv_s8_scratch_bytes(const ta_dwconv_params *p) {
  ta_dwconv_params t;
  size_t own, row;
  if (p->out_h <= 0 || p->out_w <= 0) return 0;
  own = (small_square(p) ? 4 : 1) * plane_bytes(p) + ((size_t)p->out_w + 1) * sizeof(int32_t);
  row = column_as_row(p, &t) ? ta_depthwise_conv_s8_scratch_bytes(&t) : 0;
  return own > row ? own : row;
}

size_t ta_depthwise_conv_s8_inplace_scratch_bytes(const ta_dwconv_params *p) {
  const size_t simd = ta_depthwise_conv_s8_scratch_bytes(p);
  const size_t plain = ((size_t)p->in_h * (size_t)p->in_w + 3) & ~(size_t)3;
  return simd > plain ? simd : plain;
}

/*
 * The portable path: per input channel its padded plane of x + input_offset
 * (0 outside the input) as int16 in scratch -- the rows the output rows [y0, y1) read, width
 * (out_w - 1) * stride_w + (kernel_w - 1) * dilation_w + 1, within the SIMD plane's room -- then
 * per output channel its output rows, requantized with ta_rq4 where its range allows.
 * Layers of stride 1 or 2 along the row, no dilation along it and at most DW_ROLL_TAPS taps take
 * the rolling path: a stride-2 plane row holds its even columns first, then its odd ones (the
 * "phases"), so that every output reads each phase's values at consecutive positions from its
 * own index on; per kernel row and phase, 4 outputs of a row hold a window of 4 values in
 * registers and load each value and weight once (rolling_dot4: 1 LDRSH, 1 LDRSB and 4 MLA per
 * tap), the channel's weights reordered into phase order on the stack once per channel. A last 3
 * outputs of a row (with at least 4) repeat a group of 4 ending at the row's end, a last 1 or 2
 * run one by one. A layer whose plane is one column wide (out_w 1, kernel_w 1: 1-D kernels down
 * the height) runs transposed: the column as one row. Any other layer: rows_any.
 * The zeroes (padding) sit in the same places for every channel: written once per call, then each
 * channel writes its values inside the input.
 */
#define DW_ROLL_TAPS 64

typedef struct dw_rows_job {
  const int16_t *x;        /* plane row of output row y0's first kernel row */
  int32_t width, row_step; /* values per plane row; plane values between output rows */
  int32_t krow;            /* the rolling path: plane values between kernel rows */
  int32_t rows, out_w;     /* output rows and row width */
  int32_t kh, kw, stride;  /* the rolling path's kernel rows, taps per kernel row, stride along a row */
  int32_t odd;             /* stride 2: a plane row's first odd column */
  const int8_t *w;         /* the channel's first weight; weights w_stride apart */
  int32_t w_stride, bias;
  int8_t *o;               /* channel 0's output at row y0 */
  int32_t oc;
  int32_t o_row, o_pix;
  ta_chan_rq rq;
} dw_rows_job;

/* Plane position of column c of a plane row n values wide, stride s (2: phases). */
static TA_ALWAYS_INLINE int32_t phase_index(int32_t c, int32_t n, int32_t s) {
  return s == 2 && (c & 1) ? (n + 1) / 2 + c / 2 : c / s;
}

/* Channel ic's values inside the input into its plane (rows from input row y0 * stride_h - pad_top
 * on; columns by phase_index with stride s, or, transposed, rows by phase_index with stride t). */
static void fill_plane(const ta_dwconv_params *p, const int8_t *input, int32_t ic, int32_t y0, int32_t rows,
                       int32_t width, int32_t s, int32_t t, int16_t *plane) {
  const int32_t in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, p->in_c);
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, p->in_w * in_pix_stride);
  const int32_t iy0 = y0 * p->stride_h - p->pad_top, off = p->input_offset;
  const int32_t x0 = ta_clamp32(p->pad_left, 0, width), x1 = ta_clamp32(p->pad_left + p->in_w, x0, width);
  const int32_t r0 = ta_clamp32(-iy0, 0, rows), r1 = ta_clamp32(p->in_h - iy0, r0, rows);
  int32_t r, c;
  for (r = r0; r < r1; ++r) {
    const int8_t *src = input + (iy0 + r) * in_row_stride + (x0 - p->pad_left) * in_pix_stride + ic;
    int16_t *const row = plane + phase_index(r, rows, t) * width;
    if (s == 2) { /* even columns, then odd ones */
      for (c = 0; c < 2; ++c) {
        const int32_t first = x0 + ((x0 ^ c) & 1); /* the first column of parity c */
        const int8_t *q = src + (first - x0) * in_pix_stride;
        int16_t *dst = row + phase_index(first, width, 2), *const end = dst + (x1 - first + 1) / 2;
        for (; dst < end; ++dst, q += 2 * in_pix_stride) *dst = (int16_t)(*q + off);
      }
    } else {
      int16_t *dst = row + x0, *const end = row + x1;
      for (; dst < end; ++dst, src += in_pix_stride) *dst = (int16_t)(*src + off);
    }
  }
}

/* Requantize a[0..n) (n = min(4, outputs left)) to o, o_pix apart; 4 outputs of a channel whose
 * clamp is one SSAT (ta_chan_rq.sat) unrolled when `fast`. */
static TA_ALWAYS_INLINE void store_quad(const ta_chan_rq *rq, const int32_t *a, int32_t n, int8_t *o, int32_t o_pix,
                                        int fast) {
  int32_t i;
  if (fast && n == 4 && rq->sat) {
    o[0] = (int8_t)ta_sat8(ta_rq4_apply(rq->q, a[0])), o[o_pix] = (int8_t)ta_sat8(ta_rq4_apply(rq->q, a[1]));
    o[2 * o_pix] = (int8_t)ta_sat8(ta_rq4_apply(rq->q, a[2]));
    o[3 * o_pix] = (int8_t)ta_sat8(ta_rq4_apply(rq->q, a[3]));
    return;
  }
  for (i = 0; i < n; ++i, o += o_pix) *o = ta_chan_rq_apply(rq, a[i]);
}

/* One tap of the rolling window: weight u times the window's values p, q, r, s (outputs 0..3). */
#define TA_ROLL(u, p, q, r, s) (a0 += (p) * (u), a1 += (q) * (u), a2 += (r) * (u), a3 += (s) * (u))

/* a[j] += sum over i < n of w[i] * x[i + j] for the 4 outputs j: per tap one new value. */
static TA_ALWAYS_INLINE void rolling_dot4(const int16_t *x, const int8_t *w, int32_t n, int32_t *a) {
  int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
  int32_t v0 = x[0], v1 = x[1], v2 = x[2], v3;
  const int8_t *const end4 = w + (n & ~3);
  for (x += 3; w < end4; x += 4, w += 4) { /* the window enters and leaves as v0, v1, v2 */
    v3 = x[0], TA_ROLL(w[0], v0, v1, v2, v3);
    v0 = x[1], TA_ROLL(w[1], v1, v2, v3, v0);
    v1 = x[2], TA_ROLL(w[2], v2, v3, v0, v1);
    v2 = x[3], TA_ROLL(w[3], v3, v0, v1, v2);
  }
  switch (n & 3) {
    case 3:
      v3 = x[0], TA_ROLL(w[0], v0, v1, v2, v3);
      v0 = x[1], TA_ROLL(w[1], v1, v2, v3, v0);
      TA_ROLL(w[2], v2, v3, v0, x[2]);
      break;
    case 2:
      v3 = x[0], TA_ROLL(w[0], v0, v1, v2, v3);
      TA_ROLL(w[1], v1, v2, v3, x[1]);
      break;
    case 1:
      TA_ROLL(w[0], v0, v1, v2, x[0]);
      break;
    default:
      break;
  }
  a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3;
}
#undef TA_ROLL

/* sum over i < n of w[i] * x[i]. */
static TA_ALWAYS_INLINE int32_t rolling_dot1(const int16_t *x, const int8_t *w, int32_t n, int32_t acc) {
  const int8_t *const end = w + n;
  for (; w < end; ++x, ++w) acc += *x * *w;
  return acc;
}

/* A channel's output rows on the rolling path; wq: its weights by kernel row, then phase. */
TA_NOINLINE static void rows_rolling(const dw_rows_job *j, const int8_t *wq, int32_t oc) {
  const ta_chan_rq rq = j->rq;
  const int32_t n0 = (j->kw + j->stride - 1) / j->stride, n1 = j->kw - n0; /* taps per phase */
  const int32_t tail = j->out_w & 3;
  const int32_t groups_end = tail == 3 && j->out_w >= 4 ? j->out_w : j->out_w - tail;
  int32_t y, ox, r, a[4];
  for (y = 0; y < j->rows; ++y) {
    const int16_t *const xr = j->x + y * j->row_step;
    int8_t *const o = j->o + y * j->o_row + oc;
    for (ox = 0; ox < groups_end; ox += 4) {
      const int32_t g = ta_min32(ox, j->out_w - 4); /* a last 3: the group ending at the row's end */
      const int16_t *x = xr + g;
      const int8_t *w = wq;
      a[0] = a[1] = a[2] = a[3] = j->bias;
      for (r = 0; r < j->kh; ++r, w += j->kw, x += j->krow) {
        rolling_dot4(x, w, n0, a);
        if (n1) rolling_dot4(x + j->odd, w + n0, n1, a);
      }
      store_quad(&rq, a, 4, o + g * j->o_pix, j->o_pix, 1);
    }
    for (; ox < j->out_w; ++ox) {
      const int16_t *x = xr + ox;
      const int8_t *w = wq;
      int32_t acc = j->bias;
      for (r = 0; r < j->kh; ++r, w += j->kw, x += j->krow) {
        acc = rolling_dot1(x, w, n0, acc);
        if (n1) acc = rolling_dot1(x + j->odd, w + n0, n1, acc);
      }
      o[ox * j->o_pix] = ta_chan_rq_apply(&rq, acc);
    }
  }
}

/* a[0..3] += the 3-tap kernel row w dotted at x, x + S, x + 2S, x + 3S (S = 1 or 2). */
static TA_ALWAYS_INLINE void row3(const int16_t *x, const int32_t *w, int32_t S, int32_t *a) {
  const int32_t w0 = w[0], w1 = w[1], w2 = w[2];
  int32_t v;
  if (S == 1) {
    v = x[0], a[0] += v * w0;
    v = x[1], a[0] += v * w1, a[1] += v * w0;
    v = x[2], a[0] += v * w2, a[1] += v * w1, a[2] += v * w0;
    v = x[3], a[1] += v * w2, a[2] += v * w1, a[3] += v * w0;
    v = x[4], a[2] += v * w2, a[3] += v * w1;
    v = x[5], a[3] += v * w2;
  } else {
    v = x[0], a[0] += v * w0;
    v = x[1], a[0] += v * w1;
    v = x[2], a[0] += v * w2, a[1] += v * w0;
    v = x[3], a[1] += v * w1;
    v = x[4], a[1] += v * w2, a[2] += v * w0;
    v = x[5], a[2] += v * w1;
    v = x[6], a[2] += v * w2, a[3] += v * w0;
    v = x[7], a[3] += v * w1;
    v = x[8], a[3] += v * w2;
  }
}

/* A 3x3 channel's output rows (stride S, dilation 1). */
static TA_ALWAYS_INLINE void rows_3x3(const dw_rows_job *j, int32_t S) {
  const ta_chan_rq rq = j->rq;
  int32_t w[9], y, ox, t;
  for (t = 0; t < 9; ++t) w[t] = j->w[t * j->w_stride];
  for (y = 0; y < j->rows; ++y) {
    const int16_t *x = j->x + y * j->row_step;
    int8_t *o = j->o + y * j->o_row + j->oc;
    for (ox = 0; ox < j->out_w; ox += 4, x += 4 * S, o += 4 * j->o_pix) {
      int32_t a[4];
      a[0] = a[1] = a[2] = a[3] = j->bias;
      row3(x, w, S, a);
      row3(x + j->width, w + 3, S, a);
      row3(x + 2 * j->width, w + 6, S, a);
      store_quad(&rq, a, ta_min32(4, j->out_w - ox), o, j->o_pix, 1);
    }
  }
}

TA_NOINLINE static void rows_3x3_s1(const dw_rows_job *j) { rows_3x3(j, 1); }
TA_NOINLINE static void rows_3x3_s2(const dw_rows_job *j) { rows_3x3(j, 2); }

/* Any kernel, stride and dilation: per tap the 4 outputs' values (a last group of n < 4 reads its
 * last output's n - 1 times over, so nothing past the plane). */
TA_NOINLINE static void rows_any(const ta_dwconv_params *p, const dw_rows_job *j, int32_t oc) {
  const ta_chan_rq rq = j->rq;
  const int32_t sw = p->stride_w, dw = p->dilation_w, row_skip = p->dilation_h * j->width - p->kernel_w * dw;
  int32_t y, ox, ky, kx;
  for (y = 0; y < j->rows; ++y)
    for (ox = 0; ox < j->out_w; ox += 4) {
      const int32_t n = ta_min32(4, j->out_w - ox);
      const int32_t s1 = n > 1 ? sw : 0, s2 = n > 2 ? 2 * sw : s1, s3 = n > 3 ? 3 * sw : s2;
      const int16_t *x = j->x + y * j->row_step + ox * sw;
      const int8_t *w = j->w;
      int32_t a[4];
      a[0] = a[1] = a[2] = a[3] = j->bias;
      for (ky = 0; ky < p->kernel_h; ++ky, x += row_skip)
        for (kx = 0; kx < p->kernel_w; ++kx, x += dw, w += j->w_stride) {
          const int32_t v = *w;
          a[0] += x[0] * v, a[1] += x[s1] * v, a[2] += x[s2] * v, a[3] += x[s3] * v;
        }
      store_quad(&rq, a, n, j->o + y * j->o_row + ox * j->o_pix + oc, j->o_pix, 0);
    }
}

/* The channel's weights (taps w_stride apart, kernel row after row) by kernel row, then phase. */
static void rolling_weights(const dw_rows_job *j, int8_t *wq) {
  int32_t r, ph, t;
  for (r = 0; r < j->kh; ++r)
    for (ph = 0; ph < j->stride; ++ph)
      for (t = ph; t < j->kw; t += j->stride) *wq++ = j->w[(r * j->kw + t) * j->w_stride];
}

/* Output rows [y0, y1) through the plane in `scratch`; `output` may be `input` (in place: dense,
 * multiplier 1, each channel's plane is taken before that channel is written). */
static void dw_planes(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                      int16_t *scratch) {
  const int32_t dm = p->depth_multiplier, out_c = p->in_c * dm, rows = plane_rows(p, y0, y1);
  const int32_t taps = p->kernel_h * p->kernel_w;
  const int32_t plane_w = (p->out_w - 1) * p->stride_w + (p->kernel_w - 1) * p->dilation_w + 1;
  int32_t ic, m, s = 1, t = 1;
  int roll = taps <= DW_ROLL_TAPS;
  const int fast3 = p->kernel_h == 3 && p->kernel_w == 3 && p->dilation_h == 1 && p->dilation_w == 1 &&
                    (p->stride_w == 1 || p->stride_w == 2) && plane_w > 1;
  int8_t wq[DW_ROLL_TAPS];
  dw_rows_job j;
  j.o_pix = TA_OR_DEFAULT(p->out_pix_stride, out_c);
  j.o_row = TA_OR_DEFAULT(p->out_row_stride, p->out_w * j.o_pix);
  j.x = scratch;
  j.width = plane_w, j.row_step = p->stride_h * plane_w, j.krow = p->dilation_h * plane_w;
  j.rows = y1 - y0, j.out_w = p->out_w, j.w_stride = out_c;
  j.kh = p->kernel_h, j.kw = p->kernel_w, j.stride = p->stride_w;
  j.o = output + y0 * j.o_row;
  if (plane_w == 1 && roll && (p->stride_h == 1 || p->stride_h == 2) && p->dilation_h == 1) {
    /* transposed: the plane column as one row of `rows` values */
    j.width = rows, j.row_step = 0, j.rows = 1, j.out_w = y1 - y0, j.o_pix = j.o_row;
    j.kh = 1, j.kw = p->kernel_h, j.stride = t = p->stride_h;
  } else {
    roll = roll && (p->stride_w == 1 || p->stride_w == 2) && p->dilation_w == 1 && !fast3;
    s = roll ? p->stride_w : 1;
  }
  j.odd = (j.width + 1) / 2;
  /* the zeroes (padding) sit in the same places for every channel */
  memset(scratch, 0, ((size_t)rows * (size_t)plane_w + (fast3 ? 3 * (size_t)p->stride_w : 0)) * sizeof(int16_t));
  for (ic = 0; ic < p->in_c; ++ic) {
    fill_plane(p, input, ic, y0, rows, plane_w, s, t, scratch);
    for (m = 0; m < dm; ++m) {
      const int32_t oc = ic * dm + m;
      j.bias = p->bias ? p->bias[oc] : 0;
      j.w = p->weights + oc;
      j.oc = oc;
      j.rq = ta_chan_rq_prep(p->out_mult[oc], p->out_shift[oc], p->output_offset, p->act_min, p->act_max);
      if (fast3) {
        if (p->stride_w == 1) rows_3x3_s1(&j);
        else rows_3x3_s2(&j);
      } else if (roll) {
        rolling_weights(&j, wq);
        rows_rolling(&j, wq, oc);
      } else {
        rows_any(p, &j, oc);
      }
    }
  }
}

/* Whether this build compiles the portable path: always but in a DSP build without Helium whose
 * generated Makefile set TA_DW_PORTABLE to 0 (every layer runs the SIMD path there). */
#define DW_PLANES (!TA_SIMD || TA_MVE || TA_DW_PORTABLE)

#if TA_SIMD
/* The SIMD path of ta_depthwise_conv_s8 / _inplace, a one-column map as its row form
 * (column_as_row). In a Helium build not inlined: the params copy (128 B) stays off the entry
 * points' frames, which the Helium path runs under (chan16_rows' 880 B below them); elsewhere the
 * SIMD path is the entry points' own, inlined (no extra call, frame as large either way). */
#if TA_MVE
#define DW_SIMD_LAYER TA_NOINLINE static void
#else
#define DW_SIMD_LAYER static TA_ALWAYS_INLINE void
#endif
DW_SIMD_LAYER dw_simd_layer(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                            void *scratch) {
  const size_t bytes = ta_depthwise_conv_s8_scratch_bytes(p);
  ta_dwconv_params t;
  if (!p->packed_weights && y0 == 0 && y1 == p->out_h && column_as_row(p, &t)) p = &t, y1 = 1;
  ta_depthwise_conv_s8_simd(p, input, output, y0, y1, scratch, bytes);
}

DW_SIMD_LAYER dw_simd_layer_inplace(const ta_dwconv_params *p, int8_t *buf, void *scratch) {
  const size_t bytes = ta_depthwise_conv_s8_inplace_scratch_bytes(p);
  ta_dwconv_params t;
  if (!p->packed_weights && column_as_row(p, &t)) p = &t;
  ta_depthwise_conv_s8_inplace_simd(p, buf, scratch, bytes);
}
#undef DW_SIMD_LAYER
#endif

void ta_depthwise_conv_s8(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                          void *scratch) {
#if TA_MVE
  if (scratch && y1 > y0 && p->out_w > 0 && ta_depthwise_mve_supported(p)) {
    ta_depthwise_mve(p, input, output, y0, y1, (int16_t *)scratch);
    return;
  }
#endif
#if TA_DW_CHANNELS_BUILT
  if (ta_dw_channels_applies(p) && y1 > y0) {
    ta_dw_channels(p, input, output, y0, y1);
    return;
  }
#endif
#if TA_SIMD
  if (ta_dw_simd_weights(p) && ta_dw_simd_covers(p) && scratch && y1 > y0) {
    dw_simd_layer(p, input, output, y0, y1, scratch);
    return;
  }
#endif
  if (DW_PLANES && y1 > y0 && p->out_w > 0) dw_planes(p, input, output, y0, y1, (int16_t *)scratch);
}

void ta_depthwise_conv_s8_inplace(const ta_dwconv_params *p, int8_t *buf, void *scratch) {
#if TA_MVE
  if (p->out_h > 0 && p->out_w > 0 && ta_depthwise_mve_supported(p)) {
    ta_depthwise_mve(p, buf, buf, 0, p->out_h, (int16_t *)scratch);
    return;
  }
#endif
#if TA_DW_CHANNELS_BUILT
  if (ta_dw_channels_applies(p) && ta_dw_channels_inplace(p, buf, scratch)) return;
#endif
#if TA_SIMD
  if (ta_dw_simd_weights(p) && ta_dw_simd_covers(p)) {
    dw_simd_layer_inplace(p, buf, scratch);
    return;
  }
#endif
  if (DW_PLANES && p->out_h > 0 && p->out_w > 0) dw_planes(p, buf, buf, 0, p->out_h, (int16_t *)scratch);
}
