/*
 * CONV_2D int8 (TFLite reference_integer_ops::ConvPerChannel semantics):
 *   acc = bias[oc] + sum over taps inside the input of (in + input_offset) * w
 *   out = clamp(mbqm(acc, mult[oc], shift[oc]) + output_offset, act_min, act_max)
 *
 * Portable path: direct loops. SIMD path (packed int16 weights): for each pair of output pixels
 * the two input patches are widened to int16 (offset added, padding = 0) into an interleaved
 * column buffer; the inner loop then computes 2 output channels x 2 pixels with 4 SMLADs per
 * 2 k-values (one LDRD of weights, one LDRD of inputs).
 */
#include "tinyarena_kernels.h"
#include "ta_simd.h"

#define TA_DEF(v, d) ((v) != 0 ? (v) : (d))

/* acc + sum (x[i] + off) * w[i]: the portable inner loop, out of line to keep it in registers. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int32_t dot_s8(const int8_t *x, const int8_t *w, int32_t n, int32_t off, int32_t acc) {
  const int8_t *const end = x + n;
  while (x < end) acc += (*x++ + off) * *w++;
  return acc;
}

static void conv_portable(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1) {
  const int32_t in_c = p->in_c, in_h = p->in_h, in_w = p->in_w, kh = p->kernel_h, kw = p->kernel_w;
  const int32_t ips = TA_DEF(p->in_pix_stride, in_c);
  const int32_t irs = TA_DEF(p->in_row_stride, in_w * ips);
  const int32_t out_c = p->out_c, out_w = p->out_w;
  const int32_t ops = TA_DEF(p->out_pix_stride, out_c);
  const int32_t ors = TA_DEF(p->out_row_stride, out_w * ops);
  const int32_t sh = p->stride_h, sw = p->stride_w, dh = p->dilation_h, dw = p->dilation_w;
  const int32_t pt = p->pad_top, pl = p->pad_left;
  const int32_t in_off = p->input_offset, oo = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int8_t *const weights = p->weights;
  const int32_t *const bias = p->bias, *const mult = p->out_mult, *const shift = p->out_shift;
  /* A run of taps along x is one contiguous span of input and weights when pixels are dense and
   * the kernel is not dilated along x. */
  const int dense_x = ips == in_c && dw == 1;
  int32_t oy, ox, oc, ky, kx;
  for (oy = y0; oy < y1; ++oy) {
    const int32_t iy0 = oy * sh - pt;
    for (ox = 0; ox < out_w; ++ox) {
      const int32_t ix0 = ox * sw - pl;
      /* taps inside the input: kx in [kx0, kx1) */
      int32_t kx0 = 0, kx1 = kw;
      int8_t *const o = output + oy * ors + ox * ops;
      while (kx0 < kw && ix0 + kx0 * dw < 0) ++kx0;
      while (kx1 > kx0 && ix0 + (kx1 - 1) * dw >= in_w) --kx1;
      for (oc = 0; oc < out_c; ++oc) {
        const int8_t *const wc = weights + (size_t)oc * kh * kw * in_c;
        int32_t acc = bias ? bias[oc] : 0;
        for (ky = 0; ky < kh; ++ky) {
          const int32_t iy = iy0 + ky * dh;
          if (iy < 0 || iy >= in_h) continue;
          if (dense_x) {
            const int8_t *ip = input + iy * irs + (ix0 + kx0) * ips;
            const int8_t *wp = wc + (ky * kw + kx0) * in_c;
            acc = dot_s8(ip, wp, (kx1 - kx0) * in_c, in_off, acc);
          } else {
            for (kx = kx0; kx < kx1; ++kx) {
              const int8_t *ip = input + iy * irs + (ix0 + kx * dw) * ips;
              acc = dot_s8(ip, wc + (ky * kw + kx) * in_c, in_c, in_off, acc);
            }
          }
        }
        o[oc] = ta_requant_acc(acc, mult[oc], shift[oc], oo, lo, hi);
      }
    }
  }
}

/* Scratch of the SIMD path: a column buffer of 2 pixels x Kp int16 (Kp = K rounded up to a
 * multiple of 4) followed by one prepared ta_rq per output channel. */
static size_t col_bytes(const ta_conv_params *p) {
  const int32_t k = p->kernel_h * p->kernel_w * p->in_c;
  return (size_t)((k + 3) & ~3) * 2 * sizeof(int16_t);
}

size_t ta_conv_s8_scratch_bytes(const ta_conv_params *p) {
  return col_bytes(p) + (size_t)p->out_c * sizeof(ta_rq);
}

#if TA_SIMD
/* Widen the input patch of output pixel (oy, ox) into slot `slot` (0/1) of the interleaved
 * column buffer: element k goes to col[(k/2)*4 + slot*2 + k%2]. Padding taps give 0. */
