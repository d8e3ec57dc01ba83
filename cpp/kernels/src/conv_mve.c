/*
 * CONV_2D on Helium (MVE, Cortex-M55) over the model's int8 weights (see conv.c for the semantics):
 * VMLADAVA.S8 adds 16 int8 products per instruction, so the inner loop is pure int8 dot products of
 * raw input bytes with raw weights. The input offset is folded into each channel's record at
 * compile time, bias' = bias + input_offset * sum_k w[k], which is exact because every tap the
 * kernel reads outside the input reads the input zero point (x + input_offset = 0, as TFLite skips
 * it): sum (x + off) w = sum x w + off sum w. The int32 sums wrap alike in any order and TFLite's
 * accumulator is proven to fit int32 (op_params/accumulators.cpp), so the result is that integer.
 *
 * Layout TA_PACKED_MVE (ta_conv_s8_pack_weights_mve; a Helium build's packed_s8_weights): channels
 * in groups of 4 (N padded to a multiple of 4 with zero channels); per group, the K / 16 full
 * blocks as [block][channel][16 bytes], then the K % 16 remaining bytes of each channel one after
 * the other ([channel][K % 16]): as many bytes as the model's weights plus the padded channels.
 * Records (ta_conv_s8_mve_records; a Helium build's rq_records): per group of 4 channels, 4 bias',
 * 4 multipliers, 4 TFLite shifts (TA_CONV_MVE_RQ_WORDS int32 per channel).
 *
 * Per pair of output pixels (their patches read in place for a 1x1 layer whose taps are all inside,
 * else gathered as int8 into scratch with the zero point in the padding; kernel rows of at most 16
 * bytes, as in vww's and person_detect's first layers, take one predicated load and store each,
 * both pixels of a pair in one assembly loop when all their taps are inside) and per group of 4
 * channels: 2 input and 4 weight loads and 8 VMLADAVA per 16 k values (0.11 instructions per MAC),
 * the last K % 16 values under a tail predicate; then the four channels of a pixel requantize as
 * one vector (ta_mve_requantize: TFLite's double rounding with VQRDMULH and VRSHL). A 1x1 layer
 * read in place with K <= 16 runs weights-stationary instead (small_k_rows).
 */
#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "conv_mve.h"

size_t ta_conv_s8_pack_weights_mve_bytes(int32_t n, int32_t k) { return (size_t)((n + 3) & ~3) * (size_t)k; }

void ta_conv_s8_pack_weights_mve(const ta_conv_params *p, int8_t *packed) {
  const int32_t n = p->out_c, k = p->kernel_h * p->kernel_w * p->in_c, full = k & ~15;
  int32_t g, b, j, i;
  int8_t *d = packed;
  for (g = 0; g < n; g += 4) {
    for (b = 0; b < full; b += 16)
      for (j = g; j < g + 4; ++j)
        for (i = b; i < b + 16; ++i) *d++ = (int8_t)(j < n ? p->weights[(size_t)j * k + i] : 0);
    for (j = g; j < g + 4; ++j)
      for (i = full; i < k; ++i) *d++ = (int8_t)(j < n ? p->weights[(size_t)j * k + i] : 0);
  }
}

size_t ta_conv_s8_mve_records_words(int32_t n) { return (size_t)((n + 3) & ~3) * TA_CONV_MVE_RQ_WORDS; }

void ta_conv_s8_mve_records(const ta_conv_params *p, int32_t *records) {
  const int32_t n = p->out_c, k = p->kernel_h * p->kernel_w * p->in_c;
  int32_t g, j, i;
  for (g = 0; g < n; g += 4, records += 4 * TA_CONV_MVE_RQ_WORDS)
    for (j = 0; j < 4; ++j) {
      const int32_t c = g + j;
      uint32_t bias = c < n && p->bias ? (uint32_t)p->bias[c] : 0u, sum = 0;
      for (i = 0; c < n && i < k; ++i) sum += (uint32_t)(int32_t)p->weights[(size_t)c * k + i];
      bias += sum * (uint32_t)p->input_offset; /* wraps as the kernel's int32 sums do */
      records[j] = (int32_t)bias;
      records[4 + j] = c < n ? p->out_mult[c] : 0;
      records[8 + j] = c < n ? p->out_shift[c] : 0;
    }
}

