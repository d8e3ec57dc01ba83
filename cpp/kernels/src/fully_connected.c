/*
 * FULLY_CONNECTED int8 (TFLite reference_integer_ops::FullyConnected[PerChannel]):
 *   acc = bias[n] + sum_k (in[b][k] + input_offset) * (w[n][k] + weights_offset)
 *   out[b][n] = clamp(multiply_by_quantized_multiplier(acc, mult, shift) + output_offset, act_min, act_max)
 * or, matching the current TFLite reference kernel (which rescales in double),
 *   out[b][n] = clamp((int32)round(acc * out_scale_f64[n]) + output_offset, act_min, act_max)
 * which the compiler replaces by one int32 multiply where it proves it equal for every accumulator
 * (rescale_mult / rescale_shift: an SMLAL and a shift instead of a soft-float multiply and round,
 * about 270 instructions an output on a Cortex-M3 or M4).
 *
 * SIMD path (packed int16 weights, weights_offset folded in): the input row is widened once to
 * int16 pairs (offset added) in scratch; the inner loop handles 4 output channels (two packed
 * channel pairs) per k step: 1 LDR of inputs, 2 LDRD of weights, 4 SMLADs. With Helium (MVE,
 * __ARM_FEATURE_MVE: Cortex-M55) the same packed weights are read 4 words per channel at a time:
 * VLD2 separates a pair's interleaved words, one VMLADAVA per channel adds 8 int16 products. The
 * sums are the same integers (int32 arithmetic wraps alike in any order), so results are identical.
 * With simd_int8_weights the SIMD path reads the model's int8 weights instead (no packed copy):
 * per 4 k values and 4 channels one LDRD of inputs, 4 LDR of weights, 8 SXTB16 and 8 SMLAD; on
 * Helium per 8 k values and 4 channels one input load, 4 widening weight loads (VLDRB.S16) and
 * 4 VMLADAVA.S16 (fc_s8_mve).
 */
#include <math.h>

#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"

#if TA_SIMD_NATIVE && defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#define TA_FC_MVE 1
#else
#define TA_FC_MVE 0
#endif

/* The paths the DSP build compiles: the generated Makefile sets a guard to 0 when no layer of the
 * model reaches it (op_params::kernel_variants decides, from the same conditions as the dispatch
 * in ta_fully_connected_s8), so --gc-sections drops its code; unset, a path is compiled. Either
 * setting gives the same bytes: TA_FC_PACKED16 the packed int16 path's 4-channel loop (0: its
 * channels run as pairs, the same sums), TA_FC_PORTABLE fc_portable (0: the plain loop, the same
 * integers). The portable and Helium builds compile their own paths whatever is set. */
#ifndef TA_FC_PACKED16
#define TA_FC_PACKED16 1
#endif
#ifndef TA_FC_PORTABLE
#define TA_FC_PORTABLE 1
#endif
#define FC_PACKED_QUADS (TA_FC_MVE || TA_FC_PACKED16)
#define FC_PORTABLE (!TA_SIMD || TA_FC_MVE || TA_FC_PORTABLE)

/* The double rescale or the integer requantization of TFLite Micro (rq's other forms). */
TA_NOINLINE static int8_t rq_general(const ta_fc_params *p, int32_t acc, int32_t i) {
  if (p->out_scale_f64) { /* limited in double first: the rounded product may lie outside int32 */
    const double lo = p->act_min - p->output_offset, hi = p->act_max - p->output_offset;
    const double y = round((double)acc * p->out_scale_f64[i]);
    return (int8_t)((int32_t)(y < lo ? lo : y > hi ? hi : y) + p->output_offset);
  }
  return ta_requant_acc(acc, p->out_mult[i], p->out_shift[i], p->output_offset, p->act_min, p->act_max);
}

