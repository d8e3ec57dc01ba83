/*
 * CONV_2D, the SIMD paths' column buffer (conv_simd.c: int16 weights, 2 pixel slots;
 * conv_s8w.c: int8 weights, 4 slots): each output pixel's input patch widened to int16 with the
 * input offset added (padding = 0) -- doubled, 2 (x + offset), where the layer's int8 weights are
 * not -- in GEMM word order (ta_simd.h: one load and two SXTB16 per 4 values), the slots of a
 * word side by side so that one LDRD gives that word of two pixels.
 * Invariant: slot s of a column holds value k of its pixel's patch at int16
 * ta_col_index(k, s, ns); values past K are never read against a non-zero weight.
 */
#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "conv_simd.h"

#if TA_SIMD
/* A widened word (two int16 values x) as the column holds it: x + offset, doubled when dbl. */
TA_INLINE int32_t col_word(int32_t x, int32_t off2, int32_t dbl) {
  const int32_t v = ta_sadd16(x, off2);
  return dbl ? ta_sadd16(v, v) : v;
}

/* Value k+1 of a slot sits this many int16 after value k, by k % 4 (ns slots: 2 ns, 1 - 2 ns, 2 ns,
 * 2 ns - 1). */
TA_INLINE int32_t next_value_step(int32_t k, int32_t ns) {
  static const int8_t base[4] = {0, 1, 0, -1}, sign[4] = {1, -1, 1, 1};
  return 2 * ns * sign[k & 3] + base[k & 3];
}

#if TA_SIMD_NATIVE && defined(__OPTIMIZE__)
/* The aligned loops of widen_span and ta_conv_widen_pair in assembly: SXTAB16 adds the offset
 * while it widens (and rotates), a doubled column adds each word to itself; ns (2 or 4) fixes the
 * byte distance of a slot's consecutive words (GAP = 4 ns) in the STR/STRD immediates. */
#define TA_COL_DOUBLE(X) "sadd16 %[" X "], %[" X "], %[" X "]\n\t"
#define TA_WIDEN_PAIR_LOOP(GAP, DBL_A, DBL_B)                                                            \
  __asm__ volatile("1:\n\t"                                                                            \
                   "ldr %[r0], [%[s0]], #4\n\t"                                                        \
                   "ldr %[r1], [%[s1]], #4\n\t"                                                        \
                   "sxtab16 %[a], %[off], %[r0]\n\t"                                                   \
                   "sxtab16 %[b], %[off], %[r1]\n\t" DBL_A DBL_B                                       \
                   "strd %[a], %[b], [%[d]], #" GAP "\n\t"                                             \
                   "sxtab16 %[a], %[off], %[r0], ror #8\n\t"                                           \
                   "sxtab16 %[b], %[off], %[r1], ror #8\n\t" DBL_A DBL_B                               \
                   "strd %[a], %[b], [%[d]], #" GAP "\n\t"                                             \
                   "cmp %[s0], %[end]\n\t"                                                             \
                   "bne 1b\n\t"                                                                        \
                   : [s0] "+r"(s0), [s1] "+r"(s1), [d] "+r"(d), [r0] "=&r"(r0), [r1] "=&r"(r1),           \
                     [a] "=&r"(a), [b] "=&r"(b)                                                          \
                   : [off] "r"(off2), [end] "r"(end)                                                     \
                   : "cc", "memory")
#define TA_WIDEN_SPAN_LOOP(GAP, STEP, DBL_A, DBL_B)                                                      \
  __asm__ volatile("1:\n\t"                                                                            \
                   "ldr %[r0], [%[s]], #4\n\t"                                                         \
                   "sxtab16 %[a], %[off], %[r0]\n\t"                                                   \
                   "sxtab16 %[b], %[off], %[r0], ror #8\n\t" DBL_A DBL_B                               \
                   "str %[b], [%[d], #" GAP "]\n\t"                                                    \
                   "str %[a], [%[d]], #" STEP "\n\t"                                                   \
                   "cmp %[s], %[end]\n\t"                                                              \
                   "bne 1b\n\t"                                                                        \
                   : [s] "+r"(s), [d] "+r"(d), [r0] "=&r"(r0), [a] "=&r"(a), [b] "=&r"(b)                \
                   : [off] "r"(off2), [end] "r"(end)                                                     \
                   : "cc", "memory")

