/* Test-only: the SIMD kernels' requantizations must equal ta_multiply_by_quantized_multiplier +
 * output offset wherever their prep gives the fast form: ta_rq4_apply (rs >= 0) on the
 * accumulator x, ta_rqd_apply (r >= 0) on the doubled accumulator 2x for |x| < 2^30; on a
 * Helium core also the vector forms of ta_mve.h (clamped to int8).
 * Built and run by test_kernels_requant.py; prints the number of mismatches. */
#include <stdio.h>

#include "tinyarena_requantize.h"
#if defined(__ARM_FEATURE_MVE)
#include "ta_mve.h" /* built with -I ../../cpp/kernels/src */
#endif

#ifndef MULTIPLIERS_PER_SHIFT
#define MULTIPLIERS_PER_SHIFT 20000
#endif

static unsigned s = 2463534242u;
static unsigned rnd(void) { s ^= s << 13; s ^= s >> 17; s ^= s << 5; return s; }

static long bad = 0;
static void check(const char *form, int32_t x, int32_t m, int32_t shift, int32_t oo, int32_t got) {
  const int32_t want = ta_multiply_by_quantized_multiplier(x, m, shift) + oo;
  if (got == want) return;
  if (bad < 5)
    printf("%s mismatch x=%ld m=%ld s=%ld oo=%ld: %ld vs %ld\n", form, (long)x, (long)m, (long)shift, (long)oo, (long)got,
           (long)want);
  ++bad;
}

#if TA_MVE
/* The Helium requantizations of the conv and depthwise paths (every lane x) against the
 * reference, clamped to int8: the general form (ta_mve_requantize, any shift), and where they
 * apply the fast forms (ta_mve_requantize_s8: shift <= 0; ta_mve_requantize1_s8: shift < 0). */
static long nmve = 0;
static void check8(const char *form, int32_t x, int32_t m, int32_t shift, int32_t oo, int32_t got) {
  const int32_t want = ta_offset_clamp(ta_multiply_by_quantized_multiplier(x, m, shift), oo, -128, 127);
  if (got == want) return;
  if (bad < 5)
    printf("%s mismatch x=%ld m=%ld s=%ld oo=%ld: %ld vs %ld\n", form, (long)x, (long)m, (long)shift, (long)oo, (long)got,
           (long)want);
  ++bad;
}
static void check_mve(int32_t x, int32_t m, int32_t shift, int32_t oo) {
  const int32x4_t acc = vdupq_n_s32(x);
  const int32_t ms[8] = {m, m, m, m, shift, shift, shift, shift};
  const ta_mve_rq q = ta_mve_rq_load(ms);
  const ta_mve_rq_range range = ta_mve_rq_range_of(oo, -128, 127);
  const ta_mve_rq1 q1 = ta_mve_rq1_of(m, shift, oo);
  ++nmve;
  check8("mve", x, m, shift, oo, vgetq_lane_s32(ta_mve_requantize(acc, &q, &range), 3));
  check8("mve1", x, m, shift, oo, vgetq_lane_s32(ta_mve_requantize1(acc, &q1, range.lo, range.hi), 2));
#if !(defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING) /* the fast forms: double rounding only */
  if (shift <= 0) check8("mve_s8", x, m, shift, oo, (int8_t)vgetq_lane_s32(ta_mve_requantize_s8(acc, q.m, q.right, oo), 1));
  if (shift < 0) check8("mve1_s8", x, m, shift, oo, (int8_t)vgetq_lane_s32(ta_mve_requantize1_s8(acc, m, shift, oo), 0));
#endif
}
#endif

int main(void) {
  static const int32_t edge_x[] = {0, 1, -1, 2, -2, 3, -3, 1 << 20, -(1 << 20), INT32_MAX, INT32_MIN + 1, 12345, -12345,
                                   (1 << 30) - 1, -(1 << 30) + 1};
  static const int32_t out_offsets[] = {-128, -1, 0, 5, 127};
  long n4 = 0, nd = 0;
  int32_t shift, i, j;
  for (shift = -31; shift <= 3; ++shift) {
    for (i = 0; i < MULTIPLIERS_PER_SHIFT; ++i) {
      int32_t m = (int32_t)((1u << 30) | (rnd() >> 2));
      if (i == 0) m = 1 << 30;
      if (i == 1) m = 0x7FFFFFFF;
      if (i == 2) m = 0;
      for (j = 0; j < 18; ++j) {
        const int32_t oo = out_offsets[(i + j) % 5];
        const ta_rq4 q4 = ta_rq4_prep(m, shift, oo);
        const ta_rqd qd = ta_rqd_prep(m, shift, oo);
        int32_t x = j < 15 ? edge_x[j] : (int32_t)rnd() >> (rnd() % 31);
        if (shift > 0) x >>= shift + 1; /* keep x * 2^shift in range for left shifts */
        if (q4.rs >= 0) ++n4, check("rq4", x, m, shift, oo, ta_rq4_apply(q4, x));
        if (qd.r >= 0 && x < (1 << 30) && x > -(1 << 30)) ++nd, check("rqd", x, m, shift, oo, ta_rqd_apply(qd, 2 * x));
#if TA_MVE
        check_mve(x, m, shift, oo);
#endif
      }
    }
  }
#if TA_MVE
  printf("helium forms: %ld\n", nmve);
#endif
  printf("checked four-word form: %ld doubled form: %ld mismatches %ld\n", n4, nd, bad);
  return bad != 0;
}
