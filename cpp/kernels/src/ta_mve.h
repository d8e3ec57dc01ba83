/*
 * Internal: what the Helium (MVE, Cortex-M55) kernels share -- TA_MVE (1 when they are compiled:
 * a native SIMD build on a core with __ARM_FEATURE_MVE) and TFLite's requantization of 4 int32
 * lanes at once, bit-exact with ta_multiply_by_quantized_multiplier + ta_offset_clamp:
 *   x = acc << max(s, 0)                     VSHL (wraps, as ta_wrap_shl)
 *   x = srdhm(x, m)                          VQRDMULH: (2 x m + 2^31) >> 32, saturating only
 *                                            INT32_MIN * INT32_MIN, exactly ta_srdhm
 *   x = rdbpot(x, -min(s, 0))                VRSHL rounds half up, (x + 2^(e-1)) >> e in full
 *                                            precision; ties away from zero for x < 0 is the same
 *                                            shift of x - 1 (VQADD of -1: INT32_MIN saturates,
 *                                            which gives the same quotient for e >= 1); e = 0
 *                                            adds nothing (the AND with the shift word is 0)
 *   clamp(x + oo, lo, hi)                    VQADD, VMAX, VMIN: a saturated sum lies outside
 *                                            [lo, hi] exactly when the exact one does
 * With TA_SINGLE_ROUNDING each lane takes the scalar form instead.
 */
#ifndef TA_MVE_H
#define TA_MVE_H

#include "tinyarena_requantize.h"
#include "ta_simd.h"

#if TA_SIMD_NATIVE && defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#define TA_MVE 1

/* The output offset and activation range as vectors. */
typedef struct ta_mve_rq_range {
  int32x4_t oo, lo, hi;
  int32_t oo_s, lo_s, hi_s;
} ta_mve_rq_range;

static inline __attribute__((always_inline)) ta_mve_rq_range ta_mve_rq_range_of(int32_t oo, int32_t lo, int32_t hi) {
  ta_mve_rq_range r;
  r.oo = vdupq_n_s32(oo), r.lo = vdupq_n_s32(lo), r.hi = vdupq_n_s32(hi);
  r.oo_s = oo, r.lo_s = lo, r.hi_s = hi;
  return r;
}

/* 4 lanes' multipliers and shifts (left: max(s, 0), right: min(s, 0)); with TA_SINGLE_ROUNDING
 * also as scalars, for the scalar form. */
typedef struct ta_mve_rq {
  int32x4_t m, left, right;
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  int32_t sm[4], ss[4];
#endif
} ta_mve_rq;

/* From vectors of multipliers and TFLite shifts. */
static inline __attribute__((always_inline)) ta_mve_rq ta_mve_rq_of(int32x4_t m, int32x4_t s) {
  ta_mve_rq q;
  const int32x4_t zero = vdupq_n_s32(0);
  q.m = m, q.left = vmaxq_s32(s, zero), q.right = vminq_s32(s, zero);
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  vst1q_s32(q.sm, m), vst1q_s32(q.ss, s);
#endif
  return q;
}
/* 4 channels' constants: multipliers ms[0..3], shifts ms[4..7]. */
static inline __attribute__((always_inline)) ta_mve_rq ta_mve_rq_load(const int32_t *ms) {
  return ta_mve_rq_of(vld1q_s32(ms), vld1q_s32(ms + 4));
}
/* One channel's constants in every lane. */
static inline __attribute__((always_inline)) ta_mve_rq ta_mve_rq_dup(int32_t m, int32_t s) {
  return ta_mve_rq_of(vdupq_n_s32(m), vdupq_n_s32(s));
}

/* acc's 4 lanes requantized with q, offset added and limited to the range. */
static inline __attribute__((always_inline)) int32x4_t ta_mve_requantize(int32x4_t acc, const ta_mve_rq *q,
                                                                         const ta_mve_rq_range *r) {
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  int32_t v[4], i;
  vst1q_s32(v, acc);
  for (i = 0; i < 4; ++i)
    v[i] = ta_offset_clamp(ta_multiply_by_quantized_multiplier(v[i], q->sm[i], q->ss[i]), r->oo_s, r->lo_s, r->hi_s);
  return vld1q_s32(v);
#else
  int32x4_t x = vqrdmulhq_s32(vshlq_s32(acc, q->left), q->m);
  x = vrshlq_s32(vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, q->right), 31)), q->right);
  return vminq_s32(vmaxq_s32(vqaddq_s32(x, r->oo), r->lo), r->hi);