/* n (a multiple of 4, > 0) values of the 4 pixels s0 + j step into slots 0..3 of d (4 slots, doubled):
 * per 4 values of the 4 pixels 4 LDR, 8 SXTAB16, 8 SADD16, 4 STRD (pixels 0, 1 from a, 2, 3 from b). */
static void widen_quad_doubled_asm(const int8_t *s0, int32_t step, int32_t n, ta_i32a *d, int32_t off2) {
  const int8_t *a_src = s0, *b_src = s0 + 2 * step;
  const int8_t *const end = s0 + n;
  int32_t r0, r1, a, b;
  __asm__ volatile("1:\n\t"
                   "ldr %[r1], [%[sb], %[step]]\n\t"
                   "ldr %[r0], [%[sb]], #4\n\t"
                   "sxtab16 %[a], %[off], %[r0]\n\t"
                   "sxtab16 %[b], %[off], %[r1]\n\t" TA_COL_DOUBLE("a") TA_COL_DOUBLE("b")
                   "strd %[a], %[b], [%[d], #8]\n\t"
                   "sxtab16 %[a], %[off], %[r0], ror #8\n\t"
                   "sxtab16 %[b], %[off], %[r1], ror #8\n\t" TA_COL_DOUBLE("a") TA_COL_DOUBLE("b")
                   "strd %[a], %[b], [%[d], #24]\n\t"
                   "ldr %[r1], [%[sa], %[step]]\n\t"
                   "ldr %[r0], [%[sa]], #4\n\t"
                   "sxtab16 %[a], %[off], %[r0], ror #8\n\t"
                   "sxtab16 %[b], %[off], %[r1], ror #8\n\t" TA_COL_DOUBLE("a") TA_COL_DOUBLE("b")
                   "strd %[a], %[b], [%[d], #16]\n\t"
                   "sxtab16 %[a], %[off], %[r0]\n\t"
                   "sxtab16 %[b], %[off], %[r1]\n\t" TA_COL_DOUBLE("a") TA_COL_DOUBLE("b")
                   "strd %[a], %[b], [%[d]], #32\n\t"
                   "cmp %[sa], %[end]\n\t"
                   "bne 1b\n\t"
                   : [sa] "+r"(a_src), [sb] "+r"(b_src), [d] "+r"(d), [r0] "=&r"(r0), [r1] "=&r"(r1), [a] "=&r"(a),
                     [b] "=&r"(b)
                   : [off] "r"(off2), [end] "r"(end), [step] "r"(step)
                   : "cc", "memory");
}

/* n (a multiple of 4, > 0) values of s0 and s1 into the adjacent words of d (ns slots a group). */
static void widen_pair_asm(const int8_t *s0, const int8_t *s1, int32_t n, ta_i32a *d, int32_t off2, int32_t ns,
                           int32_t dbl) {
  const int8_t *const end = s0 + n;
  int32_t r0, r1, a, b;
  if (ns == TA_COL_SLOTS_S8 && dbl)
    TA_WIDEN_PAIR_LOOP("16", TA_COL_DOUBLE("a"), TA_COL_DOUBLE("b"));
  else if (ns == TA_COL_SLOTS_S8)
    TA_WIDEN_PAIR_LOOP("16", "", "");
  else if (dbl)
    TA_WIDEN_PAIR_LOOP("8", TA_COL_DOUBLE("a"), TA_COL_DOUBLE("b"));
  else
    TA_WIDEN_PAIR_LOOP("8", "", "");
}

/* n (a multiple of 4, > 0) values of s into one slot from its word d on. */
static void widen_run_asm(const int8_t *s, int32_t n, int16_t *col_word, int32_t off2, int32_t ns, int32_t dbl) {
  const int8_t *const end = s + n;
  int16_t *d = col_word;
  int32_t r0, a, b;
  if (ns == TA_COL_SLOTS_S8 && dbl)
    TA_WIDEN_SPAN_LOOP("16", "32", TA_COL_DOUBLE("a"), TA_COL_DOUBLE("b"));
  else if (ns == TA_COL_SLOTS_S8)
    TA_WIDEN_SPAN_LOOP("16", "32", "", "");
  else if (dbl)
    TA_WIDEN_SPAN_LOOP("8", "16", TA_COL_DOUBLE("a"), TA_COL_DOUBLE("b"));
  else
    TA_WIDEN_SPAN_LOOP("8", "16", "", "");
}
#define TA_WIDEN_ASM 1
#else
#define TA_WIDEN_ASM 0
#endif

