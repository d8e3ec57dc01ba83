/*
 * SOFTMAX and LOG_SOFTMAX int8 (TFLite reference_ops::Softmax for quantized types and
 * reference_integer_ops::LogSoftmax), both built on gemmlowp's fixed-point exp/reciprocal/log.
 *
 * Fixed-point numbers below are raw int32 values in Qm.(31-m) ("F<m>"): a multiply of F<a> by
 * F<b> is ta_srdhm and gives F<a+b>; rescale F<src> -> F<dst> is a saturating left shift by
 * (src-dst) or a rounding right shift by (dst-src); plain +/- wrap like gemmlowp's int32 ops.
 *
 * Softmax (input diffs in Q5.26, sums in Q12.19):
 *   diff = in - max_row; if diff >= diff_min: e = exp(diff * beta * scale) in Q0.31
 *   out  = clamp(rdbpot(srdhm(1/sum, e), num_bits_over_unit + 23) - 128)
 */
#include "tinyarena_kernels.h"

/* Rescale a raw value from `src` integer bits to `dst` integer bits (gemmlowp::Rescale). */
static int32_t fp_rescale(int32_t x, int src, int dst) {
  const int e = src - dst;
  if (e > 0) return ta_sat_shl(x, e);
  if (e < 0) return ta_rounding_divide_by_pot(x, -e);
  return x;
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out (Taylor series around -1/8). */
static int32_t exp_quarter(int32_t a) {
  const int32_t constant_term = 1895147668;     /* exp(-1/8) */
  const int32_t constant_1_over_3 = 715827883;
  const int32_t x = ta_wrap_add(a, 1 << 28);    /* a + 1/8 */
  const int32_t x2 = ta_srdhm(x, x);
  const int32_t x3 = ta_srdhm(x2, x);
  const int32_t x4 = ta_srdhm(x2, x2);
  const int32_t x4_over_4 = ta_rounding_divide_by_pot(x4, 2);
  const int32_t poly =
      ta_rounding_divide_by_pot(ta_wrap_add(ta_srdhm(ta_wrap_add(x4_over_4, x3), constant_1_over_3), x2), 1);
  return ta_wrap_add(constant_term, ta_srdhm(constant_term, ta_wrap_add(x, poly)));
}

/* exp(a) for a <= 0 given in Q<int_bits>, result in Q0.31 (gemmlowp::exp_on_negative_values). */
static int32_t exp_on_negative_values(int32_t a, int int_bits) {
  static const int32_t mults[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  const int frac_bits = 31 - int_bits;
  const int32_t one_quarter = (int32_t)1 << (frac_bits - 2);
  const int32_t mask = one_quarter - 1;
  const int32_t a_mod_quarter_minus_one_quarter = ta_wrap_sub(a & mask, one_quarter);
  int32_t result = exp_quarter(fp_rescale(a_mod_quarter_minus_one_quarter, int_bits, 0));
  const int32_t remainder = ta_wrap_sub(a_mod_quarter_minus_one_quarter, a);
  int e;
  for (e = -2; e <= 4; ++e) {
    if (int_bits > e) {
      const int shift = frac_bits + e;
      if (remainder & (int32_t)((uint32_t)1 << shift)) result = ta_srdhm(result, mults[e + 2]);
    }
  }
  if (int_bits > 5) {
    const int32_t clamp = -((int32_t)1 << (36 - int_bits)); /* -32 */
    if (a < clamp) result = 0;
  }
  if (a == 0) result = INT32_MAX;
  return result;
}

static int32_t rounding_half_sum(int32_t a, int32_t b) {
  const int64_t sum = (int64_t)a + (int64_t)b;
  const int64_t sign = sum >= 0 ? 1 : -1;
  return (int32_t)((sum + sign) / 2);
}

/* 1 / (1 + a) for a in [0, 1): Q0.31 in and out (Newton-Raphson, gemmlowp). */
static int32_t one_over_one_plus_x_for_x_in_0_1(int32_t a) {
  const int32_t half_denominator = rounding_half_sum(a, INT32_MAX);
  const int32_t c48_17 = 1515870810;  /* 48/17 in Q2.29 */
  const int32_t cm32_17 = -1010580540; /* -32/17 in Q2.29 */
  const int32_t one_f2 = 1 << 29;
  int32_t x = ta_wrap_add(c48_17, ta_srdhm(half_denominator, cm32_17));
  int i;
  for (i = 0; i < 3; ++i) {
    const int32_t hdx = ta_srdhm(half_denominator, x);
    const int32_t one_minus = ta_wrap_sub(one_f2, hdx);
    x = ta_wrap_add(x, fp_rescale(ta_srdhm(x, one_minus), 4, 2));
  }
  return fp_rescale(x, 1, 0); /* ExactMulByPot<-1>: reinterpret as Q1 then rescale to Q0 */
}

static int clz32(uint32_t x) {
  int n = 0;
  if (x == 0) return 32;
  while (!(x & 0x80000000u)) {
    x <<= 1;
    ++n;
  }
  return n;
}

/* TFLite GetReciprocal: 1/x for x in Q<int_digits>, as a Q0.31 scale and an exponent. */
static int32_t get_reciprocal(int32_t x, int int_digits, int *num_bits_over_unit) {
  const int headroom_plus_one = clz32((uint32_t)x);
  const int32_t shifted_sum_minus_one = (int32_t)(((uint32_t)x << headroom_plus_one) - ((uint32_t)1 << 31));
  *num_bits_over_unit = int_digits - headroom_plus_one;
  return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one);
}

void ta_softmax_s8(const ta_softmax_params *p, const int8_t *input, int8_t *output) {
  const int32_t depth = p->depth;
  int32_t i, c;
  for (i = 0; i < p->outer_size; ++i) {
    const int8_t *in = input + (size_t)i * depth;
    int8_t *out = output + (size_t)i * depth;
    int32_t max_in_row = -128, sum_of_exps = 0, shifted_scale, exponent;
    int num_bits_over_unit;
    for (c = 0; c < depth; ++c) max_in_row = in[c] > max_in_row ? in[c] : max_in_row;
    for (c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t scaled =
            ta_multiply_by_quantized_multiplier_above_one(diff, p->input_multiplier, p->input_left_shift);
        sum_of_exps = ta_wrap_add(sum_of_exps, fp_rescale(exp_on_negative_values(scaled, 5), 0, 12));
      }
    }
    shifted_scale = get_reciprocal(sum_of_exps, 12, &num_bits_over_unit);
    exponent = num_bits_over_unit + 31 - 8;
    for (c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t scaled =
            ta_multiply_by_quantized_multiplier_above_one(diff, p->input_multiplier, p->input_left_shift);
        const int32_t e = exp_on_negative_values(scaled, 5);
        const int32_t unsat = ta_rounding_divide_by_pot(ta_srdhm(shifted_scale, e), exponent);
        out[c] = (int8_t)ta_clamp32(unsat - 128, -128, 127);
      } else {
        out[c] = -128;
      }
    }
  }
}