#if TA_MVE
/* One 16-byte block of the 4x2 dot product: the pixels' bytes q0, q1 times the 4 channels'
 * (q2, q3 in turn, the weight pointer advanced past the block), 8 VMLADAVA. */
#define TA_MVE_DOT_BLOCK                                                                           \
  "vldrb.8 q0, [%[x0]], #16\n\t"                                                                   \
  "vldrb.8 q1, [%[x1]], #16\n\t"                                                                   \
  "vldrb.8 q2, [%[w]], #64\n\t"                                                                    \
  "vldrb.8 q3, [%[w], #-48]\n\t"                                                                   \
  "vmladava.s8 %[s00], q2, q0\n\t"                                                                 \
  "vmladava.s8 %[s01], q2, q1\n\t"                                                                 \
  "vldrb.8 q2, [%[w], #-32]\n\t"                                                                   \
  "vmladava.s8 %[s10], q3, q0\n\t"                                                                 \
  "vmladava.s8 %[s11], q3, q1\n\t"                                                                 \
  "vldrb.8 q3, [%[w], #-16]\n\t"                                                                   \
  "vmladava.s8 %[s20], q2, q0\n\t"                                                                 \
  "vmladava.s8 %[s21], q2, q1\n\t"                                                                 \
  "vmladava.s8 %[s30], q3, q0\n\t"                                                                 \
  "vmladava.s8 %[s31], q3, q1\n\t"

/* The 4 channels of group `w` (its TA_PACKED_MVE bytes) dotted with pixels x0 and x1 (K bytes
 * each), plus the group's bias' b[0..3]: *v0 (pixel 0's 4 channels), *v1 (pixel 1's). In assembly,
 * the 8 sums in the 8 even registers VMLADAVA takes: 16 instructions per 16 k values (128 MACs). */
static TA_ALWAYS_INLINE void mve_dot_4x2(const int8_t *w, const int8_t *x0, const int8_t *x1, int32_t k,
                                         const int32_t *b, int32x4_t *v0, int32x4_t *v1) {
  register int32_t s00 __asm__("r0") = b[0], s10 __asm__("r2") = b[1], s20 __asm__("r4") = b[2];
  register int32_t s30 __asm__("r6") = b[3], s01 __asm__("r8") = s00, s11 __asm__("r10") = s10;
  register int32_t s21 __asm__("r12") = s20, s31 __asm__("lr") = s30;
  const int32_t r = k & 15;
  int32x4_t u, v;
#define TA_MVE_DOT_SUMS                                                                                   \
  [s00] "+r"(s00), [s10] "+r"(s10), [s20] "+r"(s20), [s30] "+r"(s30), [s01] "+r"(s01), [s11] "+r"(s11), \
      [s21] "+r"(s21), [s31] "+r"(s31), [w] "+r"(w), [x0] "+r"(x0), [x1] "+r"(x1)
  if (k >= 16) {
    const int8_t *const end = x0 + (k - r);
    __asm__ volatile("1:\n\t" TA_MVE_DOT_BLOCK "cmp %[x0], %[end]\n\tbne 1b\n\t"
                     : TA_MVE_DOT_SUMS
                     : [end] "r"(end)
                     : "q0", "q1", "q2", "q3", "cc", "memory");
  }
#undef TA_MVE_DOT_SUMS
  if (r) { /* the last K % 16 bytes under a tail predicate: lanes past them read no memory, load 0 */
    const mve_pred16_t t = vctp8q((uint32_t)r);
    const int8x16_t y0 = vldrbq_z_s8(x0, t), y1 = vldrbq_z_s8(x1, t);
    int8x16_t wj = vldrbq_z_s8(w, t);
    s00 = vmladavaq_s8(s00, wj, y0), s01 = vmladavaq_s8(s01, wj, y1), wj = vldrbq_z_s8(w + r, t);
    s10 = vmladavaq_s8(s10, wj, y0), s11 = vmladavaq_s8(s11, wj, y1), wj = vldrbq_z_s8(w + 2 * r, t);
    s20 = vmladavaq_s8(s20, wj, y0), s21 = vmladavaq_s8(s21, wj, y1), wj = vldrbq_z_s8(w + 3 * r, t);
    s30 = vmladavaq_s8(s30, wj, y0), s31 = vmladavaq_s8(s31, wj, y1);
  }
  __asm__("vmov %q[u][2], %q[u][0], %[a], %[c]\n\tvmov %q[u][3], %q[u][1], %[b], %[d]\n\t"
          "vmov %q[v][2], %q[v][0], %[e], %[g]\n\tvmov %q[v][3], %q[v][1], %[f], %[h]"
          : [u] "=&w"(u), [v] "=w"(v)
          : [a] "r"(s00), [b] "r"(s10), [c] "r"(s20), [d] "r"(s30), [e] "r"(s01), [f] "r"(s11), [g] "r"(s21),
            [h] "r"(s31));
  *v0 = u, *v1 = v;
}

