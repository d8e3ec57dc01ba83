/*
 * DEPTHWISE_CONV_2D, the SIMD row kernels of 5x5 and 7x7 kernels, stride 1 or 2 (any stride_h),
 * dilation 1, for channels on the doubled accumulator (dw_job.fast): four outputs of a row per
 * pass, so each plane word loaded feeds two (stride 1) or up to four (stride 2) SMLADs and each
 * weight word four. With plane words A_i = (x_2i, x_2i+1) of a kernel row from the block's first
 * column, packed weight words W_m = (w_2m, w_2m+1) (the last, W_h, is (w_K-1, 0); h = (K-1)/2):
 *   stride 1: out0 = sum_m SMLAD(A_m, W_m), out2 = the same on A_m+1;
 *             out1 = SMLATB(A_0, W_0) + sum_{m=1..h} SMLADX(A_m, Z_m), Z_m = (w_2m, w_2m-1),
 *             out3 = the same on A_1 and A_m+1 -- 2(K+1) multiplies for 4K MACs;
 *   stride 2: out_i = sum_m SMLAD(A_i+m, W_m) -- 4(h+1) multiplies for 4K MACs.
 * A row's last 1-3 outputs take one output at a time (unaligned pair loads for stride 1).
 * Reads stay inside the plane row (plane_width): a block's last word ends at column x + K + 2
 * (stride 1) or 2x + K + 6 (stride 2), both below the width for x <= out_w - 4.
 * Invariant: the bytes of dw_generic_rows (depthwise_simd.c) and so of the portable path.
 */
#include <stddef.h>

#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "depthwise_simd.h"

#if TA_SIMD
/* (lo half of w, hi half of v): PKHBT with no shift. */
#if TA_SIMD_NATIVE
TA_INLINE int32_t lo_hi(int32_t w, int32_t v) {
  int32_t r;
  __asm__("pkhbt %0, %1, %2" : "=r"(r) : "r"(w), "r"(v));
  return r;
}
#else
TA_INLINE int32_t lo_hi(int32_t w, int32_t v) { return (int32_t)(((uint32_t)w & 0xFFFFu) | ((uint32_t)v & 0xFFFF0000u)); }
#endif

/* A job's requantization constants, held in registers across a row (stores of int8 outputs
 * could otherwise alias the job). */
typedef struct wide_rq {
  int32_t m, c, r, oo, lo, hi;
} wide_rq;

/* ta_rqd of a doubled accumulator into int8, for a job with the output offset folded (oo 0)
 * and all of int8 as the range: ADD, SMMLAR, ASR, SSAT. */
TA_INLINE int8_t wide_requant(const wide_rq *q, int32_t acc) {
  return (int8_t)ta_ssat8(ta_smmlar(acc, q->m, q->c + (acc >> 31)) >> q->r);
}
/* The same for any job: the output offset after the shift, then the activation range. */
TA_INLINE int8_t wide_clamped(const wide_rq *q, int32_t acc) {
  const int32_t v = ta_ssat8((ta_smmlar(acc, q->m, q->c + (acc >> 31)) >> q->r) + q->oo);
  return (int8_t)(v < q->lo ? q->lo : v > q->hi ? q->hi : v);
}

/* One output whose window starts at plane value a (any alignment): h + 1 SMLADs per kernel row. */
TA_INLINE int32_t wide_one(const int16_t *a, const ta_i32a *w, int32_t kh, int32_t h, int32_t kstep, int32_t acc) {
  int32_t ky, m;
  for (ky = 0; ky < kh; ++ky, a += kstep, w += h + 1)
    for (m = 0; m <= h; ++m) acc = ta_smlad(ta_read32(a + 2 * m), w[m], acc);
  return acc;
}

