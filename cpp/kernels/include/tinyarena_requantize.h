/*
 * tinyarena kernels: fixed-point helpers shared by all int8 kernels (C99, header only).
 *
 * These reproduce, bit for bit, the integer arithmetic of TFLite's reference kernels
 * (tensorflow/lite/kernels/internal/common.h and gemmlowp/fixedpoint.h):
 *
 *   ta_srdhm(a, b)
 *     SaturatingRoundingDoublingHighMul: round(a * b / 2^31), saturating only the single
 *     overflow case INT32_MIN * INT32_MIN.
 *   ta_rounding_divide_by_pot(x, e)
 *     RoundingDivideByPOT: x / 2^e rounded to nearest, ties away from zero.
 *   ta_multiply_by_quantized_multiplier(x, m, s)
 *     MultiplyByQuantizedMultiplier (TFLite's default "double rounding" variant):
 *     x * m * 2^s / 2^31 with s > 0 a left shift applied first and s < 0 a rounding right
 *     shift applied last.
 *
 * A real multiplier M is represented by (m, s) as produced by TFLite's QuantizeMultiplier:
 * M = m * 2^(s - 31) with m in [2^30, 2^31). The generator computes (m, s) on the host.
 *
 * Define TA_SINGLE_ROUNDING=1 to get TFLite's alternative TFLITE_SINGLE_ROUNDING arithmetic
 * (not what the PyPI interpreter uses; kept for targets that want to match such builds).
 */
#ifndef TINYARENA_REQUANTIZE_H
#define TINYARENA_REQUANTIZE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TA_INLINE static inline __attribute__((always_inline))
#else
#define TA_INLINE static inline
#endif

/* Wrapping 32-bit arithmetic (TFLite relies on two's complement wrap in a few places). */
TA_INLINE int32_t ta_wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
TA_INLINE int32_t ta_wrap_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
TA_INLINE int32_t ta_wrap_shl(int32_t a, int s) { return (int32_t)((uint32_t)a << s); }

TA_INLINE int32_t ta_min32(int32_t a, int32_t b) { return a < b ? a : b; }
TA_INLINE int32_t ta_max32(int32_t a, int32_t b) { return a > b ? a : b; }
TA_INLINE int32_t ta_clamp32(int32_t x, int32_t lo, int32_t hi) { return x < lo ? lo : (x > hi ? hi : x); }

/*
 * round(a*b / 2^31). gemmlowp adds a nudge of 2^30 (or 1 - 2^30 for a negative product) and
 * truncates the division toward zero; for every product except INT32_MIN^2 that equals
 * floor((a*b + 2^30) / 2^31), which is a single 64-bit add and arithmetic shift.
 */
TA_INLINE int32_t ta_srdhm(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX;
  return (int32_t)(((int64_t)a * (int64_t)b + ((int64_t)1 << 30)) >> 31);
}

/* Rounding arithmetic right shift, ties away from zero (gemmlowp::RoundingDivideByPOT). */
TA_INLINE int32_t ta_rounding_divide_by_pot(int32_t x, int e) {
  const int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (remainder > threshold ? 1 : 0);
}

/* Saturating x * 2^e for 0 <= e < 31 (gemmlowp SaturatingRoundingMultiplyByPOT, e > 0). */
TA_INLINE int32_t ta_sat_shl(int32_t x, int e) {
  if (e == 0) return x;
  {
    const int32_t threshold = (int32_t)((1u << (31 - e)) - 1u);
    if (x > threshold) return INT32_MAX;
    if (x < -threshold) return INT32_MIN;
    return ta_wrap_shl(x, e);
  }
}

#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
TA_INLINE int32_t ta_multiply_by_quantized_multiplier(int32_t x, int32_t m, int32_t shift) {
  const int total_shift = 31 - shift;
  const int64_t round = (int64_t)1 << (total_shift - 1);
  return (int32_t)(((int64_t)x * m + round) >> total_shift);
}
#else
TA_INLINE int32_t ta_multiply_by_quantized_multiplier(int32_t x, int32_t m, int32_t shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  return ta_rounding_divide_by_pot(ta_srdhm(ta_wrap_shl(x, left), m), right);
}
#endif

/* MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0). */
TA_INLINE int32_t ta_multiply_by_quantized_multiplier_below_one(int32_t x, int32_t m, int32_t shift) {
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  return ta_multiply_by_quantized_multiplier(x, m, shift);
#else
  return ta_rounding_divide_by_pot(ta_srdhm(x, m), -shift);
#endif
}

/* MultiplyByQuantizedMultiplierGreaterThanOne (shift >= 0). */
TA_INLINE int32_t ta_multiply_by_quantized_multiplier_above_one(int32_t x, int32_t m, int32_t shift) {
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  return ta_multiply_by_quantized_multiplier(x, m, shift);
#else
  return ta_srdhm(ta_wrap_shl(x, shift), m);
#endif
}

/*
 * SMMLAR: the high word of acc * 2^32 + a * b + 2^31 (Cortex-M DSP, one instruction). ACLE
 * has no intrinsic for it, so the DSP build uses inline assembly; the C form is the same sum
 * in wrapping 64-bit arithmetic.
 */
TA_INLINE int32_t ta_smmlar(int32_t a, int32_t b, int32_t acc) {
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(TA_SIMD_EMULATE)
  int32_t r;
  __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
  return r;
#else
  const uint64_t sum = ((uint64_t)(uint32_t)acc << 32) + (uint64_t)((int64_t)a * b) + 0x80000000u;
  return (int32_t)(uint32_t)(sum >> 32);
#endif
}

/*
 * Requantization of a DOUBLED accumulator X = 2x (the SIMD kernels get it for free from
 * weights packed as 2w), value-identical to ta_multiply_by_quantized_multiplier(x, m, -r) + out_offset when |x| < 2^30,
 * m > 2^30 or m == 0, and r in [1, 31]:
 *   srdhm(x, m) = floor((x*m + 2^30) / 2^31) = floor((X*m + 2^31) / 2^32): SMMLAR's rounding;
 *   rdbpot(y, r) = (y + 2^(r-1) - [y < 0]) >> r, and y < 0 exactly when x < 0 (m > 2^30),
 * so per value ADD (c + (X >> 31)), SMMLAR, ASR -- three instructions. For r <= 22 the output
 * offset rides in c as out_offset << r (|y + c| < 2^31) and `oo` is 0; else `oo` is added
 * after the shift. r < 0 marks a channel outside that range (use ta_multiply_by_quantized_multiplier).
 */
typedef struct ta_rqd {
  int32_t m;
  int32_t c;   /* 2^(r-1), + (out_offset << r) if r <= 22 */
  int32_t r;   /* right shift, or -1 */
  int32_t oo;  /* out_offset if r > 22, else 0 */
} ta_rqd;

TA_INLINE ta_rqd ta_rqd_prep(int32_t m, int32_t shift, int32_t out_offset) {
  ta_rqd q;
  const int32_t r = m == 0 ? 1 : -shift; /* a dead channel: y = 0 for any r */
  const int fold = r <= 22;
  q.m = m;
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  q.r = -1;
#else
  q.r = (m == 0 || m > (1 << 30)) && r >= 1 && r <= 31 ? r : -1;
#endif
  q.c = q.r >= 0 ? (int32_t)(1u << (q.r - 1)) + (fold ? (int32_t)((uint32_t)out_offset << q.r) : 0) : 0;
  q.oo = fold ? 0 : out_offset;
  return q;
}

/* ta_multiply_by_quantized_multiplier(X / 2, m, -r) + out_offset; requires q.r >= 0 and X even with |X| < 2^31. */
TA_INLINE int32_t ta_rqd_apply(ta_rqd q, int32_t doubled) {
  return (ta_smmlar(doubled, q.m, q.c + (doubled >> 31)) >> q.r) + q.oo;
}