/* Output channel n's value for accumulator acc. The integer rescale (proved equal to the double
 * one by the compiler): acc * m + 2^(31 + s) - [acc < 0] in one SMLAL, its top word shifted right
 * by s (1 <= s <= 30: the sum's low word is just the sign term). */
static int8_t rq(const ta_fc_params *p, int32_t acc, int32_t n) {
  const int32_t i = p->per_channel ? n : 0;
  if (p->rescale_mult) {
    const int32_t s = p->rescale_shift[i], neg = acc >> 31;
    const uint64_t bias = (uint64_t)(uint32_t)((1 << (s - 1)) + neg) << 32 | (uint32_t)neg;
    const int32_t y = (int32_t)((uint64_t)((int64_t)acc * p->rescale_mult[i] + (int64_t)bias) >> 32) >> s;
    return (int8_t)ta_clamp32(y + p->output_offset, p->act_min, p->act_max);
  }
  return rq_general(p, acc, i);
}

size_t ta_fully_connected_s8_scratch_bytes(const ta_fc_params *p) {
  return (size_t)((p->in_depth + 3) & ~3) * sizeof(int16_t);
}

#if TA_FC_MVE
/* *a0, *a1 += channel pair `w` (word t of its first channel at 2t, of its second at 2t + 1) dotted
 * with the widened input xw, over words [0, words), words a multiple of 4. */
static void mve_pair_dot(const ta_i32a *w, const ta_i32a *xw, int32_t words, int32_t *a0, int32_t *a1) {
  int32_t s0 = *a0, s1 = *a1, t;
  for (t = 0; t < words; t += 4) {
    const int32x4x2_t pair = vld2q_s32((const int32_t *)w + 2 * t);
    const int16x8_t x = vreinterpretq_s16_s32(vld1q_s32((const int32_t *)xw + t));
    s0 = vmladavaq_s16(s0, vreinterpretq_s16_s32(pair.val[0]), x);
    s1 = vmladavaq_s16(s1, vreinterpretq_s16_s32(pair.val[1]), x);
  }
  *a0 = s0, *a1 = s1;
}
#endif

#if TA_SIMD
/* The input row, offset added, as int16 SIMD words in the GEMM order (see ta_simd.h); values
 * past K are 0. */
static void widen_row(const int8_t *in, int32_t k, int32_t offset, int16_t *xs) {
  const int32_t off2 = ta_pair16(offset, offset), kq = (k + 3) & ~3;
  int32_t i = 0;
  for (; i + 4 <= k; i += 4) {
    const int32_t raw = ta_read32(in + i);
    ta_write32(xs + i, ta_sadd16(ta_sxtb16(raw), off2));
    ta_write32(xs + i + 2, ta_sadd16(ta_sxtb16_ror8(raw), off2));
  }
  for (; i < kq; ++i) xs[2 * ta_gemm_word(i) + ta_gemm_half(i)] = (int16_t)(i < k ? in[i] + offset : 0);
}
#endif

/*
 * The portable path (scratch given): the input row as int16 x + input_offset in scratch, then 4
 * output channels per pass over it (LDRSH, 4 LDRSB, 4 MLA: 9 instructions for 4 MACs) on the int8
 * weights; weights_offset w_o adds w_o * sum(x + input_offset), the same integer as TFLite's sum.
 */
static TA_ALWAYS_INLINE int32_t fc_widen(const int8_t *in, int32_t k, int32_t offset, int16_t *xs) {
  int32_t i, sum = 0;
  for (i = 0; i < k; ++i) sum += xs[i] = (int16_t)(in[i] + offset);
  return sum;
}