/* Two outputs whose windows start at a and a + delta: each weight word loaded once for both. */
TA_INLINE void wide_two(const int16_t *a, int32_t delta, const ta_i32a *w, int32_t kh, int32_t h, int32_t kstep,
                        int32_t *s0, int32_t *s1) {
  int32_t ky, m, acc0 = *s0, acc1 = *s1;
  for (ky = 0; ky < kh; ++ky, a += kstep, w += h + 1)
    for (m = 0; m <= h; ++m) {
      const int32_t wm = w[m];
      acc0 = ta_smlad(ta_read32(a + 2 * m), wm, acc0), acc1 = ta_smlad(ta_read32(a + delta + 2 * m), wm, acc1);
    }
  *s0 = acc0, *s1 = acc1;
}

#if TA_SIMD_NATIVE
/* Four outputs in DSP assembly, all K kernel rows in one block: per row the file comment's sums
 * (loads paired with LDRD), then the row pointer r steps kstep bytes and the weights w one row.
 * Accumulators s0..s3, data words in a, b, c, weights in w0, w1, z: 13 registers. */
#define WIDE_STEP(WBYTES) "add %[r], %[r], %[k]\n\tadd %[w], %[w], #" #WBYTES "\n\t"
/* stride 1, K = 5: A0..A3, W0..W2, Z_m = PKHBT(W_m, W_m-1); K = 7 adds A4, W3. */
#define WIDE_S1_ROW5                                                                                           \
  "ldrd %[a], %[b], [%[r]]\n\t"                                                                                \
  "ldrd %[w0], %[w1], [%[w]]\n\t"                                                                              \
  "smlad %[s0], %[a], %[w0], %[s0]\n\t"                                                                        \
  "smlatb %[s1], %[a], %[w0], %[s1]\n\t"                                                                       \
  "smlad %[s2], %[b], %[w0], %[s2]\n\t"                                                                        \
  "smlatb %[s3], %[b], %[w0], %[s3]\n\t"                                                                       \
  "pkhbt %[z], %[w1], %[w0]\n\t"                                                                               \
  "ldrd %[a], %[c], [%[r], #8]\n\t"                                                                            \
  "smladx %[s1], %[b], %[z], %[s1]\n\t"                                                                        \
  "smladx %[s3], %[a], %[z], %[s3]\n\t"                                                                        \
  "smlad %[s0], %[b], %[w1], %[s0]\n\t"                                                                        \
  "smlad %[s2], %[a], %[w1], %[s2]\n\t"                                                                        \
  "ldr %[w0], [%[w], #8]\n\t"                                                                                  \
  "pkhbt %[z], %[w0], %[w1]\n\t"                                                                               \
  "smladx %[s1], %[a], %[z], %[s1]\n\t"                                                                        \
  "smladx %[s3], %[c], %[z], %[s3]\n\t"                                                                        \
  "smlad %[s0], %[a], %[w0], %[s0]\n\t"                                                                        \
  "smlad %[s2], %[c], %[w0], %[s2]\n\t"
#define WIDE_S1_ROW7                                                                                           \
  WIDE_S1_ROW5                                                                                                 \
  "ldr %[w1], [%[w], #12]\n\t"                                                                                 \
  "pkhbt %[z], %[w1], %[w0]\n\t"                                                                               \
  "ldr %[b], [%[r], #16]\n\t"                                                                                  \
  "smladx %[s1], %[c], %[z], %[s1]\n\t"                                                                        \
  "smladx %[s3], %[b], %[z], %[s3]\n\t"                                                                        \
  "smlad %[s0], %[c], %[w1], %[s0]\n\t"                                                                        \
  "smlad %[s2], %[b], %[w1], %[s2]\n\t"
