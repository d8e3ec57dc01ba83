/*
 * DEPTHWISE_CONV_2D, the SIMD path's int16 planes (see depthwise_simd.c): input rows of a group of
 * up to 4 channels widened from NHWC into plane rows (raw values; the zero point outside the
 * input), and the zero-point columns of the scratch's rows. Invariant: a plane row holds the
 * input row's columns -pad_left .. width - pad_left - 1, the zero point where they leave the input.
 */
#include <stddef.h>

#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "depthwise_simd.h"

#if TA_SIMD
/* Plane rows of a group from n input rows of NHWC (s: first row's column xa, channel c0; d: the
 * first slot, channel j of a slot at + j * width), columns [xa, xb). 4 channels take two pixel
 * loads, PKHBT/PKHTB and four SXTB16 per 2 columns (channel c's pair of columns per word), 4
 * columns a pass (a word pair per channel, STRD). */
TA_INLINE void widen4(const int8_t *q, int32_t ps, int32_t *c0, int32_t *c1, int32_t *c2, int32_t *c3) {
  const int32_t a = ta_read32(q), b = ta_read32(q + ps);
  const int32_t lo = pack_lo16(a, b), hi = pack_hi16(a, b);
  *c0 = ta_sxtb16(lo), *c1 = sxtb16_odd(lo), *c2 = ta_sxtb16(hi), *c3 = sxtb16_odd(hi);
}

/* `quads` passes of 4 columns from q (pixel stride ps) into channel planes d, d + w2, d + 2 w2,
 * d + 3 w2 (words); returns q past them. Assembly on a DSP core: 24 instructions per 16 values. */
static const int8_t *widen_quads(const int8_t *q, int32_t ps, ta_i32a *d, int32_t w2, int32_t quads) {
#if TA_SIMD_NATIVE
  ta_i32a *p1 = d + w2, *p2 = d + 2 * w2, *p3 = d + 3 * w2, *const end = d + 2 * quads;
  int32_t a, b, c, e, t, u;
  if (quads > 0)
    __asm__ volatile(
        "1:\n\t"
        "ldr %[a], [%[q]]\n\t"
        "ldr %[b], [%[q], %[ps]]\n\t"
        "add %[q], %[q], %[ps], lsl #1\n\t"
        "ldr %[c], [%[q]]\n\t"
        "ldr %[e], [%[q], %[ps]]\n\t"
        "add %[q], %[q], %[ps], lsl #1\n\t"
        "pkhbt %[t], %[a], %[b], lsl #16\n\t"
        "pkhtb %[a], %[b], %[a], asr #16\n\t"
        "pkhbt %[b], %[c], %[e], lsl #16\n\t"
        "pkhtb %[c], %[e], %[c], asr #16\n\t"
        "sxtb16 %[e], %[t]\n\t"
        "sxtb16 %[u], %[b]\n\t"
        "strd %[e], %[u], [%[d]], #8\n\t"
        "sxtb16 %[e], %[t], ror #8\n\t"
        "sxtb16 %[u], %[b], ror #8\n\t"
        "strd %[e], %[u], [%[p1]], #8\n\t"
        "sxtb16 %[e], %[a]\n\t"
        "sxtb16 %[u], %[c]\n\t"
        "strd %[e], %[u], [%[p2]], #8\n\t"
        "sxtb16 %[e], %[a], ror #8\n\t"
        "sxtb16 %[u], %[c], ror #8\n\t"
        "strd %[e], %[u], [%[p3]], #8\n\t"
        "cmp %[d], %[end]\n\t"
        "bne 1b\n\t"
        : [q] "+r"(q), [d] "+r"(d), [p1] "+r"(p1), [p2] "+r"(p2), [p3] "+r"(p3), [a] "=&r"(a), [b] "=&r"(b),
          [c] "=&r"(c), [e] "=&r"(e), [t] "=&r"(t), [u] "=&r"(u)
        : [ps] "r"(ps), [end] "r"(end)
        : "cc", "memory");
#else
  int32_t a0, a1, a2, a3, b0, b1, b2, b3;
  for (; quads > 0; --quads, d += 2, q += 4 * ps) {
    widen4(q, ps, &a0, &a1, &a2, &a3);
    widen4(q + 2 * ps, ps, &b0, &b1, &b2, &b3);
    d[0] = a0, d[1] = b0, d[w2] = a1, d[w2 + 1] = b1;
    d[2 * w2] = a2, d[2 * w2 + 1] = b2, d[3 * w2] = a3, d[3 * w2 + 1] = b3;
  }
#endif
  return q;
}