static void im2col_pixel(const ta_conv_params *p, const int8_t *input, int32_t irs, int32_t ips, int32_t oy,
                         int32_t ox, int16_t *col, int32_t slot) {
  const int32_t in_c = p->in_c;
  const int32_t iy0 = oy * p->stride_h - p->pad_top;
  const int32_t ix0 = ox * p->stride_w - p->pad_left;
  const int32_t in_off = p->input_offset;
  int32_t k = 0, ky, kx, ic;
  int16_t *dst = col + slot * 2;
  const int32_t off2 = ta_pair16(in_off, in_off);
  for (ky = 0; ky < p->kernel_h; ++ky) {
    const int32_t iy = iy0 + ky * p->dilation_h;
    const int row_ok = iy >= 0 && iy < p->in_h;
    for (kx = 0; kx < p->kernel_w; ++kx) {
      const int32_t ix = ix0 + kx * p->dilation_w;
      if (!row_ok || ix < 0 || ix >= p->in_w) {
        for (ic = 0; ic < in_c; ++ic, ++k) dst[(k >> 1) * 4 + (k & 1)] = 0;
        continue;
      }
      {
        const int8_t *ip = input + iy * irs + ix * ips;
        ic = 0;
        if ((k & 1) == 0) {
          /* 4 bytes -> two SIMD words (x0,x1), (x2,x3) with the offset added. */
          for (; ic + 4 <= in_c; ic += 4, k += 4) {
            const int32_t raw = ta_read32(ip + ic);
            const int32_t even = ta_sadd16(ta_sxtb16(raw), off2);      /* (x0, x2) */
            const int32_t odd = ta_sadd16(ta_sxtb16_ror8(raw), off2);  /* (x1, x3) */
            int16_t *d = dst + (k >> 1) * 4;
            ta_write32(d, ta_pair16(even, odd));
            ta_write32(d + 4, (int32_t)(((uint32_t)even >> 16) | ((uint32_t)odd & 0xFFFF0000u)));
          }
        }
        for (; ic < in_c; ++ic, ++k) dst[(k >> 1) * 4 + (k & 1)] = (int16_t)(ip[ic] + in_off);
      }
    }
  }
  /* Zero the padding element of an odd K so the last pair multiplies a zero weight by 0. */
  if (k & 1) dst[(k >> 1) * 4 + 1] = 0;
}

/* 2 output channels x 2 pixels over `n2` double k-steps (4 k values): the hot loop.
 * On a real DSP core it is written in assembly: per 4 k values 2+2 LDRD (post-increment) and
 * 8 SMLAD, plus CMP/BNE -- 0.875 instructions per MAC. */
static inline void mac_2x2(const ta_i32a **pw, const ta_i32a **px, const ta_i32a *xend, int32_t *a00, int32_t *a01,
                           int32_t *a10, int32_t *a11) {
  const ta_i32a *wp = *pw, *xp = *px;
#if TA_SIMD_NATIVE
  if (xp < xend) {
    int32_t w0, w1, x0, x1;
    __asm__ volatile(
        "1:\n\t"
        "ldrd %[w0], %[w1], [%[wp]], #8\n\t"
        "ldrd %[x0], %[x1], [%[xp]], #8\n\t"
        "smlad %[a00], %[w0], %[x0], %[a00]\n\t"
        "smlad %[a01], %[w0], %[x1], %[a01]\n\t"
        "smlad %[a10], %[w1], %[x0], %[a10]\n\t"
        "smlad %[a11], %[w1], %[x1], %[a11]\n\t"
        "ldrd %[w0], %[w1], [%[wp]], #8\n\t"
        "ldrd %[x0], %[x1], [%[xp]], #8\n\t"
        "smlad %[a00], %[w0], %[x0], %[a00]\n\t"
        "smlad %[a01], %[w0], %[x1], %[a01]\n\t"
        "smlad %[a10], %[w1], %[x0], %[a10]\n\t"
        "smlad %[a11], %[w1], %[x1], %[a11]\n\t"
        "cmp %[xp], %[xe]\n\t"
        "bne 1b\n\t"
        : [a00] "+r"(*a00), [a01] "+r"(*a01), [a10] "+r"(*a10), [a11] "+r"(*a11), [wp] "+r"(wp), [xp] "+r"(xp),
          [w0] "=&r"(w0), [w1] "=&r"(w1), [x0] "=&r"(x0), [x1] "=&r"(x1)
        : [xe] "r"(xend)
        : "cc", "memory");
  }
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
  *a00 = b00, *a01 = b01, *a10 = b10, *a11 = b11;
#endif
  *pw = wp, *px = xp;
}