/* Scalar part of widen_span: n values from k on (s == NULL: zeros). */
static int32_t widen_values(const int8_t *s, int32_t n, int16_t *col, int32_t k, int32_t slot, const ta_col_geom *g) {
  int16_t *d = col + ta_col_index(k, slot, g->ns);
  const int32_t scale = g->dbl ? 2 : 1;
  for (; n > 0; --n, ++k) {
    *d = (int16_t)(s ? (*s++ + g->input_offset) * scale : 0);
    d += next_value_step(k, g->ns);
  }
  return k;
}

/* Writes n values (x + offset, or 0 where `s` is NULL: padding) at k, k+1, ... of a slot;
 * returns k + n. Groups of 4 aligned values take one load and two SXTB16 per 4. */
static int32_t widen_span(const int8_t *s, int32_t n, int16_t *col, int32_t k, int32_t slot, const ta_col_geom *g) {
  const int32_t off2 = ta_pair16(g->input_offset, g->input_offset), dbl = g->dbl, w = 2 * g->ns; /* w: int16 per word */
  int16_t *d;
  if (k & 3) {
    const int32_t head = ta_min32(n, 4 - (k & 3));
    k = widen_values(s, head, col, k, slot, g);
    n -= head;
    s = s ? s + head : s;
  }
  d = col + ta_col_index(k, slot, g->ns);
  if (!s) {
    for (; n >= 4; n -= 4, k += 4, d += 2 * w) ta_write32(d, 0), ta_write32(d + w, 0);
  } else if (TA_WIDEN_ASM && n >= 4) {
#if TA_WIDEN_ASM
    const int32_t run = n & ~3;
    widen_run_asm(s, run, d, off2, g->ns, dbl);
    n -= run, k += run, s += run;
#endif
  } else {
    for (; n >= 8; n -= 8, k += 8, s += 8, d += 4 * w) {
      const int32_t r0 = ta_read32(s), r1 = ta_read32(s + 4);
      ta_write32(d, col_word(ta_sxtb16(r0), off2, dbl));
      ta_write32(d + w, col_word(ta_sxtb16_ror8(r0), off2, dbl));
      ta_write32(d + 2 * w, col_word(ta_sxtb16(r1), off2, dbl));
      ta_write32(d + 3 * w, col_word(ta_sxtb16_ror8(r1), off2, dbl));
    }
    if (n >= 4) {
      const int32_t r0 = ta_read32(s);
      ta_write32(d, col_word(ta_sxtb16(r0), off2, dbl));
      ta_write32(d + w, col_word(ta_sxtb16_ror8(r0), off2, dbl));
      n -= 4, k += 4, s += 4;
    }
  }
  return n > 0 ? widen_values(s, n, col, k, slot, g) : k;
}

/* n bytes from s to d / n copies of fill at d, a word at a time: written out so that compilers
 * do not turn these short runs into memcpy/memset calls. Both return d + n. */
TA_INLINE int8_t *copy_bytes(int8_t *d, const int8_t *s, int32_t n) {
  for (; n >= 4; n -= 4, d += 4, s += 4) ta_write32(d, ta_read32(s));
  for (; n > 0; --n) *d++ = *s++;
  return d;
}
TA_INLINE int8_t *fill_bytes(int8_t *d, int32_t n, int8_t fill) {
  const int32_t fill4 = (int32_t)((uint32_t)(uint8_t)fill * 0x01010101u);
  for (; n >= 4; n -= 4, d += 4) ta_write32(d, fill4);
  for (; n > 0; --n) *d++ = fill;
  return d;
}

/* One kernel row of a patch (input row iy, in-bounds taps kx in [kx0, kx1)) as bytes at d:
 * the input zero point where a tap is outside the input, so that x + offset is 0 there. */
