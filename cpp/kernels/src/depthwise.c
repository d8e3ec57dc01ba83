/*
 * DEPTHWISE_CONV_2D int8 (TFLite reference_integer_ops::DepthwiseConvPerChannel semantics):
 *   oc = ic * depth_multiplier + m
 *   acc = bias[oc] + sum over taps inside the input of (in[..][ic] + input_offset) * w[ky][kx][oc]
 *
 * Portable path: direct loops. SIMD path (packed int16 weights): per input channel the input
 * plane the requested rows need is copied once into an int16 scratch plane (raw values, the
 * zero point where the window leaves the input, and input_offset * sum(w) folded into the bias,
 * so the inner loop has no bounds checks); 3x3 stride 1/2 have two-outputs-per-step and
 * pair-reusing loops, other kernels kernel_h * ceil(kernel_w/2) SMLADs per output.
 * In-place variant: the plane copy is what frees the channel, so output channel c can be
 * written over input channel c (TinyEngine's trick; depth_multiplier == 1, dense NHWC).
 */
#include "tinyarena_kernels.h"
#include "ta_simd.h"

#define TA_DEF(v, d) ((v) != 0 ? (v) : (d))

static inline int8_t rq(const ta_dwconv_params *p, int32_t acc, int32_t oc) {
  return ta_requant_acc(acc, p->out_mult[oc], p->out_shift[oc], p->output_offset, p->act_min, p->act_max);
}

static void dw_portable(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1) {
  const int32_t in_c = p->in_c, dm = p->depth_multiplier, out_c = in_c * dm;
  const int32_t in_h = p->in_h, in_w = p->in_w, kh = p->kernel_h, kw = p->kernel_w, out_w = p->out_w;
  const int32_t ips = TA_DEF(p->in_pix_stride, in_c);
  const int32_t irs = TA_DEF(p->in_row_stride, in_w * ips);
  const int32_t ops = TA_DEF(p->out_pix_stride, out_c);
  const int32_t ors = TA_DEF(p->out_row_stride, out_w * ops);
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
      int8_t *const o = output + oy * ors + ox * ops;
      while (kx0 < kw && ix0 + kx0 * dw < 0) ++kx0;
      while (kx1 > kx0 && ix0 + (kx1 - 1) * dw >= in_w) --kx1;
      for (ic = 0; ic < in_c; ++ic) {
        const int8_t *const ib = input + (iy0 + ky0 * dh) * irs + (ix0 + kx0 * dw) * ips + ic;
        for (m = 0; m < dm; ++m) {
          const int32_t oc = ic * dm + m;
          const int8_t *wrow = weights + (ky0 * kw + kx0) * out_c + oc;
          const int8_t *irow = ib;
          int32_t acc = bias ? bias[oc] : 0;
          for (ky = ky0; ky < ky1; ++ky, irow += dh * irs, wrow += kw * out_c) {
            const int8_t *ip = irow, *wp = wrow;
            for (kx = kx0; kx < kx1; ++kx, ip += dw * ips, wp += out_c) acc += (*ip + in_off) * *wp;
          }
          o[oc] = ta_requant_acc(acc, mult[oc], shift[oc], oo, lo, hi);
        }
      }
    }
  }
}

/* Plane geometry for output rows [y0, y1): rows of the padded input window and its width,
 * rounded up to even so that every plane row starts on a 4-byte boundary (aligned pair loads). */
static int32_t kw_padded(const ta_dwconv_params *p) { return (p->kernel_w + 1) & ~1; }
static int32_t plane_rows(const ta_dwconv_params *p, int32_t y0, int32_t y1) {
  return (y1 - y0 - 1) * p->stride_h + (p->kernel_h - 1) * p->dilation_h + 1;
}
static int32_t plane_width(const ta_dwconv_params *p) {
  return ((p->out_w - 1) * p->stride_w + (kw_padded(p) - 1) * p->dilation_w + 2) & ~1;
}

/* SIMD scratch: the int16 plane (+2 slack values, rounded to 4 bytes), then one int32
 * accumulator per output column (+1 for the pair loops). */
static size_t plane_bytes(const ta_dwconv_params *p) {
  return (((size_t)plane_rows(p, 0, p->out_h) * (size_t)plane_width(p) + 2) * sizeof(int16_t) + 3) & ~(size_t)3;
}

