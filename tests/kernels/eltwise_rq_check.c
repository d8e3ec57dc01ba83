/* Test-only: the short forms of ta_eltwise_rq.h (elementwise.c's ADD and MUL) equal TFLite's
 * reference arithmetic wherever their preps accept the params:
 *   - ADD's input stage for every int8 value v and every offset -128..128, on edge and random
 *     multipliers of both signs (SUB) and every shift 0..-31;
 *   - ADD's half stage (multiplier +-0.5) for every v and offset;
 *   - whole ADDs and MULs for every pair of int8 inputs (65,536) on edge and random params.
 * Built and run by test_kernels_requant.py; prints the counts and the number of mismatches. */
#include <stdio.h>

#include "ta_eltwise_rq.h" /* built with -I cpp/kernels/src */

#ifndef PARAM_SETS
#define PARAM_SETS 1500
#endif

static unsigned s = 2463534242u;
static unsigned rnd(void) { s ^= s << 13; s ^= s >> 17; s ^= s << 5; return s; }
static int32_t rnd_in(int32_t lo, int32_t hi) { return lo + (int32_t)(rnd() % (unsigned)(hi - lo + 1)); }

static long bad = 0;
static void check(const char *form, long i, int32_t got, int32_t want) {
  if (got == want) return;
  if (bad < 5) printf("%s mismatch at case %ld: %ld vs %ld\n", form, i, (long)got, (long)want);
  ++bad;
}

/* A multiplier as QuantizeMultiplier makes them (or an edge), negated when `neg`. */
static int32_t multiplier(unsigned i, int neg) {
  const int32_t m = i % 7 == 0 ? 1 << 30 : i % 7 == 1 ? INT32_MAX : (int32_t)((1u << 30) | (rnd() >> 2));
  return neg ? -m : m;
}

static int32_t ref_add_in(int32_t v, int32_t off, int32_t m, int32_t shift) {
  return ta_multiply_by_quantized_multiplier_below_one(ta_wrap_shl(v + off, 20), m, shift);
}

static long check_add_inputs(void) {
  long n = 0;
  static const int32_t halves[] = {1 << 30, -(1 << 30)};
  int32_t shift, off, v, g, k;
  unsigned i;
  for (i = 0; i < 2; ++i)
    for (off = -128; off <= 128; ++off) {
      const int32_t m = halves[i];
      if (!ta_add_half_prep(&g, &k, off, m, 0, 20)) ++bad;
      for (v = -128; v <= 127; ++v, ++n) check("add half", n, v * g + k, 2 * ref_add_in(v, off, m, 0));
    }
  for (shift = 0; shift >= -31; --shift)
    for (i = 0; i < 24; ++i) {
      const int32_t m = multiplier(i, i % 2);
      for (off = -128; off <= 128; ++off) {
        ta_add_in q;
        if (!ta_add_in_prep(&q, off, m, shift, 20)) continue;
        for (v = -128; v <= 127; ++v, ++n) check("add input", n, ta_add_in_apply(&q, v), ref_add_in(v, off, m, shift));
      }
    }
  return n;
}

/* Whole ADDs: every (x, y) of one random parameter set. TFLite's: the larger-scale input (x when
 * `set` is odd) at 0.5 = 2^30 * 2^-31 (negated for input2 in a SUB), the other below or at 0.5. */
static long check_add(unsigned set) {
  const int32_t off1 = rnd_in(-127, 128), off2 = rnd_in(-127, 128), oo = rnd_in(-128, 127), sub = set % 3 == 0;
  const int32_t other = set % 11 == 0 ? 1 << 30 : multiplier(set / 2, 0), other_shift = set % 11 == 0 ? 0 : -rnd_in(1, 14);
  const int32_t m1 = set % 2 ? 1 << 30 : other, s1 = set % 2 ? 0 : other_shift;
  const int32_t m2 = (set % 2 ? other : 1 << 30) * (sub ? -1 : 1), s2 = set % 2 ? other_shift : 0;
  const int32_t mo = multiplier(set / 3, 0), so = -rnd_in(10, 22);
  const int32_t lo = set % 4 == 1 ? oo : -128, hi = set % 8 == 3 ? ta_min32(127, oo + 40) : 127;
  const ta_rqd q = ta_eltwise_rqd_prep(mo, so, oo);
  ta_add_in o;
  int32_t g, k, x, y;
  long n = 0;
  if (q.r < 0 || q.oo != 0) return 0;
  if (set % 2 ? !ta_add_half_prep(&g, &k, off1, m1, s1, 20) || !ta_add_in_prep(&o, off2, m2, s2, 20)
              : !ta_add_half_prep(&g, &k, off2, m2, s2, 20) || !ta_add_in_prep(&o, off1, m1, s1, 20))
    return 0;
  for (x = -128; x <= 127; ++x)
    for (y = -128; y <= 127; ++y, ++n) {
      const int32_t ra = ref_add_in(x, off1, m1, s1), rb = ref_add_in(y, off2, m2, s2);
      const int32_t want = ta_offset_clamp(ta_multiply_by_quantized_multiplier_below_one(ta_wrap_add(ra, rb), mo, so),
                                           oo, lo, hi);
      const int32_t sum2 = set % 2 ? x * g + k + 2 * ta_add_in_apply(&o, y) : y * g + k + 2 * ta_add_in_apply(&o, x);
      check("add", n, ta_clamp_act(ta_rqd_apply(q, sum2), lo, hi), want);
    }
  return n;
}

/* Whole MULs: every (x, y) of one random parameter set. */
static long check_mul(unsigned set) {
  const int32_t off1 = rnd_in(-127, 128), off2 = rnd_in(-127, 128), oo = rnd_in(-128, 127);
  const int32_t mo = multiplier(set, 0), so = set % 3 ? -rnd_in(1, 31) : rnd_in(0, 15);
  const int32_t lo = set % 4 == 1 ? oo : -128, hi = set % 8 == 3 ? ta_min32(127, oo + 40) : 127;
  ta_rqd q;
  int32_t g2, sm, x, y;
  long n = 0;
  if (!ta_mul_prep(&q, &g2, &sm, mo, so, oo) || q.oo != 0) return 0;
  for (x = -128; x <= 127; ++x)
    for (y = -128; y <= 127; ++y, ++n) {
      const int32_t want = ta_offset_clamp(ta_multiply_by_quantized_multiplier((x + off1) * (y + off2), mo, so), oo, lo, hi);
      check("mul", n, ta_clamp_act(ta_mul_apply(q, sm, (x + off1) * (y * g2 + off2 * g2)), lo, hi), want);
    }
  return n;
}

int main(void) {
  long n_in = check_add_inputs(), n_add = 0, n_mul = 0;
  unsigned set;
  for (set = 0; set < PARAM_SETS; ++set) n_add += check_add(set), n_mul += check_mul(set);
  printf("add inputs: %ld adds: %ld muls: %ld mismatches %ld\n", n_in, n_add, n_mul, bad);
  return bad != 0;
}