static int8_t *patch_row(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g, int32_t iy, int32_t ix0,
                         int32_t kx0, int32_t kx1, int8_t *d) {
  const int32_t in_c = p->in_c, kw = p->kernel_w, dw = p->dilation_w;
  const int8_t zp = (int8_t)-p->input_offset;
  int32_t kx;
  if (iy < 0 || iy >= p->in_h) return fill_bytes(d, kw * in_c, zp);
  d = fill_bytes(d, kx0 * in_c, zp);
  for (kx = kx0; kx < kx1; ++kx)
    d = copy_bytes(d, input + iy * g->in_row_stride + (ix0 + kx * dw) * g->in_pix_stride, in_c);
  return fill_bytes(d, (kw - kx1) * in_c, zp);
}

/* The taps of output column ox inside the input: kx in [*kx0, *kx1); returns the column of tap 0. */
static int32_t tap_range(const ta_conv_params *p, int32_t ox, int32_t *kx0, int32_t *kx1) {
  const int32_t kw = p->kernel_w, dw = p->dilation_w, ix0 = ox * p->stride_w - p->pad_left;
  int32_t a = 0, b = kw;
  while (a < kw && ix0 + a * dw < 0) ++a;
  while (b > a && ix0 + (b - 1) * dw >= p->in_w) --b;
  *kx0 = a, *kx1 = b;
  return ix0;
}

/* The patch of output pixel (oy, ox) gathered as bytes at `patch` (word-aligned, at least
 * TA_SMALL_PATCH bytes), the input zero point outside the input and up to a multiple of 4 (those
 * values meet zero weights, so the widening has no scalar tail); returns its length. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns"))) /* keep the short copies inline */
#endif
static int32_t gather_patch(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g, int32_t oy, int32_t ox,
                            int8_t *patch) {
  const int32_t kh = p->kernel_h, kw = p->kernel_w, dh = p->dilation_h, iy0 = oy * p->stride_h - p->pad_top;
  int32_t kx0, kx1, ky;
  const int32_t ix0 = tap_range(p, ox, &kx0, &kx1);
  int8_t *d = patch;
  if (g->in_pix_stride == p->in_c && p->dilation_w == 1 && kx0 == 0 && kx1 == kw && iy0 >= 0 &&
      iy0 + (kh - 1) * dh < p->in_h) {
    /* inside the input, dense pixels: kernel_h runs of kernel_w * in_c bytes */
    const int8_t *src = input + iy0 * g->in_row_stride + ix0 * g->in_pix_stride;
    for (ky = 0; ky < kh; ++ky, src += dh * g->in_row_stride) d = copy_bytes(d, src, kw * p->in_c);
  } else {
    for (ky = 0; ky < kh; ++ky) d = patch_row(p, input, g, iy0 + ky * dh, ix0, kx0, kx1, d);
  }
  d = fill_bytes(d, (int32_t)(-(d - patch) & 3), (int8_t)-p->input_offset);
  return (int32_t)(d - patch);
}

/* The small patch of an output pixel whose taps all lie inside the input with whole words of
 * each kernel row's run (kernel_w * in_c bytes) inside the input row, dense pixels, no x dilation:
 * kernel_h runs copied a word at a time (each run's extra bytes are overwritten by the next, the
 * last run's meet zero weights past K; kq - 4 .. kq zeroed first so no byte is left unset). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns"))) /* keep the short copies inline */
#endif
static void gather_inside(const int8_t *src, int32_t row_step, int32_t kh, int32_t run, int32_t kq, int8_t *patch) {
  const int32_t run4 = (run + 3) & ~3;
  int8_t *d = patch;
  ta_write32(patch + kq - 4, 0);
  if (run4 == 12) { /* 3 x 3 kernels on 3 channels (first layers): three words a row */
    for (; kh > 0; --kh, src += row_step, d += run) {
      const int32_t w0 = ta_read32(src), w1 = ta_read32(src + 4), w2 = ta_read32(src + 8);
      ta_write32(d, w0), ta_write32(d + 4, w1), ta_write32(d + 8, w2);
    }
    return;
  }
  for (; kh > 0; --kh, src += row_step, d += run) {
    const int8_t *s = src, *const end = src + run4;
    int8_t *q = d;
    for (; s < end; s += 4, q += 4) ta_write32(q, ta_read32(s));
  }
}

