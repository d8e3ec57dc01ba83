/*
 * Internal to elementwise.c: exact short forms of the int8 ADD and MUL requantizations, prepared
 * once per call. Each prep returns 0 where its form does not apply (the kernel then runs TFLite's
 * per-element arithmetic); tests/kernels/eltwise_rq_check.c compares the forms with that
 * arithmetic over every pair of int8 inputs.
 *
 * ADD's input stage, TFLite's MultiplyByQuantizedMultiplierSmallerThanOneExp((v + off) << 20, m, s)
 * = rdbpot(srdhm(x, m), r) with x = u * 2^20, u = v + off in [-255, 255], r = -s:
 *   srdhm(x, m) = floor((u*2^20*m + 2^30) / 2^31) = floor((u*m + 2^10) / 2^11) =: y (exact: both
 *   terms are multiples of 2^20), and for m >= 2^30, y < 0 exactly when u < 0 (u <= -1 gives
 *   u*m + 2^10 <= -2^30 + 2^10). With X = u * 2^21 (|X| < 2^29), SMMLAR's
 *   floor((X*m + acc*2^32 + 2^31) / 2^32) = y + acc, and rdbpot(y, r) = (y + 2^(r-1) - [y < 0]) >> r
 *   for r in [1, 31]; so the stage is X = v*g + k, then SMMLAR(X, m, c + (X >> 31)) >> r with
 *   g = 2^21, k = off * 2^21, c = 2^(r-1): a multiply-add, an add, SMMLAR and a shift.
 *   r = 0 needs m = 2^30 (a multiplier in [0.5, 1), and TFLite's are <= 0.5: the larger-scale
 *   input's is exactly 0.5), where y = u * 2^19 exactly; m' = 2^31 - 1 with r = 1 gives the same:
 *   floor((u*2^21*m' + 2^31) / 2^32) = u*2^20 + floor(1/2 - u/2^11) = u*2^20 for |u| <= 255, and
 *   (u*2^20 + 1 - [u < 0]) >> 1 = u * 2^19.
 *   A negative m (SUB negates input2's multiplier) is |m| with u negated (g, k negated):
 *   srdhm(x, -m) = srdhm(-x, m), the product being the same.
 * The larger-scale input's multiplier is exactly 0.5 in TFLite (its scale over twice itself):
 *   m = +-2^30, shift 0, where srdhm(u*2^20, 2^30) = floor((u*2^50 + 2^30) / 2^31) = u*2^19 exactly,
 *   so that stage doubled is v*g + k with g = +-2^20, k = +-off*2^20: one multiply-add.
 * ADD's output stage: the sum s of the two stages (|s| < 2^28) requantized by ta_rqd_apply(2s),
 *   2s = (v*g + k) + 2 * (the other stage).
 * MUL, MultiplyByQuantizedMultiplier(P, m, s) + oo of the product P = (v1 + off1)(v2 + off2)
 *   (|P| <= 255^2 < 2^16): for s <= -1, ta_rqd_apply on the doubled product 2P; for s in [0, 14],
 *   srdhm(P * 2^s, m) + oo = SMMLAR(X, m, oo) with X = P * 2^(s+1) (|X| < 2^31; SMMLAR's rounding
 *   is srdhm's on X / 2, as in ta_rqd) -- the same form with no sign term and no shift. So
 *   X = (v1 + off1) * (v2 * g2 + k2) with g2 = 2^(1 + max(s, 0)), then ta_mul_apply.
 * Both use ta_rqd, whose form holds for m = 2^30 as well (ta_rqd_prep asks m > 2^30): there
 * y = srdhm(x, 2^30) = floor((x + 1) / 2) has the sign of x except at x = -1, where y = 0 and the
 * form gives (0 + 2^(r-1) - 1 + (oo << r)) >> r = oo -- rdbpot(0, r) + oo.
 */
#ifndef TA_ELTWISE_RQ_H
#define TA_ELTWISE_RQ_H

#include "ta_chan_rq.h" /* ta_sat8 */

/* ta_rqd for m = 2^30 too (see above); q.r < 0 where it does not apply. */
TA_INLINE ta_rqd ta_eltwise_rqd_prep(int32_t m, int32_t shift, int32_t out_offset) {
  ta_rqd q = ta_rqd_prep(m == (1 << 30) ? m + 1 : m, shift, out_offset);
  q.m = m;
  return q;
}

/* One ADD input's stage: v -> rdbpot(srdhm((v + off) << 20, m), -shift). */
typedef struct ta_add_in {
  int32_t g, k, m, c, r;
} ta_add_in;

TA_INLINE int ta_add_in_prep(ta_add_in *q, int32_t off, int32_t m, int32_t shift, int32_t left_shift) {
  const int32_t sign = m < 0 ? -1 : 1;
  int32_t am = m < 0 ? (int32_t)(0u - (uint32_t)m) : m, r = -shift;
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  return 0;
#endif
  if (left_shift != 20 || off < -128 || off > 128 || m == INT32_MIN || (am != 0 && am < (1 << 30))) return 0;
  if (am == 0) { /* the stage is 0: X = 0 gives SMMLAR 0 */
    q->g = q->k = q->m = q->c = q->r = 0;
    return 1;
  }
  if (r == 0 && am == (1 << 30)) am = INT32_MAX, r = 1;
  if (r < 1 || r > 31) return 0;
  q->g = sign * (1 << 21);
  q->k = sign * off * (1 << 21);
  q->m = am;
  q->c = (int32_t)(1u << (r - 1));
  q->r = r;
  return 1;
}

/* An input stage whose multiplier is +-0.5, doubled: 2 * stage(v) = v * *g + *k; 0 if it is not. */
TA_INLINE int ta_add_half_prep(int32_t *g, int32_t *k, int32_t off, int32_t m, int32_t shift, int32_t left_shift) {
  const int32_t sign = m < 0 ? -1 : 1;
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  return 0;
#endif
  if (left_shift != 20 || off < -128 || off > 128 || shift != 0 || (m != (1 << 30) && m != -(1 << 30))) return 0;
  *g = sign * (1 << 20), *k = sign * off * (1 << 20);
  return 1;
}

TA_INLINE int32_t ta_add_in_apply(const ta_add_in *q, int32_t v) {
  const int32_t x = v * q->g + q->k;
  return ta_smmlar(x, q->m, q->c + (x >> 31)) >> q->r;
}

/* MUL's requantization of X = P * g2: *q, *g2 and the sign term's mask *sm (0: none); 0 if the
 * form does not apply. */
TA_INLINE int ta_mul_prep(ta_rqd *q, int32_t *g2, int32_t *sm, int32_t m, int32_t shift, int32_t out_offset) {
  if (shift <= -1) {
    *q = ta_eltwise_rqd_prep(m, shift, out_offset);
    *g2 = 2, *sm = -1;
    return q->r >= 0;
  }
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  return 0;
#endif
  q->m = m, q->c = out_offset, q->r = 0, q->oo = 0;
  *g2 = (int32_t)(2u << shift), *sm = 0;
  return shift <= 14;
}

TA_INLINE int32_t ta_mul_apply(ta_rqd q, int32_t sm, int32_t x) {
  return (ta_smmlar(x, q.m, q.c + ((x >> 31) & sm)) >> q.r) + q.oo;
}

#endif /* TA_ELTWISE_RQ_H */