#endif
}
/* The vector {a, b, c, d} (two VMOV of register pairs). */
static inline __attribute__((always_inline)) int32x4_t ta_mve_vec4(int32_t a, int32_t b, int32_t c, int32_t d) {
  int32x4_t v;
  __asm__("vmov %q0[2], %q0[0], %1, %3\n\tvmov %q0[3], %q0[1], %2, %4" : "=w"(v) : "r"(a), "r"(b), "r"(c), "r"(d));
  return v;
}

/* x's 4 lanes saturated to int8, in each lane's low byte (VQMOVNB.S32 then VQMOVNB.S16 in place:
 * the intrinsics' form keeps a second register for the lanes the narrowing leaves). */
static inline __attribute__((always_inline)) int32x4_t ta_mve_sat8(int32x4_t x) {
  __asm__("vqmovnb.s32 %q0, %q0\n\tvqmovnb.s16 %q0, %q0" : "+w"(x));
  return x;
}

/* The fast form, for lanes whose TFLite shift is <= 0 (right: the shifts) with the activation range
 * all of int8: ta_mve_requantize's steps without the left shift, then the offset (VQADD) and
 * ta_mve_sat8 instead of the clamp. */
static inline __attribute__((always_inline)) int32x4_t ta_mve_requantize_s8(int32x4_t acc, int32x4_t m,
                                                                            int32x4_t right, int32_t oo) {
  int32x4_t x = vqrdmulhq_s32(acc, m);
  x = vqaddq_n_s32(vrshlq_s32(vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31)), right), oo);
  return ta_mve_sat8(x);
}

/* The same for one channel (scalars) whose shift `right` is < 0 (so the sign fix-up always
 * applies, and |x| < 2^30 after the shift: the offset adds without saturation). */
static inline __attribute__((always_inline)) int32x4_t ta_mve_requantize1_s8(int32x4_t acc, int32_t m, int32_t right,
                                                                             int32_t oo) {
  int32x4_t x = vqrdmulhq_n_s32(acc, m);
  x = vaddq_n_s32(vrshlq_n_s32(vqaddq_s32(x, vshrq_n_s32(x, 31)), right), oo);
  return ta_mve_sat8(x);
}

/* One channel's constants for 4 outputs of it: scalars where MVE has a by-scalar form (VQRDMULH,
 * VSHL, VRSHL, VQADD), the right shift also in every lane for the sign fix-up's AND. */
typedef struct ta_mve_rq1 {
  int32_t m, left, right, oo;
  int32x4_t rmask;
} ta_mve_rq1;

static inline __attribute__((always_inline)) ta_mve_rq1 ta_mve_rq1_of(int32_t m, int32_t s, int32_t oo) {
  ta_mve_rq1 q;
  q.m = m, q.left = s > 0 ? s : 0, q.right = s > 0 ? 0 : s, q.oo = oo;
  q.rmask = vdupq_n_s32(q.right);
  return q;
}

/* acc's 4 lanes requantized with q, offset added and limited to [lo, hi] (as ta_mve_requantize). */
static inline __attribute__((always_inline)) int32x4_t ta_mve_requantize1(int32x4_t acc, const ta_mve_rq1 *q,
                                                                          int32x4_t lo, int32x4_t hi) {
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  int32_t v[4], i;
  vst1q_s32(v, acc);
  for (i = 0; i < 4; ++i)
    v[i] = ta_offset_clamp(ta_multiply_by_quantized_multiplier(v[i], q->m, q->left + q->right), q->oo,
                           vgetq_lane_s32(lo, 0), vgetq_lane_s32(hi, 0));
  return vld1q_s32(v);
#else
  int32x4_t x = vqrdmulhq_n_s32(vshlq_r_s32(acc, q->left), q->m);
  x = vrshlq_n_s32(vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, q->rmask), 31)), q->right);
  return vminq_s32(vmaxq_s32(vqaddq_n_s32(x, q->oo), lo), hi);
#endif
}
#else
#define TA_MVE 0
#endif

#endif /* TA_MVE_H */