static void conv_simd(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                      int16_t *col) {
  const int32_t ips = TA_DEF(p->in_pix_stride, p->in_c);
  const int32_t irs = TA_DEF(p->in_row_stride, p->in_w * ips);
  const int32_t ops = TA_DEF(p->out_pix_stride, p->out_c);
  const int32_t ors = TA_DEF(p->out_row_stride, p->out_w * ops);
  const int32_t k = p->kernel_h * p->kernel_w * p->in_c;
  const int32_t kpairs = (k + 1) >> 1; /* number of 2-element k steps */
  const int32_t out_c = p->out_c, out_w = p->out_w;
  const int32_t npix = (y1 - y0) * out_w;
  const int32_t oo = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *const bias = p->bias;
  ta_rq *const rqs = (ta_rq *)(void *)((uint8_t *)col + col_bytes(p));
  const ta_i32a *const packed = (const ta_i32a *)p->packed_weights;
  const ta_i32a *const cw = (const ta_i32a *)col;
  const ta_i32a *const cw_end2 = cw + 4 * (kpairs >> 1); /* end of the 2-k-step unrolled part */
  int32_t pix;
  for (pix = 0; pix < out_c; ++pix) rqs[pix] = ta_rq_prep(p->out_mult[pix], p->out_shift[pix]);
  for (pix = 0; pix < npix; pix += 2) {
    const int32_t oy0 = y0 + pix / out_w, ox0 = pix % out_w;
    const int two = pix + 1 < npix;
    const int32_t oy1 = y0 + (pix + 1) / out_w, ox1 = (pix + 1) % out_w;
    int8_t *const o0 = output + oy0 * ors + ox0 * ops;
    int8_t *const o1 = output + oy1 * ors + ox1 * ops;
    const ta_i32a *wp = packed;
    int32_t oc;
    im2col_pixel(p, input, irs, ips, oy0, ox0, col, 0);
    if (two) im2col_pixel(p, input, irs, ips, oy1, ox1, col, 1);
    for (oc = 0; oc + 2 <= out_c; oc += 2) {
      const int32_t b0 = bias ? bias[oc] : 0, b1 = bias ? bias[oc + 1] : 0;
      int32_t a00 = b0, a01 = b0, a10 = b1, a11 = b1; /* a<channel><pixel> */
      const ta_i32a *xp = cw;
      const ta_rq *const r0 = rqs + oc, *const r1 = rqs + oc + 1;
      mac_2x2(&wp, &xp, cw_end2, &a00, &a01, &a10, &a11);
      if (kpairs & 1) {
        const int32_t w0 = wp[0], w1 = wp[1], x0 = xp[0], x1 = xp[1];
        a00 = ta_smlad(w0, x0, a00);
        a01 = ta_smlad(w0, x1, a01);
        a10 = ta_smlad(w1, x0, a10);
        a11 = ta_smlad(w1, x1, a11);
        wp += 2;
      }
      if (TA_RQ_FAST_OK(r0) && TA_RQ_FAST_OK(r1)) {
        o0[oc] = ta_rq_out_fast(r0, a00, oo, lo, hi);
        o0[oc + 1] = ta_rq_out_fast(r1, a10, oo, lo, hi);
        if (two) {
          o1[oc] = ta_rq_out_fast(r0, a01, oo, lo, hi);
          o1[oc + 1] = ta_rq_out_fast(r1, a11, oo, lo, hi);
        }
      } else {
        o0[oc] = ta_rq_out(r0, a00, oo, lo, hi);
        o0[oc + 1] = ta_rq_out(r1, a10, oo, lo, hi);
        if (two) {
          o1[oc] = ta_rq_out(r0, a01, oo, lo, hi);
          o1[oc + 1] = ta_rq_out(r1, a11, oo, lo, hi);
        }
      }
    }
    if (oc < out_c) { /* odd last channel: one weight word per k step */
      const int32_t b0 = bias ? bias[oc] : 0;
      int32_t a0 = b0, a1 = b0, kk;
      const ta_i32a *xp = cw;
      const ta_rq *const r0 = rqs + oc;
      for (kk = 0; kk < kpairs; ++kk) {
        const int32_t w0 = wp[kk];
        a0 = ta_smlad(w0, xp[0], a0);
        a1 = ta_smlad(w0, xp[1], a1);
        xp += 2;
      }
      o0[oc] = ta_rq_out(r0, a0, oo, lo, hi);
      if (two) o1[oc] = ta_rq_out(r0, a1, oo, lo, hi);
    }
  }
}
#endif

void ta_conv_s8(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                void *scratch) {
#if TA_SIMD
  if (p->packed_weights && scratch) {
    conv_simd(p, input, output, y0, y1, (int16_t *)scratch);
    return;
  }
#else
  (void)scratch;
#endif
  conv_portable(p, input, output, y0, y1);
}