/* acc[0..n) += rows w, w + k, ... (n = 1..4 of them; a missing row repeats the last) dotted with xs. */
TA_NOINLINE static void fc_rows4(const int16_t *xs, const int8_t *w, int32_t k, int32_t n, int32_t *acc) {
  const int8_t *w0 = w, *w1 = w + (n > 1 ? k : 0), *w2 = w + (n > 2 ? 2 * k : 0), *w3 = w + (n > 3 ? 3 * k : 0);
  const int16_t *const end = xs + k;
  int32_t a = acc[0], b = acc[1], c = acc[2], d = acc[3];
  for (; xs < end; ++xs) {
    const int32_t x = *xs;
    a += x * *w0++, b += x * *w1++, c += x * *w2++, d += x * *w3++;
  }
  acc[0] = a, acc[1] = b, acc[2] = c, acc[3] = d;
}

static void fc_portable(const ta_fc_params *p, const int8_t *input, int8_t *output, int16_t *xs) {
  const int32_t K = p->in_depth, N = p->out_depth, out_row_stride = TA_OR_DEFAULT(p->out_row_stride, N);
  int32_t b, n, i;
  for (b = 0; b < p->batches; ++b) {
    const int32_t sum = fc_widen(input + (size_t)b * K, K, p->input_offset, xs);
    int8_t *const out = output + (size_t)b * out_row_stride;
    for (n = 0; n < N; n += 4) {
      const int32_t count = N - n < 4 ? N - n : 4;
      int32_t acc[4];
      for (i = 0; i < 4; ++i) acc[i] = (p->bias && i < count ? p->bias[n + i] : 0) + p->weights_offset * sum;
      fc_rows4(xs, p->weights + (size_t)n * K, K, count, acc);
      for (i = 0; i < count; ++i) out[n + i] = rq(p, acc[i], n + i);
    }
  }
}

#if TA_FC_MVE
/* a[0..3] += rows w, w + k, w + 2k, w + 3k (int8; a missing row repeats the last one, its sum
 * unused) dotted with xs (x + input_offset as int16, natural order): per 8 values one input load
 * and per row a widening weight load (VLDRB.S16) and one VMLADAVA.S16; the last k % 8 under a
 * tail predicate (no reads past the row). */
static TA_ALWAYS_INLINE void fc_mve_dot4(const int8_t *w, int32_t k, int32_t channels, const int16_t *xs, int32_t *a) {
  const int8_t *const w1 = w + (channels > 1 ? k : 0), *const w2 = w + (channels > 2 ? 2 * k : (w1 - w));
  const int8_t *const w3 = w + (channels > 3 ? 3 * k : (w2 - w));
  int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], i;
  for (i = 0; i + 8 <= k; i += 8) {
    const int16x8_t x = vld1q_s16(xs + i);
    a0 = vmladavaq_s16(a0, vldrbq_s16(w + i), x), a1 = vmladavaq_s16(a1, vldrbq_s16(w1 + i), x);
    a2 = vmladavaq_s16(a2, vldrbq_s16(w2 + i), x), a3 = vmladavaq_s16(a3, vldrbq_s16(w3 + i), x);
  }
  if (i < k) {
    const mve_pred16_t t = vctp16q((uint32_t)(k - i));
    const int16x8_t x = vldrhq_z_s16(xs + i, t);
    a0 = vmladavaq_s16(a0, vldrbq_z_s16(w + i, t), x), a1 = vmladavaq_s16(a1, vldrbq_z_s16(w1 + i, t), x);
    a2 = vmladavaq_s16(a2, vldrbq_z_s16(w2 + i, t), x), a3 = vmladavaq_s16(a3, vldrbq_z_s16(w3 + i, t), x);
  }
  a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3;
}

/* The Helium path on int8 weights (weights_offset 0): each input row widened once (8 values a
 * step), then 4 channels per pass (fc_mve_dot4). */