/* Group sums a (4 channels of one pixel) requantized with the group's records (multipliers at
 * ms, shifts at ms + 4) to 4 int8 lanes (each int32 lane's low byte). fast: every shift <= 0 and
 * the activation range all of int8 (ta_mve_requantize_s8; ta_mve_requantize otherwise). */
static TA_ALWAYS_INLINE int32x4_t group_out(int32x4_t a, const int32_t *ms, int32_t oo,
                                             const ta_mve_rq_range *range, int fast) {
#if !(defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING)
  if (fast) return ta_mve_requantize_s8(a, vld1q_s32(ms), vld1q_s32(ms + 4), oo);
#else
  (void)fast;
#endif
  {
    const ta_mve_rq q = ta_mve_rq_load(ms);
    (void)oo;
    return ta_mve_requantize(a, &q, range);
  }
}

/* Every channel group of the pixels whose K bytes are at x0 and x1 (x1 == x0 for a lone pixel:
 * the same outputs are written twice), outputs at o0 and o1; a last group of fewer than 4
 * channels stores under a tail predicate. */
static TA_ALWAYS_INLINE void gemm_pair(const ta_conv_params *p, const int8_t *x0, const int8_t *x1, int8_t *o0,
                                       int8_t *o1, int fast) {
  const int32_t k = p->kernel_h * p->kernel_w * p->in_c, n = p->out_c, oo = p->output_offset;
  const int32_t *rec = p->rq_records;
  const int8_t *w = p->packed_s8_weights;
  const ta_mve_rq_range range = ta_mve_rq_range_of(p->output_offset, p->act_min, p->act_max);
  int32_t g;
  for (g = 0; g + 4 <= n; g += 4, w += 4 * k, rec += 4 * TA_CONV_MVE_RQ_WORDS) {
    int32x4_t a0, a1;
    mve_dot_4x2(w, x0, x1, k, rec, &a0, &a1);
    vstrbq_s32(o1 + g, group_out(a1, rec + 4, oo, &range, fast));
    vstrbq_s32(o0 + g, group_out(a0, rec + 4, oo, &range, fast));
  }
  if (g < n) {
    const mve_pred16_t live = vctp32q((uint32_t)(n - g));
    int32x4_t a0, a1;
    mve_dot_4x2(w, x0, x1, k, rec, &a0, &a1);
    vstrbq_p_s32(o1 + g, group_out(a1, rec + 4, oo, &range, fast), live);
    vstrbq_p_s32(o0 + g, group_out(a0, rec + 4, oo, &range, fast), live);
  }
}

typedef void gemm_pair_fn(const ta_conv_params *p, const int8_t *x0, const int8_t *x1, int8_t *o0, int8_t *o1);
static TA_NOINLINE void gemm_pair_fast(const ta_conv_params *p, const int8_t *x0, const int8_t *x1, int8_t *o0,
                                       int8_t *o1) {
  gemm_pair(p, x0, x1, o0, o1, 1);
}
static TA_NOINLINE void gemm_pair_general(const ta_conv_params *p, const int8_t *x0, const int8_t *x1, int8_t *o0,
                                          int8_t *o1) {
  gemm_pair(p, x0, x1, o0, o1, 0);
}

/* gemm_pair_fast when its conditions hold for p (no channel shifts left, the range is all of int8,
 * TFLite's double rounding), else gemm_pair_general. */
static gemm_pair_fn *pick_gemm(const ta_conv_params *p) {
  int32_t g, j;
  if (p->act_min != -128 || p->act_max != 127) return gemm_pair_general;
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  return gemm_pair_general;
#endif
  for (g = 0; g < p->out_c; g += 4)
    for (j = 0; j < 4; ++j)
      if (p->rq_records[g * TA_CONV_MVE_RQ_WORDS + 8 + j] > 0) return gemm_pair_general;
  return gemm_pair_fast;
}