size_t ta_depthwise_conv_s8_scratch_bytes(const ta_dwconv_params *p) {
  if (p->out_h <= 0 || p->out_w <= 0) return 0;
  return plane_bytes(p) + ((size_t)p->out_w + 1) * sizeof(int32_t);
}

size_t ta_depthwise_conv_s8_inplace_scratch_bytes(const ta_dwconv_params *p) {
  const size_t simd = ta_depthwise_conv_s8_scratch_bytes(p);
  const size_t plain = ((size_t)p->in_h * (size_t)p->in_w + 3) & ~(size_t)3;
  return simd > plain ? simd : plain;
}

#if TA_SIMD
/* Copy input channel c (rows iy_lo .. iy_lo+rows-1, columns -pad_left ..) into the int16 plane
 * as raw values; positions outside the input hold the input zero point, so that (x + offset)
 * is 0 there. The offset itself is folded into the bias (see channel_bias). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns"))) /* short runs: no memset calls */
#endif
static void build_plane16(const ta_dwconv_params *p, const int8_t *src, int32_t irs, int32_t ips, int32_t c,
                          int32_t iy_lo, int32_t rows, int32_t width, int16_t *plane) {
  const int32_t ix_lo = -p->pad_left;
  const int16_t zp = (int16_t)-p->input_offset;
  const int32_t xa = ta_min32(width, ta_max32(0, -ix_lo));         /* first in-bounds column */
  const int32_t xb = ta_max32(xa, ta_min32(width, p->in_w - ix_lo)); /* one past the last */
  const int32_t r0 = ta_min32(rows, ta_max32(0, -iy_lo));           /* first in-bounds row */
  const int32_t r1 = ta_max32(r0, ta_min32(rows, p->in_h - iy_lo));  /* one past the last */
  int16_t *d = plane, *end;
  int32_t r;
  /* the plane in memory order: rows above, then per input row its columns [xa, xb) with the
   * padding after it and before the next row as one run, then rows below */
  end = plane + (r0 < r1 ? r0 * width + xa : rows * width);
  while (d < end) *d++ = zp;
  for (r = r0; r < r1; ++r) {
    const int8_t *s = src + (iy_lo + r) * irs + c + (ix_lo + xa) * ips;
    int16_t *const row_end = d + (xb - xa);
    for (; d + 2 <= row_end; d += 2, s += 2 * ips) d[0] = s[0], d[1] = s[ips];
    if (d < row_end) *d++ = s[0];
    end = d + (r + 1 < r1 ? width - (xb - xa) : width - xb + (rows - r1) * width);
    while (d < end) *d++ = zp;
  }
  plane[rows * width] = 0;
  plane[rows * width + 1] = 0;
}

/* bias + input_offset * (sum of the channel's taps): the accumulator start that lets the MAC
 * loops multiply raw inputs (exact in wrapping int32, like the reference sum). */
static int32_t channel_bias(const ta_dwconv_params *p, const ta_i32a *w, int32_t nwords, int32_t oc) {
  int32_t sum = 0, i;
  for (i = 0; i < nwords; ++i) sum = ta_smlad(w[i], 0x00010001, sum); /* both taps of a word */
  return ta_wrap_add(p->bias ? p->bias[oc] : 0, (int32_t)((uint32_t)sum * (uint32_t)p->input_offset));
}

/* Where one channel's output rows go and how they are requantized. */
typedef struct dw_out {
  int8_t *o;             /* output row y0, this channel */
  int32_t ors, ops;      /* row and pixel strides */
  int32_t n;             /* outputs per row */
  int32_t oo, lo, hi;    /* output offset, activation range */
  int32_t m, shift;      /* the channel's multiplier */
} dw_out;

/* Requantize one row of accumulators to o[0], o[ops], ...: the four-word form (output offset
 * included) with a plain saturation when the activation range is all of int8, else ta_mbqm. */
TA_INLINE void requant_row(const ta_rq4 *q4, const int32_t *acc, const dw_out *d, int8_t *o) {
  const int32_t *const end = acc + d->n;
  const int32_t ops = d->ops, oo = d->oo, lo = d->lo, hi = d->hi;
  if (q4->rs >= 0) {
    const ta_rq4 r = *q4;
    if (lo == -128 && hi == 127) {
      for (; acc < end; o += ops) *o = (int8_t)ta_ssat8(ta_rq4_apply(r, *acc++));
    } else {
      for (; acc < end; o += ops) *o = (int8_t)ta_clamp_act(ta_rq4_apply(r, *acc++), lo, hi);
    }
  } else {
    for (; acc < end; ++acc, o += ops) *o = ta_requant_acc(*acc, d->m, d->shift, oo, lo, hi);
  }
}