/* Whether output pixel (oy, ox)'s patch can take gather_inside. */
TA_INLINE int patch_inside(const ta_conv_params *p, int32_t in_pix_stride, int32_t oy, int32_t ox) {
  const int32_t iy0 = oy * p->stride_h - p->pad_top, ix0 = ox * p->stride_w - p->pad_left;
  const int32_t run4 = (p->kernel_w * p->in_c + 3) & ~3;
  return iy0 >= 0 && iy0 + (p->kernel_h - 1) * p->dilation_h < p->in_h && ix0 >= 0 &&
         ix0 * in_pix_stride + run4 <= p->in_w * in_pix_stride;
}

/* A small patch gathered as bytes, then widened into slot `slot`; out of line, so that its
 * buffer is not on the stack below im2col_pixel's other calls. */
static TA_NOINLINE void small_patch_pixel(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g,
                                          int32_t oy, int32_t ox, int16_t *col, int32_t slot) {
  int32_t patch[TA_SMALL_PATCH / 4];
  widen_span((const int8_t *)patch, gather_patch(p, input, g, oy, ox, (int8_t *)patch), col, 0, slot, g);
}

void ta_conv_im2col_pixel(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g, int32_t oy, int32_t ox,
                          int16_t *col, int32_t slot) {
  const int32_t in_c = p->in_c, kw = p->kernel_w, dw = p->dilation_w;
  const int32_t iy0 = oy * p->stride_h - p->pad_top;
  const int dense_x = g->in_pix_stride == in_c && dw == 1;
  int32_t kx0, kx1, k = 0, ky, kx;
  const int32_t ix0 = tap_range(p, ox, &kx0, &kx1);
  if (p->kernel_h == 1 && kw == 1) { /* pointwise: one span or one padding tap */
    const int inside = iy0 >= 0 && iy0 < p->in_h && ix0 >= 0 && ix0 < p->in_w;
    widen_span(inside ? input + iy0 * g->in_row_stride + ix0 * g->in_pix_stride : NULL, in_c, col, 0, slot, g);
    return;
  }
  if (p->kernel_h * kw * in_c <= TA_SMALL_PATCH) {
    small_patch_pixel(p, input, g, oy, ox, col, slot);
    return;
  }
  for (ky = 0; ky < p->kernel_h; ++ky) {
    const int32_t iy = iy0 + ky * p->dilation_h;
    const int8_t *row;
    if (iy < 0 || iy >= p->in_h) {
      k = widen_span(NULL, kw * in_c, col, k, slot, g);
      continue;
    }
    row = input + iy * g->in_row_stride;
    if (kx0 > 0) k = widen_span(NULL, kx0 * in_c, col, k, slot, g);
    if (dense_x) {
      k = widen_span(row + (ix0 + kx0) * g->in_pix_stride, (kx1 - kx0) * in_c, col, k, slot, g);
    } else {
      for (kx = kx0; kx < kx1; ++kx) k = widen_span(row + (ix0 + kx * dw) * g->in_pix_stride, in_c, col, k, slot, g);
    }
    if (kx1 < kw) k = widen_span(NULL, (kw - kx1) * in_c, col, k, slot, g);
  }
}

void ta_conv_widen_pair(const int8_t *s0, const int8_t *s1, int32_t n, int16_t *col, int32_t slot,
                        const ta_col_geom *g) {
  const int32_t off2 = ta_pair16(g->input_offset, g->input_offset), dbl = g->dbl, ns = g->ns;
  ta_i32a *d = (ta_i32a *)col + slot;
#if TA_WIDEN_ASM
  if (n > 0) widen_pair_asm(s0, s1, n, d, off2, ns, dbl);
#else
  const int8_t *const end = s0 + n;
  for (; s0 < end; s0 += 4, s1 += 4, d += 2 * ns) {
    const int32_t r0 = ta_read32(s0), r1 = ta_read32(s1);
    d[0] = col_word(ta_sxtb16(r0), off2, dbl);
    d[1] = col_word(ta_sxtb16(r1), off2, dbl);
    d[ns] = col_word(ta_sxtb16_ror8(r0), off2, dbl);
    d[ns + 1] = col_word(ta_sxtb16_ror8(r1), off2, dbl);
  }
#endif
}