/* A 1x1 layer read in place with K <= 16 (a group's weights fit 4 vectors): per group of 4
 * channels its weights stay in registers while every pixel of rows [y0, y1) takes one load, 4
 * VMLADAV, the bias and the requantization -- weights-stationary, so the per-group work is not
 * paid per pixel pair (K = 8: about 20 instructions for 32 MACs). */
static TA_ALWAYS_INLINE void small_k_rows(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0,
                                          int32_t y1, int32_t in_row_step, int32_t in_pix_step, int32_t out_row_stride,
                                          int32_t out_pix_stride, int fast) {
  const int32_t k = p->in_c, n = p->out_c, oo = p->output_offset;
  const mve_pred16_t tk = vctp8q((uint32_t)k);
  const ta_mve_rq_range range = ta_mve_rq_range_of(p->output_offset, p->act_min, p->act_max);
  int32_t g, oy, ox;
  for (g = 0; g < n; g += 4) {
    const int8_t *const w = p->packed_s8_weights + g * k; /* K <= 16: channel j's bytes at j K */
    const int32_t *const rec = p->rq_records + g * TA_CONV_MVE_RQ_WORDS;
    const int8x16_t w0 = vldrbq_z_s8(w, tk), w1 = vldrbq_z_s8(w + k, tk), w2 = vldrbq_z_s8(w + 2 * k, tk),
                    w3 = vldrbq_z_s8(w + 3 * k, tk);
    const int32x4_t bias = vld1q_s32(rec);
    const mve_pred16_t live = vctp32q((uint32_t)(n - g));
    for (oy = y0; oy < y1; ++oy) {
      const int8_t *x = input + oy * in_row_step;
      int8_t *o = output + oy * out_row_stride + g;
      for (ox = 0; ox < p->out_w; ++ox, x += in_pix_step, o += out_pix_stride) {
        const int8x16_t v = vldrbq_z_s8(x, tk);
        const int32x4_t acc = vaddq_s32(
            bias, ta_mve_vec4(vmladavq_s8(w0, v), vmladavq_s8(w1, v), vmladavq_s8(w2, v), vmladavq_s8(w3, v)));
        vstrbq_p_s32(o, group_out(acc, rec + 4, oo, &range, fast), live);
      }
    }
  }
}

static TA_NOINLINE void small_k_fast(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0,
                                     int32_t y1, int32_t irs, int32_t ips, int32_t ors, int32_t ops) {
  small_k_rows(p, input, output, y0, y1, irs, ips, ors, ops, 1);
}
static TA_NOINLINE void small_k_general(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0,
                                        int32_t y1, int32_t irs, int32_t ips, int32_t ors, int32_t ops) {
  small_k_rows(p, input, output, y0, y1, irs, ips, ors, ops, 0);
}

/* n bytes from src to dst (tail-predicated 16-byte steps). */
static TA_ALWAYS_INLINE void mve_copy(int8_t *dst, const int8_t *src, int32_t n) {
  for (; n > 0; n -= 16, dst += 16, src += 16) {
    const mve_pred16_t t = vctp8q((uint32_t)n);
    vstrbq_p_s8(dst, vldrbq_z_s8(src, t), t);
  }
}
static TA_ALWAYS_INLINE void mve_fill(int8_t *dst, int8_t v, int32_t n) {
  const int8x16_t x = vdupq_n_s8(v);
  for (; n > 0; n -= 16, dst += 16) vstrbq_p_s8(dst, x, vctp8q((uint32_t)n));
}

/* What mve_im2col reads, copied once per call out of the params (the byte stores could alias
 * them, which would make every read a load after each store). */
typedef struct mve_patch_geom {
  const int8_t *input;
  int32_t irs, ips, in_h, in_w, in_c, kh, kw, sh, sw, dh, dw, pad_top, pad_left;
  int32_t row;   /* kw * in_c: the bytes of a kernel row */
  int8_t zp;     /* the input zero point: what the taps outside read */
  int dense;     /* pixels dense (ips == in_c) and no dilation across: a kernel row inside is one copy */
} mve_patch_geom;