static int32_t sat_add(int32_t a, int32_t b) {
  const int64_t s = (int64_t)a + b;
  return s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : (int32_t)s);
}

static int32_t sat_sub(int32_t a, int32_t b) {
  const int64_t s = (int64_t)a - b;
  return s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : (int32_t)s);
}

/* log(x) for x >= 1 (x in Q12.19), result in Q5.26: TFLite's
 * log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>. */
static int32_t log_x_q12_to_q5(int32_t input) {
  const int in_bits = 12, accum_bits = 6;
  const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
  const int32_t one_quarter = 536870912;
  const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769, alpha_f = 638450708;
  const int32_t shifted_quarter = fp_rescale(one_quarter, 0, accum_bits);
  const int32_t z_a = input;
  const int z_a_headroom_plus_1 = clz32((uint32_t)z_a);
  const int32_t r_a_tmp = ta_sat_shl(z_a, z_a_headroom_plus_1 - 1);
  const int32_t r_a_raw = ta_sat_shl(ta_srdhm(r_a_tmp, sqrt_half), 1);
  const int32_t z_a_pow_2_adj = sat_add(ta_sat_shl(in_bits - z_a_headroom_plus_1, 31 - accum_bits), shifted_quarter);
  const int32_t z_b = ta_srdhm(z_a, sqrt_half);
  const int z_b_headroom = clz32((uint32_t)z_b) - 1;
  const int32_t r_b_raw = ta_sat_shl(z_a, z_b_headroom);
  const int32_t z_b_pow_2_adj = sat_sub(ta_sat_shl(in_bits - z_b_headroom, 31 - accum_bits), shifted_quarter);
  const int32_t r = ta_min32(r_a_raw, r_b_raw);
  const int32_t z_pow_2_adj = ta_max32(z_a_pow_2_adj, z_b_pow_2_adj);
  const int32_t pp = rounding_half_sum(r, sqrt_sqrt_half);
  int32_t q = ta_wrap_sub(r, sqrt_sqrt_half);
  int32_t common_sq, num, denom_minus_one_0, recip_denom, num_scaled;
  q = ta_wrap_add(q, q);
  common_sq = ta_srdhm(q, q);
  num = ta_wrap_add(ta_srdhm(q, r), ta_srdhm(ta_srdhm(q, common_sq), alpha_n));
  denom_minus_one_0 = ta_wrap_add(
      ta_srdhm(pp, ta_wrap_add(ta_wrap_add(alpha_i, q), ta_srdhm(alpha_d, common_sq))), ta_srdhm(alpha_f, q));
  recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one_0);
  num_scaled = fp_rescale(num, 0, accum_bits);
  return fp_rescale(ta_wrap_add(ta_srdhm(z_pow_2_adj, log_2), ta_srdhm(num_scaled, recip_denom)), accum_bits, 5);
}

void ta_log_softmax_s8(const ta_softmax_params *p, const int8_t *input, int8_t *output) {
  const int32_t depth = p->depth;
  int32_t i, c;
  for (i = 0; i < p->outer_size; ++i) {
    const int8_t *in = input + (size_t)i * depth;
    int8_t *out = output + (size_t)i * depth;
    int32_t max_in_row = -128, sum_of_exps = 0, log_sum, adjusted_diff_min;
    for (c = 0; c < depth; ++c) max_in_row = in[c] > max_in_row ? in[c] : max_in_row;
    for (c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t d5 = ta_multiply_by_quantized_multiplier(diff, p->input_multiplier, p->input_left_shift);
        sum_of_exps = ta_wrap_add(sum_of_exps, fp_rescale(exp_on_negative_values(d5, 5), 0, 12));
      }
    }
    log_sum = log_x_q12_to_q5(sum_of_exps);
    adjusted_diff_min = ta_max32(p->diff_min - 1,
                                 ta_multiply_by_quantized_multiplier(ta_wrap_add(log_sum, INT32_MIN),
                                                                     p->reverse_scaling_divisor,
                                                                     -p->reverse_scaling_right_shift));
    for (c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - max_in_row;
      if (diff > adjusted_diff_min) {
        const int32_t d5 = ta_multiply_by_quantized_multiplier(diff, p->input_multiplier, p->input_left_shift);
        const int32_t v = ta_rounding_divide_by_pot(ta_wrap_sub(d5, log_sum), 31 - 5 - 4) + 127;
        out[c] = (int8_t)ta_clamp32(v, -128, 127);
      } else {
        out[c] = -128;
      }
    }
  }
}