/* stride 2: out_i = sum_m SMLAD(A_i+m, W_m); K = 5: A0..A5, W0..W2. */
#define WIDE_S2_ROW5                                                                                           \
  "ldrd %[a], %[b], [%[r]]\n\t"                                                                                \
  "ldrd %[w0], %[w1], [%[w]]\n\t"                                                                              \
  "smlad %[s0], %[a], %[w0], %[s0]\n\t"                                                                        \
  "smlad %[s1], %[b], %[w0], %[s1]\n\t"                                                                        \
  "ldrd %[a], %[c], [%[r], #8]\n\t"                                                                            \
  "smlad %[s2], %[a], %[w0], %[s2]\n\t"                                                                        \
  "smlad %[s3], %[c], %[w0], %[s3]\n\t"                                                                        \
  "smlad %[s0], %[b], %[w1], %[s0]\n\t"                                                                        \
  "smlad %[s1], %[a], %[w1], %[s1]\n\t"                                                                        \
  "smlad %[s2], %[c], %[w1], %[s2]\n\t"                                                                        \
  "ldr %[w0], [%[w], #8]\n\t"                                                                                  \
  "ldrd %[b], %[z], [%[r], #16]\n\t"                                                                           \
  "smlad %[s3], %[b], %[w1], %[s3]\n\t"                                                                        \
  "smlad %[s0], %[a], %[w0], %[s0]\n\t"                                                                        \
  "smlad %[s1], %[c], %[w0], %[s1]\n\t"                                                                        \
  "smlad %[s2], %[b], %[w0], %[s2]\n\t"                                                                        \
  "smlad %[s3], %[z], %[w0], %[s3]\n\t"
/* K = 7: A0..A6, W0..W3. */
#define WIDE_S2_ROW7                                                                                           \
  "ldrd %[a], %[b], [%[r]]\n\t"                                                                                \
  "ldrd %[w0], %[w1], [%[w]]\n\t"                                                                              \
  "smlad %[s0], %[a], %[w0], %[s0]\n\t"                                                                        \
  "smlad %[s1], %[b], %[w0], %[s1]\n\t"                                                                        \
  "smlad %[s0], %[b], %[w1], %[s0]\n\t"                                                                        \
  "ldrd %[a], %[c], [%[r], #8]\n\t"                                                                            \
  "smlad %[s2], %[a], %[w0], %[s2]\n\t"                                                                        \
  "smlad %[s3], %[c], %[w0], %[s3]\n\t"                                                                        \
  "smlad %[s1], %[a], %[w1], %[s1]\n\t"                                                                        \
  "smlad %[s2], %[c], %[w1], %[s2]\n\t"                                                                        \
  "ldrd %[w0], %[z], [%[w], #8]\n\t"                                                                           \
  "smlad %[s0], %[a], %[w0], %[s0]\n\t"                                                                        \
  "smlad %[s1], %[c], %[w0], %[s1]\n\t"                                                                        \
  "smlad %[s0], %[c], %[z], %[s0]\n\t"                                                                         \
  "ldrd %[a], %[b], [%[r], #16]\n\t"                                                                           \
  "smlad %[s3], %[a], %[w1], %[s3]\n\t"                                                                        \
  "smlad %[s2], %[a], %[w0], %[s2]\n\t"                                                                        \
  "smlad %[s3], %[b], %[w0], %[s3]\n\t"                                                                        \
  "smlad %[s1], %[a], %[z], %[s1]\n\t"                                                                         \
  "smlad %[s2], %[b], %[z], %[s2]\n\t"                                                                         \
  "ldr %[a], [%[r], #24]\n\t"                                                                                  \
  "smlad %[s3], %[a], %[z], %[s3]\n\t"
#define WIDE5(ROW) ROW WIDE_STEP(12) ROW WIDE_STEP(12) ROW WIDE_STEP(12) ROW WIDE_STEP(12) ROW
#define WIDE7(ROW) ROW WIDE_STEP(16) ROW WIDE_STEP(16) ROW WIDE_STEP(16) ROW WIDE_STEP(16) ROW WIDE_STEP(16) \
  ROW WIDE_STEP(16) ROW

/* Four outputs from the aligned window start `row` (stride 1: outputs x..x+3 at row + x;
 * stride 2: at row + 2x), a K x K kernel (K = 2h + 1) whose rows are kstep plane values apart. */