static void mve_patch_geom_of(const ta_conv_params *p, const int8_t *input, int32_t irs, int32_t ips,
                              mve_patch_geom *g) {
  g->input = input, g->irs = irs, g->ips = ips, g->in_h = p->in_h, g->in_w = p->in_w, g->in_c = p->in_c;
  g->kh = p->kernel_h, g->kw = p->kernel_w, g->sh = p->stride_h, g->sw = p->stride_w;
  g->dh = p->dilation_h, g->dw = p->dilation_w, g->pad_top = p->pad_top, g->pad_left = p->pad_left;
  g->row = p->kernel_w * p->in_c, g->zp = (int8_t)(-p->input_offset);
  g->dense = ips == p->in_c && (p->kernel_w == 1 || p->dilation_w == 1);
}

/* The patch of a pixel (first tap at input row iy0, column ix0) of a layer whose kernel rows are
 * each one run of at most 16 bytes (g->dense, g->row <= 16): per kernel row one load predicated
 * on the bytes inside the input, the zero point selected into the others (VPSEL), one store. The
 * load's base may lie before the row (ix0 < 0): the lanes there are off and read nothing. */
static TA_NOINLINE void mve_patch_short_rows(const mve_patch_geom *g, int32_t iy0, int32_t ix0, int8_t *col) {
  const int32_t row = g->row, kh = g->kh, dh = g->dh, in_h = g->in_h, step = dh * g->irs, in_c = g->in_c;
  const int32_t lo = ix0 < 0 ? -ix0 * in_c : 0, hi = ta_clamp32((g->in_w - ix0) * in_c, 0, row);
  const mve_pred16_t t = vctp8q((uint32_t)row), in = (mve_pred16_t)(vctp8q((uint32_t)hi) & ~vctp8q((uint32_t)lo));
  const int8x16_t z = vdupq_n_s8(g->zp);
  uintptr_t src = (uintptr_t)g->input + (uintptr_t)(iy0 * g->irs + ix0 * in_c); /* wraps as the address does */
  int32_t ky, iy = iy0;
  for (ky = 0; ky < kh; ++ky, col += row, src += (uintptr_t)step, iy += dh)
    vstrbq_p_s8(col, iy < 0 || iy >= in_h ? z : vpselq_s8(vldrbq_z_s8((const int8_t *)src, in), z, in), t);
}

/* Output pixel (oy, ox)'s patch as K int8 into col, taps outside the input = the zero point; a
 * kernel row inside the input (dense pixels, no dilation across) is one copy; kernel rows of at
 * most 16 bytes take mve_patch_short_rows. */
static void mve_im2col(const mve_patch_geom *g, int32_t oy, int32_t ox, int8_t *col) {
  const int32_t iy0 = oy * g->sh - g->pad_top, ix0 = ox * g->sw - g->pad_left;
  const int dense_row = g->dense && ix0 >= 0 && ix0 + (g->kw - 1) * g->dw < g->in_w;
  int32_t ky, kx;
  if (g->dense && g->row <= 16) {
    mve_patch_short_rows(g, iy0, ix0, col);
    return;
  }
  {
    const int32_t in_c = g->in_c, kw = g->kw, row = g->row, kh = g->kh, dh = g->dh, in_h = g->in_h;
    const int32_t irs = g->irs, ips = g->ips, dw = g->dw, in_w = g->in_w;
    const int8_t zp = g->zp;
    for (ky = 0; ky < kh; ++ky, col += row) {
      const int32_t iy = iy0 + ky * dh;
      const int8_t *const src = g->input + iy * irs;
      if (iy < 0 || iy >= in_h) {
        mve_fill(col, zp, row);
      } else if (dense_row) {
        mve_copy(col, src + ix0 * in_c, row);
      } else {
        for (kx = 0; kx < kw; ++kx) {
          const int32_t ix = ix0 + kx * dw;
          if (ix < 0 || ix >= in_w) mve_fill(col + kx * in_c, zp, in_c);
          else mve_copy(col + kx * in_c, src + ix * ips, in_c);
        }
      }
    }
  }
}

/* The patches of output pixels (oy, ox0) and (oy, ox1) of one row into col0 and col1, for a
 * layer whose kernel rows are single runs of at most 16 bytes (g->short_rows), when all their taps
 * are inside the input: per kernel row two predicated loads and stores, 12 instructions a row for
 * the pair in assembly (VPR kept: the compiler may hold a predicate there). 0 when the taps are
 * not all inside (nothing written). */