static TA_NOINLINE void fc_s8_mve(const ta_fc_params *p, const int8_t *input, int8_t *output, int16_t *xs) {
  const int32_t K = p->in_depth, N = p->out_depth, out_row_stride = TA_OR_DEFAULT(p->out_row_stride, N);
  int32_t b, n, c;
  for (b = 0; b < p->batches; ++b) {
    int8_t *const out = output + (size_t)b * out_row_stride;
    const int8_t *const in = input + (size_t)b * K;
    for (c = 0; c < K; c += 8) { /* the row widened, offset added: 8 values a step */
      const mve_pred16_t t = vctp16q((uint32_t)(K - c));
      vstrhq_p_s16(xs + c, vaddq_n_s16(vldrbq_z_s16(in + c, t), (int16_t)p->input_offset), t);
    }
    for (n = 0; n < N; n += 4) {
      const int channels = N - n < 4 ? (int)(N - n) : 4;
      int32_t a[4] = {0, 0, 0, 0};
      for (c = 0; c < channels; ++c) a[c] = p->bias ? p->bias[n + c] : 0;
      fc_mve_dot4(p->weights + (size_t)n * K, K, channels, xs, a);
      for (c = 0; c < channels; ++c) out[n + c] = rq(p, a[c], n + c);
    }
  }
}
#endif

#if TA_SIMD && !TA_FC_MVE
/* a[c] += row w + c * k (int8, c < channels) dotted with the widened input xw: per 4 values one
 * weight word widened by SXTB16 into the input words' order; the last k % 4 values one by one. */
TA_INLINE void fc_s8_dot(const int8_t *w, int32_t k, const ta_i32a *xw, int32_t *a, int channels) {
  const int16_t *const xs = (const int16_t *)xw;
  const int32_t k4 = k & ~3;
  int32_t i = 0, c;
#if TA_SIMD_NATIVE
  if (channels == 4 && k4 > 0) {
    /* rows 0 and 1 at w and w + k, rows 2 and 3 at w2 and w2 + k; per 4 values: LDRD of inputs,
     * per row LDR, 2 SXTB16, 2 SMLAD (23 instructions for 16 MACs) */
    const ta_i32a *xq = xw, *const xe = xw + k4 / 2;
    const int8_t *w0 = w, *w2 = w + 2 * k;
    const int32_t next_row = k - 4; /* from a row's word past the one just read to the next row's */
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], x0, x1, t, u;
    __asm__ volatile(
        "1:\n\t"
        "ldrd %[x0], %[x1], [%[xq]], #8\n\t"
        "ldr %[t], [%[w0]], #4\n\t"
        "sxtb16 %[u], %[t]\n\t"
        "sxtb16 %[t], %[t], ror #8\n\t"
        "smlad %[a0], %[u], %[x0], %[a0]\n\t"
        "smlad %[a0], %[t], %[x1], %[a0]\n\t"
        "ldr %[t], [%[w0], %[nr]]\n\t"
        "sxtb16 %[u], %[t]\n\t"
        "sxtb16 %[t], %[t], ror #8\n\t"
        "smlad %[a1], %[u], %[x0], %[a1]\n\t"
        "smlad %[a1], %[t], %[x1], %[a1]\n\t"
        "ldr %[t], [%[w2]], #4\n\t"
        "sxtb16 %[u], %[t]\n\t"
        "sxtb16 %[t], %[t], ror #8\n\t"
        "smlad %[a2], %[u], %[x0], %[a2]\n\t"
        "smlad %[a2], %[t], %[x1], %[a2]\n\t"
        "ldr %[t], [%[w2], %[nr]]\n\t"
        "sxtb16 %[u], %[t]\n\t"
        "sxtb16 %[t], %[t], ror #8\n\t"
        "smlad %[a3], %[u], %[x0], %[a3]\n\t"
        "smlad %[a3], %[t], %[x1], %[a3]\n\t"
        "cmp %[xq], %[xe]\n\t"
        "bne 1b\n\t"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xq] "+r"(xq), [w0] "+r"(w0), [w2] "+r"(w2),
          [x0] "=&r"(x0), [x1] "=&r"(x1), [t] "=&r"(t), [u] "=&r"(u)
        : [xe] "r"(xe), [nr] "r"(next_row)
        : "cc", "memory");
    a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3;
    xw = xe, i = k4;
  }