TA_NOINLINE static void build_rows4(const dw_ctx *x, const int8_t *s, int16_t *d, int32_t n, int32_t pitch) {
  const int32_t in_pix_stride = x->in_pix_stride, xa = x->xa, xb = x->xb, w2 = x->width >> 1;
  const int32_t pairs = (xb - xa - (xa & 1)) >> 1, lead = xa & 1, last = (xb - xa - lead) & 1;
  const int32_t zz = (int32_t)(0x01010101u * (uint8_t)-x->p->input_offset); /* 4 zero-point bytes */
  int32_t a0, a1, a2, a3;
  for (; n > 0; --n, s += x->in_row_stride, d += pitch) {
    const int8_t *q = s;
    ta_i32a *d0 = (ta_i32a *)(void *)(d + (xa & ~1)); /* an odd xa: the word with the zero point before it */
    if (lead) {
      const int32_t a = ta_read32(q), lo = pack_lo16(zz, a), hi = pack_hi16(zz, a);
      d0[0] = ta_sxtb16(lo), d0[w2] = sxtb16_odd(lo), d0[2 * w2] = ta_sxtb16(hi), d0[3 * w2] = sxtb16_odd(hi);
      ++d0, q += in_pix_stride;
    }
    q = widen_quads(q, in_pix_stride, d0, w2, pairs >> 1);
    d0 += pairs & ~1;
    if (pairs & 1) {
      widen4(q, in_pix_stride, &a0, &a1, &a2, &a3);
      d0[0] = a0, d0[w2] = a1, d0[2 * w2] = a2, d0[3 * w2] = a3;
      ++d0, q += 2 * in_pix_stride;
    }
    if (last) { /* the last column and the zero point after it (xb < width: xb - 1 is even) */
      const int32_t a = ta_read32(q), lo = pack_lo16(a, zz), hi = pack_hi16(a, zz);
      d0[0] = ta_sxtb16(lo), d0[w2] = sxtb16_odd(lo), d0[2 * w2] = ta_sxtb16(hi), d0[3 * w2] = sxtb16_odd(hi);
    }
  }
}

TA_NOINLINE static void build_rows2(const dw_ctx *x, const int8_t *s, int16_t *d, int32_t n, int32_t pitch) {
  const int32_t in_pix_stride = x->in_pix_stride, width = x->width, xa = x->xa, xb = x->xb;
  for (; n > 0; --n, s += x->in_row_stride, d += pitch) {
    const int8_t *q = s;
    int32_t col = xa;
    if (col & 1) d[col] = q[0], d[width + col] = q[1], ++col, q += in_pix_stride;
    for (; col + 2 <= xb; col += 2, q += 2 * in_pix_stride) {
      uint16_t a, b;
      int32_t v;
      memcpy(&a, q, 2), memcpy(&b, q + in_pix_stride, 2);
      v = pack_lo16(a, b);
      ta_write32(d + col, ta_sxtb16(v));
      ta_write32(d + width + col, sxtb16_odd(v));
    }
    if (col < xb) d[col] = q[0], d[width + col] = q[1];
  }
}

TA_NOINLINE static void build_rows1(const dw_ctx *x, const int8_t *s, int16_t *d, int32_t n, int32_t pitch) {
  const int32_t in_pix_stride = x->in_pix_stride, xa = x->xa, xb = x->xb;
  for (; n > 0; --n, s += x->in_row_stride, d += pitch) {
    const int8_t *q = s;
    int32_t col = xa;
    if (col & 1) d[col++] = q[0], q += in_pix_stride;
    for (; col + 4 <= xb; col += 4, q += 4 * in_pix_stride) { /* PKHBT: the low halves of two values */
      ta_write32(d + col, pack_lo16(q[0], q[in_pix_stride]));
      ta_write32(d + col + 2, pack_lo16(q[2 * in_pix_stride], q[3 * in_pix_stride]));
    }
    for (; col + 2 <= xb; col += 2, q += 2 * in_pix_stride) ta_write32(d + col, pack_lo16(q[0], q[in_pix_stride]));
    if (col < xb) d[col] = q[0];
  }
}

/* Fill n int16 with the zero point (n even, d 4-byte aligned). */
static void fill_zp(int16_t *d, int32_t n, int32_t zp) {
  ta_i32a *w = (ta_i32a *)(void *)d, *const end = w + (n >> 1);
  const int32_t zz = ta_pair16(zp, zp);
  while (w < end) *w++ = zz;
}

/* Input rows iy .. iy+n-1 of channels c0 .. c0+g-1 into consecutive slots (g plane rows each):
 * rows outside the input are the zero point, the others are built in one run. */
void ta_dw_load_rows(const dw_ctx *x, int32_t iy, int32_t n, int32_t c0, int32_t g, int16_t *slot) {
  const ta_dwconv_params *p = x->p;
  const int32_t pitch = g * x->width;
  const int32_t above = ta_min32(n, ta_max32(0, -iy)), inside = ta_max32(0, ta_min32(n, p->in_h - iy) - above);
  const int8_t *s = x->in + (iy + above) * x->in_row_stride + c0 + (x->xa - p->pad_left) * x->in_pix_stride;
  int16_t *d = slot + above * pitch;
  fill_zp(slot, above * pitch, -p->input_offset);
  if (inside > 0) {
    if (g == 4) {
      build_rows4(x, s, d, inside, pitch);
    } else {
      if (g >= 2) build_rows2(x, s, d, inside, pitch);
      if (g & 1) build_rows1(x, s + g - 1, d + (g - 1) * x->width, inside, pitch);
    }
  }
  fill_zp(d + inside * pitch, (n - above - inside) * pitch, -p->input_offset);
}

/* The zero-point columns of the plane rows the scratch holds (rows written later only touch
 * [xa, xb), zero-point rows their whole width; a window's rows are plane rows of this layout
 * whatever its group size). */
void ta_dw_fill_borders(const dw_ctx *x) {
  const int16_t zp = (int16_t)-x->p->input_offset;
  const int32_t nrows = (int32_t)(x->budget / ((size_t)x->width * sizeof(int16_t)));
  int16_t *row = x->plane;
  int32_t r, col;
  for (r = 0; r < nrows; ++r, row += x->width) {
    for (col = 0; col < x->xa; ++col) row[col] = zp;
    for (col = x->xb; col < x->width; ++col) row[col] = zp;
  }
}
#else
/* Nothing here without the SIMD path; ISO C wants a declaration in every translation unit. */
typedef int ta_depthwise_plane_not_compiled;
#endif