void ta_conv_widen_quad(const int8_t *s0, int32_t step, int32_t n, int16_t *col, const ta_col_geom *g) {
#if TA_WIDEN_ASM
  if (g->dbl && g->ns == TA_COL_SLOTS_S8) {
    widen_quad_doubled_asm(s0, step, n, (ta_i32a *)col, ta_pair16(g->input_offset, g->input_offset));
    return;
  }
#endif
  ta_conv_widen_pair(s0, s0 + step, n, col, 0, g);
  ta_conv_widen_pair(s0 + 2 * step, s0 + 3 * step, n, col, 2, g);
}

/* Bytes between the gathered patches of gather_patches (gather_inside writes up to 3 bytes past K). */
#define TA_PATCH_BYTES (TA_SMALL_PATCH + 4)

/* The small patches of the n pixels (py[j], px[j]) as bytes at patches + j TA_PATCH_BYTES. Pixels
 * of one row whose first and last patches are inside the input have every patch inside. */
static void gather_patches(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g, int32_t n,
                           const int32_t py[], const int32_t px[], int8_t *patches) {
  const int32_t kq = (p->kernel_h * p->kernel_w * p->in_c + 3) & ~3;
  const int dense_runs = g->in_pix_stride == p->in_c && p->dilation_w == 1; /* a kernel row's taps: one run */
  const int32_t step = p->dilation_h * g->in_row_stride, run = p->kernel_w * p->in_c;
  int32_t j;
  if (dense_runs && py[0] == py[n - 1] && px[n - 1] == px[0] + n - 1 && patch_inside(p, g->in_pix_stride, py[0], px[0]) &&
      patch_inside(p, g->in_pix_stride, py[n - 1], px[n - 1])) {
    const int32_t pixel_step = p->stride_w * g->in_pix_stride;
    const int8_t *src = input + (py[0] * p->stride_h - p->pad_top) * g->in_row_stride +
                        (px[0] * p->stride_w - p->pad_left) * g->in_pix_stride;
    for (j = 0; j < n; ++j, src += pixel_step) gather_inside(src, step, p->kernel_h, run, kq, patches + j * TA_PATCH_BYTES);
    return;
  }
  for (j = 0; j < n; ++j) {
    int8_t *const d = patches + j * TA_PATCH_BYTES;
    if (dense_runs && patch_inside(p, g->in_pix_stride, py[j], px[j]))
      gather_inside(input + (py[j] * p->stride_h - p->pad_top) * g->in_row_stride +
                        (px[j] * p->stride_w - p->pad_left) * g->in_pix_stride,
                    step, p->kernel_h, run, kq, d);
    else
      gather_patch(p, input, g, py[j], px[j], d);
  }
}

void ta_conv_small_patch_pair(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g, int32_t oy,
                              int32_t ox, int32_t oy1, int32_t ox1, int16_t *col, int32_t slot) {
  int32_t patches[2 * TA_PATCH_BYTES / 4];
  const int32_t py[2] = {oy, oy1}, px[2] = {ox, ox1};
  gather_patches(p, input, g, 2, py, px, (int8_t *)patches);
  ta_conv_widen_pair((const int8_t *)patches, (const int8_t *)patches + TA_PATCH_BYTES,
                     (p->kernel_h * p->kernel_w * p->in_c + 3) & ~3, col, slot, g);
}

void ta_conv_small_patch_quad(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g, const int32_t py[4],
                              const int32_t px[4], int16_t *col) {
  int32_t patches[4 * TA_PATCH_BYTES / 4];
  gather_patches(p, input, g, 4, py, px, (int8_t *)patches);
  ta_conv_widen_quad((const int8_t *)patches, TA_PATCH_BYTES, (p->kernel_h * p->kernel_w * p->in_c + 3) & ~3, col, g);
}
#else
/* Nothing here without the SIMD path; ISO C wants a declaration in every translation unit. */
typedef int ta_conv_im2col_not_compiled;
#endif
