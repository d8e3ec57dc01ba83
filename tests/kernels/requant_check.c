/* Test-only: ta_rq_apply (fast requantization) must equal ta_mbqm for every input, and
 * ta_rq4_apply ta_mbqm + output offset wherever ta_rq4_prep gives the fast form (rs >= 0).
 * Built and run by test_kernels_requant.py; prints the number of mismatches. */
#include <stdio.h>

#include "tinyarena_requantize.h"

static unsigned s = 2463534242u;
static unsigned rnd(void) { s ^= s << 13; s ^= s >> 17; s ^= s << 5; return s; }

int main(void) {
  static const int32_t edge_x[] = {0, 1, -1, 2, -2, 3, -3, 1 << 20, -(1 << 20), INT32_MAX, INT32_MIN + 1, 12345, -12345};
  static const int32_t out_offsets[] = {-128, -1, 0, 5, 127};
  long bad = 0, n = 0, n4 = 0;
  int32_t shift, i, j;
  for (shift = -31; shift <= 3; ++shift) {
    for (i = 0; i < 20000; ++i) {
      int32_t m = (int32_t)((1u << 30) | (rnd() >> 2));
      if (i == 0) m = 1 << 30;
      if (i == 1) m = 0x7FFFFFFF;
      if (i == 2) m = 0;
      ta_rq q = ta_rq_prep(m, shift);
      for (j = 0; j < 16; ++j) {
        int32_t x = j < 13 ? edge_x[j] : (int32_t)rnd() >> (rnd() % 31);
        /* keep x * 2^shift in range for left shifts */
        if (shift > 0) x >>= shift + 1;
        if (ta_rq_apply(&q, x) != ta_mbqm(x, m, shift)) {
          if (bad < 5) printf("mismatch x=%d m=%d s=%d: %d vs %d\n", x, m, shift, ta_rq_apply(&q, x), ta_mbqm(x, m, shift));
          ++bad;
        }
        ++n;
        {
          const int32_t oo = out_offsets[(i + j) % 5];
          const ta_rq4 q4 = ta_rq4_prep(m, shift, oo);
          if (q4.rs >= 0) {
            ++n4;
            if (ta_rq4_apply(q4, x) != ta_mbqm(x, m, shift) + oo) {
              if (bad < 5) printf("rq4 mismatch x=%d m=%d s=%d oo=%d: %d vs %d\n", x, m, shift, oo,
                                  ta_rq4_apply(q4, x), ta_mbqm(x, m, shift) + oo);
              ++bad;
            }
          }
        }
      }
    }
  }
  printf("checked %ld (four-word form: %ld) mismatches %ld\n", n, n4, bad);
  return bad != 0;
}