#endif
  for (; i < k4; i += 4, xw += 2) {
    const int32_t x0 = xw[0], x1 = xw[1];
    for (c = 0; c < channels; ++c) {
      const int32_t raw = ta_read32(w + c * k + i);
      a[c] = ta_smlad(ta_sxtb16_ror8(raw), x1, ta_smlad(ta_sxtb16(raw), x0, a[c]));
    }
  }
  for (; i < k; ++i)
    for (c = 0; c < channels; ++c) a[c] += xs[2 * ta_gemm_word(i) + ta_gemm_half(i)] * w[c * k + i];
}

/* The SIMD path on int8 weights: each input row widened once, then 4 channels per pass. */
static void fc_s8_simd(const ta_fc_params *p, const int8_t *input, int8_t *output, int16_t *xs) {
  const int32_t K = p->in_depth, N = p->out_depth, out_row_stride = TA_OR_DEFAULT(p->out_row_stride, N);
  int32_t b, n, c;
  for (b = 0; b < p->batches; ++b) {
    int8_t *const out = output + (size_t)b * out_row_stride;
    widen_row(input + (size_t)b * K, K, p->input_offset, xs);
    for (n = 0; n < N; n += 4) {
      const int channels = N - n < 4 ? (int)(N - n) : 4;
      int32_t a[4];
      for (c = 0; c < channels; ++c) a[c] = p->bias ? p->bias[n + c] : 0;
      if (channels == 4)
        fc_s8_dot(p->weights + (size_t)n * K, K, (const ta_i32a *)xs, a, 4);
      else
        fc_s8_dot(p->weights + (size_t)n * K, K, (const ta_i32a *)xs, a, channels);
      for (c = 0; c < channels; ++c) out[n + c] = rq(p, a[c], n + c);
    }
  }
}
#endif