/* A 3x3 channel's weights as the row loops use them, prepared once per channel: per kernel row
 * w = (w0, w1) and z = (w2, 0) for stride 2, (w2, w1) for stride 1 (see dw3x3s1_row). */
typedef struct dw3x3_weights {
  int32_t w[3], z[3];
} dw3x3_weights;

static dw3x3_weights dw3x3_prepare(const ta_i32a *wq, int32_t stride) {
  dw3x3_weights k;
  int32_t r;
  for (r = 0; r < 3; ++r) {
    k.w[r] = wq[2 * r];
    k.z[r] = stride == 1 ? (int32_t)(((uint32_t)wq[2 * r + 1] & 0xFFFFu) | ((uint32_t)wq[2 * r] & 0xFFFF0000u))
                         : wq[2 * r + 1];
  }
  return k;
}

/* 3x3 stride 1 (dilation 1), two outputs per step from aligned pair loads of each plane row:
 * with a = (x0, x1), b = (x2, x3), w01 = (w0, w1), w21 = (w2, w1):
 *   out0 = SMLAD(a, w01) + SMLABB(b, w21),  out1 = SMLATB(a, w01) + SMLADX(b, w21)
 * i.e. 4 multiply instructions and one LDRD per row for 6 MACs. */
TA_INLINE void dw3x3s1_row(const dw3x3_weights *wk, int32_t bias, const int16_t *a0, int32_t width, int32_t *acc,
                            int32_t n) {
  const int32_t w0 = wk->w[0], z0 = wk->z[0], w1 = wk->w[1], z1 = wk->z[1], w2 = wk->w[2], z2 = wk->z[2];
  const ta_i32a *r0 = (const ta_i32a *)a0, *r1 = (const ta_i32a *)(a0 + width), *r2 = (const ta_i32a *)(a0 + 2 * width);
  int32_t *const end = acc + n;
#if TA_SIMD_NATIVE && defined(__OPTIMIZE__)
  /* Per 2 outputs: 3 LDRD, 12 multiplies, the bias, z1 and z2 and the end from memory, STRD --
   * 23 instructions for 18 MACs, in 12 registers (unoptimised builds, which keep a frame
   * pointer and spill freely, use the C loop below). */
  if (acc < end) {
    int32_t a, b, s0, s1;
    __asm__ volatile(
        "1:\n\t"
        "ldr %[s0], %[bias]\n\t"
        "ldrd %[a], %[b], [%[r0]], #4\n\t"
        "mov %[s1], %[s0]\n\t"
        "smlad %[s0], %[a], %[w0], %[s0]\n\t"
        "smlatb %[s1], %[a], %[w0], %[s1]\n\t"
        "smlabb %[s0], %[b], %[z0], %[s0]\n\t"
        "smladx %[s1], %[b], %[z0], %[s1]\n\t"
        "ldrd %[a], %[b], [%[r1]], #4\n\t"
        "smlad %[s0], %[a], %[w1], %[s0]\n\t"
        "smlatb %[s1], %[a], %[w1], %[s1]\n\t"
        "ldr %[a], %[z1]\n\t"
        "smlabb %[s0], %[b], %[a], %[s0]\n\t"
        "smladx %[s1], %[b], %[a], %[s1]\n\t"
        "ldrd %[a], %[b], [%[r2]], #4\n\t"
        "smlad %[s0], %[a], %[w2], %[s0]\n\t"
        "smlatb %[s1], %[a], %[w2], %[s1]\n\t"
        "ldr %[a], %[z2]\n\t"
        "smlabb %[s0], %[b], %[a], %[s0]\n\t"
        "smladx %[s1], %[b], %[a], %[s1]\n\t"
        "strd %[s0], %[s1], [%[acc]], #8\n\t"
        "ldr %[a], %[end]\n\t"
        "cmp %[acc], %[a]\n\t"
        "bcc 1b\n\t"
        : [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [acc] "+r"(acc), [a] "=&r"(a), [b] "=&r"(b),
          [s0] "=&r"(s0), [s1] "=&r"(s1)
        : [w0] "r"(w0), [z0] "r"(z0), [w1] "r"(w1), [w2] "r"(w2), [z1] "m"(z1), [z2] "m"(z2), [bias] "m"(bias),
          [end] "m"(end)
        : "cc", "memory");
  }
#else
  while (acc < end) {
    int32_t a = r0[0], b = r0[1];
    int32_t s0 = ta_smlad(a, w0, bias), s1 = ta_smlatb(a, w0, bias);
    s0 = ta_smlabb(b, z0, s0);
    s1 = ta_smladx(b, z0, s1);
    a = r1[0], b = r1[1];
    s0 = ta_smlad(a, w1, s0);
    s1 = ta_smlatb(a, w1, s1);
    s0 = ta_smlabb(b, z1, s0);
    s1 = ta_smladx(b, z1, s1);
    a = r2[0], b = r2[1];
    s0 = ta_smlad(a, w2, s0);
    s1 = ta_smlatb(a, w2, s1);
    acc[0] = ta_smlabb(b, z2, s0);
    acc[1] = ta_smladx(b, z2, s1);
    acc += 2, r0 += 1, r1 += 1, r2 += 1;
  }
#endif
}

/* 3x3 stride 2 (dilation 1): output ox reads the aligned words (x[2ox], x[2ox+1]) and
 * (x[2ox+2], x[2ox+3]); the second is the next output's first, so one load per row. */
TA_INLINE void dw3x3s2_row(const dw3x3_weights *wk, int32_t bias, const int16_t *a0, int32_t width, int32_t *acc,
                            int32_t n) {
  const int32_t w0 = wk->w[0], z0 = wk->z[0], w1 = wk->w[1], z1 = wk->z[1], w2 = wk->w[2], z2 = wk->z[2];
  const ta_i32a *r0 = (const ta_i32a *)a0, *r1 = (const ta_i32a *)(a0 + width), *r2 = (const ta_i32a *)(a0 + 2 * width);
  int32_t p0 = *r0++, p1 = *r1++, p2 = *r2++;
  int32_t *const end = acc + n;
  while (acc < end) {
    const int32_t q0 = *r0++, q1 = *r1++, q2 = *r2++;
    int32_t s = ta_smlad(p0, w0, bias);
    s = ta_smlabb(q0, z0, s);
    s = ta_smlad(p1, w1, s);
    s = ta_smlabb(q1, z1, s);
    s = ta_smlad(p2, w2, s);
    *acc++ = ta_smlabb(q2, z2, s);
    p0 = q0, p1 = q1, p2 = q2;
  }
}

/* All `rows` output rows of one channel of a 3x3 depthwise with stride 1 or 2 (plane row 0 =
 * first input row): per row the MAC loop into accrow, then its requantization. Out of line, so
 * each row costs no call; weights, requantization constants and output geometry are read once
 * into locals (the MAC loop's memory clobber would otherwise reload them every row). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void dw3x3_channel(const ta_i32a *wq, int32_t bias, const ta_rq4 *q4, const int16_t *r0, int32_t width,
                          int32_t rows, int32_t *accrow, const dw_out *d, int32_t stride) {
  const dw3x3_weights wk = dw3x3_prepare(wq, stride);
  const dw_out dl = *d;
  const ta_rq4 q = *q4;
  const int32_t step = stride * width;
  int8_t *o = dl.o;
  for (; rows > 0; --rows, r0 += step, o += dl.ors) {
    if (stride == 1)
      dw3x3s1_row(&wk, bias, r0, width, accrow, dl.n);
    else
      dw3x3s2_row(&wk, bias, r0, width, accrow, dl.n);
    requant_row(&q, accrow, &dl, o);
  }
}

/* Output channel oc for rows [y0, y1) from a plane whose row 0 is input row iy_lo. Each output
 * row is accumulated into `accrow` first (MAC loop with the weights in registers), then
 * requantized in a second pass. */
static void dw_channel_simd(const ta_dwconv_params *p, const int16_t *plane, int32_t width, int32_t iy_lo,
                            int32_t oc, int8_t *output, int32_t ors, int32_t ops, int32_t y0, int32_t y1,
                            int32_t *accrow) {
  const int32_t kh = p->kernel_h, kwp2 = kw_padded(p) >> 1;
  const int32_t sw = p->stride_w, sh = p->stride_h, dh = p->dilation_h, dw = p->dilation_w;
  const int32_t out_w = p->out_w;
  const ta_i32a *wq = (const ta_i32a *)p->packed_weights + (size_t)oc * kh * kwp2;
  const int32_t bias = channel_bias(p, wq, kh * kwp2, oc);
  const ta_rq4 q4 = ta_rq4_prep(p->out_mult[oc], p->out_shift[oc], p->output_offset);
  const dw_out d = {output + y0 * ors + oc, ors, ops, out_w, p->output_offset, p->act_min, p->act_max,
                    p->out_mult[oc], p->out_shift[oc]};
  const int16_t *r0 = plane + (y0 * sh - p->pad_top - iy_lo) * width;
  int32_t oy, ox, ky, j;
  if (kh == 3 && p->kernel_w == 3 && dh == 1 && dw == 1 && sw == sh && (sw == 1 || sw == 2)) {
    dw3x3_channel(wq, bias, &q4, r0, width, y1 - y0, accrow, &d, sw);
    return;
  }
  for (oy = y0; oy < y1; ++oy, r0 += sh * width) {
    for (ox = 0; ox < out_w; ++ox) {
      const int16_t *a = r0 + ox * sw;
      const ta_i32a *w = wq;
      int32_t acc = bias;
      for (ky = 0; ky < kh; ++ky) {
        const int16_t *r = a + ky * dh * width;
        if (dw == 1) {
          for (j = 0; j < kwp2; ++j) acc = ta_smlad(w[j], ta_read32(r + 2 * j), acc);
        } else {
          for (j = 0; j < kwp2; ++j) acc = ta_smlad(w[j], ta_pair16(r[2 * j * dw], r[(2 * j + 1) * dw]), acc);
        }
        w += kwp2;
      }
      accrow[ox] = acc;
    }
    requant_row(&q4, accrow, &d, output + oy * ors + oc);
  }
}
#endif

void ta_depthwise_conv_s8(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                          void *scratch) {
#if TA_SIMD
  if (p->packed_weights && scratch && y1 > y0) {
    const int32_t in_c = p->in_c, dm = p->depth_multiplier;
    const int32_t ips = TA_DEF(p->in_pix_stride, in_c);
    const int32_t irs = TA_DEF(p->in_row_stride, p->in_w * ips);
    const int32_t ops = TA_DEF(p->out_pix_stride, in_c * dm);
    const int32_t ors = TA_DEF(p->out_row_stride, p->out_w * ops);
    const int32_t iy_lo = y0 * p->stride_h - p->pad_top;
    const int32_t rows = plane_rows(p, y0, y1), width = plane_width(p);
    int16_t *plane = (int16_t *)scratch;
    int32_t *accrow = (int32_t *)(void *)((uint8_t *)scratch + plane_bytes(p));
    int32_t c, m;
    for (c = 0; c < in_c; ++c) {
      build_plane16(p, input, irs, ips, c, iy_lo, rows, width, plane);
      for (m = 0; m < dm; ++m)
        dw_channel_simd(p, plane, width, iy_lo, c * dm + m, output, ors, ops, y0, y1, accrow);
    }
    return;
  }
#else
  (void)scratch;
#endif
  dw_portable(p, input, output, y0, y1);
}

void ta_depthwise_conv_s8_inplace(const ta_dwconv_params *p, int8_t *buf, void *scratch) {
  const int32_t C = p->in_c, in_h = p->in_h, in_w = p->in_w;
  int32_t c, oy, ox, ky, kx, i;
#if TA_SIMD
  if (p->packed_weights) {
    const int32_t iy_lo = -p->pad_top;
    const int32_t rows = plane_rows(p, 0, p->out_h), width = plane_width(p);
    int16_t *plane = (int16_t *)scratch;
    int32_t *accrow = (int32_t *)(void *)((uint8_t *)scratch + plane_bytes(p));
    for (c = 0; c < C; ++c) {
      build_plane16(p, buf, in_w * C, C, c, iy_lo, rows, width, plane);
      dw_channel_simd(p, plane, width, iy_lo, c, buf, p->out_w * C, C, 0, p->out_h, accrow);
    }
    return;
  }
#endif
  {
    int8_t *plane = (int8_t *)scratch;
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
}