TA_INLINE void wide_four(const int16_t *row, const ta_i32a *w, int32_t h, int32_t stride, int32_t kstep, int32_t s[4]) {
  int32_t a, b, c, w0, w1, z, s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
  const int32_t k = kstep * 2;
#define WIDE_OPERANDS                                                                                          \
  [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [a] "=&r"(a), [b] "=&r"(b), [c] "=&r"(c),       \
      [w0] "=&r"(w0), [w1] "=&r"(w1), [z] "=&r"(z), [r] "+r"(row), [w] "+r"(w)                                 \
      : [k] "r"(k)                                                                                             \
      : "memory"
  if (stride == 1 && h == 2)
    __asm__(WIDE5(WIDE_S1_ROW5) : WIDE_OPERANDS);
  else if (stride == 1)
    __asm__(WIDE7(WIDE_S1_ROW7) : WIDE_OPERANDS);
  else if (h == 2)
    __asm__(WIDE5(WIDE_S2_ROW5) : WIDE_OPERANDS);
  else
    __asm__(WIDE7(WIDE_S2_ROW7) : WIDE_OPERANDS);
#undef WIDE_OPERANDS
  s[0] = s0, s[1] = s1, s[2] = s2, s[3] = s3;
}
#else
/* The same sums in C (TA_SIMD_EMULATE). */
TA_INLINE void wide_row_s1(const int16_t *row, const ta_i32a *w, int32_t h, int32_t s[4]) {
  const ta_i32a *r = (const ta_i32a *)(const void *)row;
  int32_t prev = w[0], hi = r[1], m;
  s[0] = ta_smlad(r[0], prev, s[0]), s[2] = ta_smlad(hi, prev, s[2]);
  s[1] = ta_smlatb(r[0], prev, s[1]), s[3] = ta_smlatb(hi, prev, s[3]);
  for (m = 1; m <= h; ++m) {
    const int32_t wm = w[m], z = lo_hi(wm, prev), next = r[m + 1];
    s[1] = ta_smladx(hi, z, s[1]), s[3] = ta_smladx(next, z, s[3]);
    s[0] = ta_smlad(hi, wm, s[0]), s[2] = ta_smlad(next, wm, s[2]);
    prev = wm, hi = next;
  }
}
TA_INLINE void wide_row_s2(const int16_t *row, const ta_i32a *w, int32_t h, int32_t s[4]) {
  const ta_i32a *r = (const ta_i32a *)(const void *)row;
  int32_t m, i;
  for (m = 0; m <= h; ++m)
    for (i = 0; i < 4; ++i) s[i] = ta_smlad(r[i + m], w[m], s[i]);
}

/* Four outputs from the aligned window start `row`, a K x K kernel whose rows are kstep apart. */
TA_INLINE void wide_four(const int16_t *row, const ta_i32a *w, int32_t h, int32_t stride, int32_t kstep, int32_t s[4]) {
  int32_t ky;
  for (ky = 0; ky < 2 * h + 1; ++ky, row += kstep, w += h + 1) {
    if (stride == 1)
      wide_row_s1(row, w, h, s);
    else
      wide_row_s2(row, w, h, s);
  }
}
#endif

/* Outputs x..x+3 of a row at o (pixel stride ps) from the plane row `row`. */
TA_INLINE void wide_block(const int16_t *row, const ta_i32a *wq, int32_t h, int32_t stride, int32_t kstep, int32_t bias,
                          const wide_rq *q, int32_t full, int8_t *o, int32_t ps, int32_t x) {
  int8_t *const d = o + x * ps;
  int32_t s[4];
  s[0] = s[1] = s[2] = s[3] = bias;
  wide_four(row + x * stride, wq, h, stride, kstep, s);
  if (full) {
    d[0] = wide_requant(q, s[0]), d[ps] = wide_requant(q, s[1]);
    d[2 * ps] = wide_requant(q, s[2]), d[3 * ps] = wide_requant(q, s[3]);
  } else {
    d[0] = wide_clamped(q, s[0]), d[ps] = wide_clamped(q, s[1]);
    d[2 * ps] = wide_clamped(q, s[2]), d[3 * ps] = wide_clamped(q, s[3]);
  }
}

/* The job's rows for a K x K kernel, K = 2h + 1, stride `stride` (constants where inlined). A
 * row's last 3 outputs take one more block ending at the row's end (its first outputs written
 * again with the same bytes; at stride 1 it starts on an even column, for LDRD), then pairs
 * and a single output for what is left. */
TA_INLINE void wide_rows(const dw_job *j, int32_t h, int32_t stride) {
  const int32_t kh = 2 * h + 1, kstep = j->pitch >> 1, rstep = j->in_step >> 1, ps = j->out_pix_stride, n = j->n;
  const int32_t bias = j->bias, full = j->lo == -128 && j->hi == 127 && j->qoo == 0;
  const int32_t tail = stride == 1 ? (n - 4) & ~1 : n - 4;
  const ta_i32a *const wq = j->wq;
  const wide_rq q = {j->m, j->c, j->r, j->qoo, j->lo, j->hi};
  const int16_t *row = j->row0;
  int8_t *o = j->out;
  int32_t k, x;
  for (k = 0; k < j->rows; ++k, row += rstep, o += j->out_step) {
    for (x = 0; x + 4 <= n; x += 4) wide_block(row, wq, h, stride, kstep, bias, &q, full, o, ps, x);
    if (n - x >= 3 && tail >= 0) {
      wide_block(row, wq, h, stride, kstep, bias, &q, full, o, ps, tail);
      x = tail + 4;
    }
    for (; x + 1 < n && (h == 3 || stride == 1); x += 2) { /* short rows and tails (5x5 stride 2: measured slower) */
      int32_t s0 = bias, s1 = bias;
      wide_two(row + x * stride, stride, wq, kh, h, kstep, &s0, &s1);
      o[x * ps] = wide_clamped(&q, s0), o[(x + 1) * ps] = wide_clamped(&q, s1);
    }
    for (; x < n; ++x) o[x * ps] = wide_clamped(&q, wide_one(row + x * stride, wq, kh, h, kstep, bias));
  }
}

TA_NOINLINE static void wide5_s1(const dw_job *j) { wide_rows(j, 2, 1); }
TA_NOINLINE static void wide5_s2(const dw_job *j) { wide_rows(j, 2, 2); }
TA_NOINLINE static void wide7_s1(const dw_job *j) { wide_rows(j, 3, 1); }
TA_NOINLINE static void wide7_s2(const dw_job *j) { wide_rows(j, 3, 2); }

/* Only the families compiled (TA_DW_WIDE5_S1 ... TA_DW_WIDE7_S2: depthwise_simd.h) apply. */
int32_t ta_dw_wide_applies(const ta_dwconv_params *p) {
  const int32_t s1 = p->stride_w == 1, s2 = p->stride_w == 2;
  const int32_t compiled = p->kernel_w == 5   ? (s1 && TA_DW_WIDE5_S1) || (s2 && TA_DW_WIDE5_S2)
                           : p->kernel_w == 7 ? (s1 && TA_DW_WIDE7_S1) || (s2 && TA_DW_WIDE7_S2)
                                              : 0;
  return compiled && p->kernel_h == p->kernel_w && p->dilation_w == 1 && p->dilation_h == 1 && p->out_w >= 2;
}

/* A layer ta_dw_wide_applies takes: its family's rows (the others' calls are compiled out). */
void ta_dw_wide_rows(const ta_dwconv_params *p, const dw_job *j) {
  const int32_t s1 = p->stride_w == 1;
  if (p->kernel_w == 5) {
    if (TA_DW_WIDE5_S1 && s1) wide5_s1(j);
    else if (TA_DW_WIDE5_S2 && !s1) wide5_s2(j);
  } else {
    if (TA_DW_WIDE7_S1 && s1) wide7_s1(j);
    else if (TA_DW_WIDE7_S2 && !s1) wide7_s2(j);
  }
}
#else
/* Nothing here without the SIMD path; ISO C wants a declaration in every translation unit. */
typedef int ta_depthwise_wide_not_compiled;
#endif