void ta_fully_connected_s8(const ta_fc_params *p, const int8_t *input, int8_t *output, void *scratch) {
  const int32_t K = p->in_depth, N = p->out_depth;
  const int32_t out_row_stride = TA_OR_DEFAULT(p->out_row_stride, N);
  int32_t b, n, k;
#if TA_SIMD
  if (p->simd_int8_weights && p->weights_offset == 0 && scratch) {
#if TA_FC_MVE
    fc_s8_mve(p, input, output, (int16_t *)scratch);
#else
    fc_s8_simd(p, input, output, (int16_t *)scratch);
#endif
    return;
  }
  if (p->packed_weights && scratch) {
    int16_t *xs = (int16_t *)scratch;
    const ta_i32a *xw = (const ta_i32a *)xs;
    const int32_t kpairs = ((K + 3) & ~3) >> 1; /* SIMD words per channel, even */
    for (b = 0; b < p->batches; ++b) {
      const int8_t *in = input + (size_t)b * K;
      int8_t *out = output + (size_t)b * out_row_stride;
      const ta_i32a *wp = (const ta_i32a *)p->packed_weights;
      widen_row(in, K, p->input_offset, xs);
      for (n = 0; FC_PACKED_QUADS && n + 4 <= N; n += 4) {
        const ta_i32a *wa = wp, *wb = wp + 2 * kpairs;
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, kk;
        if (p->bias) {
          a0 = p->bias[n]; a1 = p->bias[n + 1]; a2 = p->bias[n + 2]; a3 = p->bias[n + 3];
        }
        kk = 0;
#if TA_FC_MVE
        kk = kpairs & ~3;
        mve_pair_dot(wa, xw, kk, &a0, &a1);
        mve_pair_dot(wb, xw, kk, &a2, &a3);
        wa += 2 * kk;
        wb += 2 * kk;
#elif TA_SIMD_NATIVE
        if (kpairs >= 2) {
          /* per 2 k steps: 2 LDR inputs, 4 LDRD weights, 8 SMLAD (+CMP/BNE): ~1 instruction/MAC */
          const ta_i32a *xq = xw, *const xe = xw + (kpairs & ~1);
          int32_t x, w0, w1, w2, w3;
          __asm__ volatile(
              "1:\n\t"
              "ldr %[x], [%[xq]], #4\n\t"
              "ldrd %[w0], %[w1], [%[wa]], #8\n\t"
              "ldrd %[w2], %[w3], [%[wb]], #8\n\t"
              "smlad %[a0], %[w0], %[x], %[a0]\n\t"
              "smlad %[a1], %[w1], %[x], %[a1]\n\t"
              "smlad %[a2], %[w2], %[x], %[a2]\n\t"
              "smlad %[a3], %[w3], %[x], %[a3]\n\t"
              "ldr %[x], [%[xq]], #4\n\t"
              "ldrd %[w0], %[w1], [%[wa]], #8\n\t"
              "ldrd %[w2], %[w3], [%[wb]], #8\n\t"
              "smlad %[a0], %[w0], %[x], %[a0]\n\t"
              "smlad %[a1], %[w1], %[x], %[a1]\n\t"
              "smlad %[a2], %[w2], %[x], %[a2]\n\t"
              "smlad %[a3], %[w3], %[x], %[a3]\n\t"
              "cmp %[xq], %[xe]\n\t"
              "bne 1b\n\t"
              : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xq] "+r"(xq), [wa] "+r"(wa),
                [wb] "+r"(wb), [x] "=&r"(x), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3)
              : [xe] "r"(xe)
              : "cc", "memory");
          kk = kpairs & ~1;
        }
#endif
        for (; kk < kpairs; ++kk) {
          const int32_t x = xw[kk];
          a0 = ta_smlad(wa[0], x, a0);
          a1 = ta_smlad(wa[1], x, a1);
          a2 = ta_smlad(wb[0], x, a2);
          a3 = ta_smlad(wb[1], x, a3);
          wa += 2;
          wb += 2;
        }
        out[n] = rq(p, a0, n);
        out[n + 1] = rq(p, a1, n + 1);
        out[n + 2] = rq(p, a2, n + 2);
        out[n + 3] = rq(p, a3, n + 3);
        wp += 4 * kpairs;
      }
      for (; n + 2 <= N; n += 2) { /* a quad's words are two pairs' in a row */
        int32_t a0 = p->bias ? p->bias[n] : 0, a1 = p->bias ? p->bias[n + 1] : 0, kk = 0;
#if TA_FC_MVE
        kk = kpairs & ~3;
        mve_pair_dot(wp, xw, kk, &a0, &a1);
#endif
        for (; kk < kpairs; ++kk) {
          const int32_t x = xw[kk];
          a0 = ta_smlad(wp[2 * kk], x, a0);
          a1 = ta_smlad(wp[2 * kk + 1], x, a1);
        }
        out[n] = rq(p, a0, n);
        out[n + 1] = rq(p, a1, n + 1);
        wp += 2 * kpairs;
      }
      if (n < N) {
        int32_t a0 = p->bias ? p->bias[n] : 0, kk;
        for (kk = 0; kk < kpairs; ++kk) a0 = ta_smlad(wp[kk], xw[kk], a0);
        out[n] = rq(p, a0, n);
      }
    }
    return;
  }
#endif
  if (FC_PORTABLE && scratch && K > 0) {
    fc_portable(p, input, output, (int16_t *)scratch);
    return;
  }
  for (b = 0; b < p->batches; ++b) {
    const int8_t *in = input + (size_t)b * K;
    int8_t *out = output + (size_t)b * out_row_stride;
    for (n = 0; n < N; ++n) {
      const int8_t *w = p->weights + (size_t)n * K;
      int32_t acc = 0;
      for (k = 0; k < K; ++k) acc += (in[k] + p->input_offset) * (w[k] + p->weights_offset);
      if (p->bias) acc += p->bias[n];
      out[n] = rq(p, acc, n);
    }
  }
}