TA_INLINE int32_t ta_clamp_act(int32_t v, int32_t act_min, int32_t act_max) {
  v = v > act_min ? v : act_min;
  return v < act_max ? v : act_max;
}

/*
 * Requantization plus output offset in four words (the SIMD kernels' hot path), value-identical
 * to ta_multiply_by_quantized_multiplier(x, m, s) + out_offset when m > 2^30 and r = -s is in
 * [2, 31], or m = 0 (taken as r = 2: the high word is then 2^0 + 2*out_offset or one less, so
 * the result is out_offset): with C_pos as above,
 * C_pos = (2^(r-2) << 32) + 2^30, and the y < 0 constant C_pos - 2^31 has low word
 * 2^30 | 2^31 and high word one less. So per value: AND, ORR, ADD (ASR), SMLAL, ASR -- no
 * select. For r <= 23 the output offset rides in the high word as out_offset << (r - 1)
 * (|high word| < 2^31) and `oo` is 0; else `oo` is added after the shift. rs < 0 marks a
 * channel outside that range (use ta_multiply_by_quantized_multiplier).
 */
typedef struct ta_rq4 {
  int32_t m;
  int32_t c_hi;   /* 2^(r-2), + (out_offset << (r-1)) if r <= 23 */
  int32_t rs;     /* r - 1, or -1 */
  int32_t oo;     /* out_offset if r > 23, else 0 */
} ta_rq4;

TA_INLINE ta_rq4 ta_rq4_prep(int32_t m, int32_t shift, int32_t out_offset) {
  ta_rq4 q;
  int fold;
  if (m == 0) shift = -2; /* a dead channel: the product is 0 for every shift, m = 0 gives 0 here too */
  fold = shift >= -23;
  q.m = m;
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  q.rs = -1;
#else
  q.rs = (m == 0 || m > (1 << 30)) && shift <= -2 && shift >= -31 ? -shift - 1 : -1;
#endif
  q.c_hi = q.rs >= 0 ? (int32_t)(1u << (q.rs - 1)) + (fold ? (int32_t)((uint32_t)out_offset << q.rs) : 0) : 0;
  q.oo = fold ? 0 : out_offset;
  return q;
}

/* ta_multiply_by_quantized_multiplier(x, m, s) + out_offset; requires q.rs >= 0. */
TA_INLINE int32_t ta_rq4_apply(ta_rq4 q, int32_t x) {
  const uint32_t lo = (1u << 30) | ((uint32_t)x & 0x80000000u);
  const int32_t hi = q.c_hi + (x >> 31);
  const int64_t v = (int64_t)x * q.m + (int64_t)(((uint64_t)(uint32_t)hi << 32) | lo);
  return ((int32_t)(v >> 32) >> q.rs) + q.oo;
}

/*
 * clamp(y + offset, lo, hi) for a requantized y, without forming y + offset: y may lie anywhere in
 * int32 (a multiplier near or above 1 on a large accumulator), where that sum could overflow.
 * Equal to TFLite's add-then-clamp wherever that is defined; offset, lo and hi are int8 values.
 */
TA_INLINE int32_t ta_offset_clamp(int32_t y, int32_t offset, int32_t lo, int32_t hi) {
  return ta_clamp32(y, lo - offset, hi - offset) + offset;
}

/* Requantize a conv/FC accumulator: multiplier, output offset, clamp to the activation range. */
TA_INLINE int8_t ta_requant_acc(int32_t acc, int32_t m, int32_t shift, int32_t out_offset, int32_t act_min,
                                int32_t act_max) {
  return (int8_t)ta_offset_clamp(ta_multiply_by_quantized_multiplier(acc, m, shift), out_offset, act_min, act_max);
}

#ifdef __cplusplus
}
#endif

#endif /* TINYARENA_REQUANTIZE_H */