static TA_NOINLINE int mve_patch_pair_inside(const mve_patch_geom *g, int32_t oy, int32_t ox0, int32_t ox1,
                                             int8_t *col0, int8_t *col1) {
  const int32_t iy0 = oy * g->sh - g->pad_top, ix0 = ox0 * g->sw - g->pad_left, ix1 = ox1 * g->sw - g->pad_left;
  const int32_t row = g->row, step = g->dh * g->irs;
  const int8_t *s0, *s1;
  int32_t n = g->kh, vpr;
  if (iy0 < 0 || iy0 + (n - 1) * g->dh >= g->in_h || ix0 < 0 || ix1 + (g->kw - 1) * g->dw >= g->in_w) return 0;
  s0 = g->input + iy0 * g->irs + ix0 * g->in_c, s1 = s0 + (ix1 - ix0) * g->in_c;
  __asm__ volatile("vmrs %[vpr], p0\n\tvctp.8 %[row]\n\t"
                   "1:\n\tvpstt\n\tvldrbt.8 q0, [%[s0]]\n\tvstrbt.8 q0, [%[c0]]\n\t"
                   "vpstt\n\tvldrbt.8 q1, [%[s1]]\n\tvstrbt.8 q1, [%[c1]]\n\t"
                   "add %[s0], %[s0], %[step]\n\tadd %[s1], %[s1], %[step]\n\t"
                   "add %[c0], %[c0], %[row]\n\tadd %[c1], %[c1], %[row]\n\tsubs %[n], %[n], #1\n\tbne 1b\n\t"
                   "vmsr p0, %[vpr]"
                   : [s0] "+r"(s0), [s1] "+r"(s1), [c0] "+r"(col0), [c1] "+r"(col1), [n] "+r"(n), [vpr] "=&r"(vpr)
                   : [row] "r"(row), [step] "r"(step)
                   : "q0", "q1", "cc", "memory");
  return 1;
}

void ta_conv_s8_mve(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                    int8_t *col) {
  const int32_t in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, p->in_c);
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, p->in_w * in_pix_stride);
  const int32_t out_pix_stride = TA_OR_DEFAULT(p->out_pix_stride, p->out_c);
  const int32_t out_row_stride = TA_OR_DEFAULT(p->out_row_stride, p->out_w * out_pix_stride);
  const int32_t out_w = p->out_w, k = p->kernel_h * p->kernel_w * p->in_c;
  /* a 1x1 layer whose taps are all inside the input reads each pixel's channels in place */
  const int in_place = p->kernel_h == 1 && p->kernel_w == 1 && p->pad_top == 0 && p->pad_left == 0 &&
                       (p->out_h - 1) * p->stride_h < p->in_h && (out_w - 1) * p->stride_w < p->in_w;
  const int32_t last = y1 * out_w - 1;
  gemm_pair_fn *const gemm = pick_gemm(p);
  mve_patch_geom g;
  int32_t i;
  int short_rows;
  if (in_place && k <= 16) {
    (gemm == gemm_pair_fast ? small_k_fast : small_k_general)(p, input, output, y0, y1, p->stride_h * in_row_stride,
                                                              p->stride_w * in_pix_stride, out_row_stride,
                                                              out_pix_stride);
    return;
  }
  mve_patch_geom_of(p, input, in_row_stride, in_pix_stride, &g);
  short_rows = g.dense && g.row <= 16;
  for (i = y0 * out_w; i <= last; i += 2) {
    const int32_t j = i < last ? i + 1 : i; /* a lone last pixel: both slots */
    const int32_t oy0 = i / out_w, ox0 = i % out_w, oy1 = j / out_w, ox1 = j % out_w;
    const int8_t *x0, *x1;
    if (in_place) {
      x0 = input + oy0 * p->stride_h * in_row_stride + ox0 * p->stride_w * in_pix_stride;
      x1 = input + oy1 * p->stride_h * in_row_stride + ox1 * p->stride_w * in_pix_stride;
    } else {
      if (!(short_rows && j != i && oy0 == oy1 && mve_patch_pair_inside(&g, oy0, ox0, ox1, col, col + k))) {
        mve_im2col(&g, oy0, ox0, col);
        if (j != i) mve_im2col(&g, oy1, ox1, col + k);
      }
      x0 = col, x1 = j != i ? col + k : col;
    }
    gemm(p, x0, x1, output + oy0 * out_row_stride + ox0 * out_pix_stride,
                  output + oy1 * out_row_stride + ox1 * out_pix_stride);
  }
}
#endif
