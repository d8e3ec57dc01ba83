/*
 * UNIDIRECTIONAL_SEQUENCE_LSTM as TFLite's integer kernel computes it (lstm_eval.cc, the 8x8->16
 * path; the gate nonlinearities are gemmlowp's int16 fixed-point logistic and tanh).
 *
 * Int16 fixed point below follows gemmlowp's FixedPoint<int16_t, I> on raw values: I integer
 * bits, 15 - I fractional bits. Plain + and - wrap (as gemmlowp's int16 arithmetic does), products
 * are rounding doubling high multiplies, constants are gemmlowp's int32 constants rounded to 16
 * bits.
 */
#include <string.h>

#include "tinyarena_kernels.h"
#include "tinyarena_requantize.h"

enum { kGateInput = 0, kGateForget = 1, kGateCell = 2, kGateOutput = 3 };

static int16_t fx_add(int16_t a, int16_t b) { return (int16_t)(a + b); }
static int16_t fx_sub(int16_t a, int16_t b) { return (int16_t)(a - b); }
static int16_t fx_neg(int16_t a) { return (int16_t)(-a); }

static int16_t fx_sat(int32_t v) { return (int16_t)(v > INT16_MAX ? INT16_MAX : (v < INT16_MIN ? INT16_MIN : v)); }

/* SaturatingRoundingDoublingHighMul on int16. */
static int16_t fx_mul(int16_t a, int16_t b) {
  const int32_t ab = (int32_t)a * (int32_t)b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  if (a == b && a == INT16_MIN) return INT16_MAX;
  return (int16_t)((ab + nudge) / (1 << 15));
}

/* RoundingDivideByPOT on int16 (ties away from zero). */
static int16_t fx_rdbpot(int16_t x, int e) {
  const int16_t mask = (int16_t)((1 << e) - 1);
  const int16_t remainder = (int16_t)(x & mask);
  const int16_t threshold = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
  return (int16_t)((x >> e) + (remainder > threshold ? 1 : 0));
}

/* SaturatingRoundingMultiplyByPOT for e >= 0 (a saturating left shift). */
static int16_t fx_sat_shl(int16_t x, int e) {
  const int32_t threshold = (1 << (15 - e)) - 1;
  if (e == 0) return x;
  if (x > threshold) return INT16_MAX;
  if (x < -threshold) return INT16_MIN;
  return (int16_t)(x * (1 << e));
}

/* A gemmlowp constant given as its int32 raw value, at 16 bits. */
static int16_t fx_const(int32_t raw32) { return (int16_t)ta_rounding_divide_by_pot(raw32, 16); }

static int16_t fx_rounding_half_sum(int16_t a, int16_t b) {
  const int32_t sum = (int32_t)a + (int32_t)b;
  return (int16_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
}

/* exp(a) for a in [-1/4, 0), Q0.15 in and out. */
static int16_t fx_exp_on_interval(int16_t a) {
  const int16_t constant_term = fx_const(1895147668); /* exp(-1/8) */
  const int16_t one_third = fx_const(715827883);
  const int16_t x = fx_add(a, 1 << 12); /* a + 1/8 */
  const int16_t x2 = fx_mul(x, x), x3 = fx_mul(x2, x), x4 = fx_mul(x2, x2);
  const int16_t x4_over_4 = fx_rdbpot(x4, 2);
  const int16_t poly = fx_rdbpot(fx_add(fx_mul(fx_add(x4_over_4, x3), one_third), x2), 1);
  return fx_sat(constant_term + fx_mul(constant_term, fx_add(x, poly)));
}

/* exp(a) for a <= 0 with `int_bits` integer bits; Q0.15 result. */
static int16_t fx_exp_on_negative_values(int16_t a, int int_bits) {
  static const int32_t kBarrel[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  const int frac = 15 - int_bits;
  const int16_t one_quarter = (int16_t)(1 << (frac - 2));
  const int16_t a_mod_quarter_minus_quarter = fx_sub((int16_t)(a & (one_quarter - 1)), one_quarter);
  const int16_t remainder = fx_sub(a_mod_quarter_minus_quarter, a);
  int16_t result = fx_exp_on_interval(fx_sat_shl(a_mod_quarter_minus_quarter, int_bits));
  int exponent;
  for (exponent = -2; exponent <= 4; ++exponent) {
    if (int_bits > exponent && (remainder & (1 << (frac + exponent))) != 0)
      result = fx_mul(result, fx_const(kBarrel[exponent + 2]));
  }
  if (int_bits > 5 && a < fx_const(-(1 << (36 - int_bits)))) result = 0;
  return a == 0 ? INT16_MAX : result;
}

/* Newton-Raphson reciprocal of (1 + a) / 2 for a in [0, 1), Q2.13 (gemmlowp's three steps). */
static int16_t fx_reciprocal_half_denominator(int16_t half_denominator) {
  const int16_t one = 1 << 13;
  int16_t x = fx_add(fx_const(1515870810), fx_mul(half_denominator, fx_const(-1010580540))); /* 48/17 - 32/17 d */
  int i;
  for (i = 0; i < 3; ++i) {
    const int16_t one_minus_dx = fx_sub(one, fx_mul(half_denominator, x));
    x = fx_add(x, fx_sat_shl(fx_mul(x, one_minus_dx), 2));
  }
  return x;
}

/* 1 / (1 + a), a in [0, 1), Q0.15. */
static int16_t fx_one_over_one_plus_x(int16_t a) {
  return fx_sat_shl(fx_reciprocal_half_denominator(fx_rounding_half_sum(a, INT16_MAX)), 1);
}

/* (1 - a) / (1 + a), a in [0, 1), Q0.15. */
static int16_t fx_one_minus_x_over_one_plus_x(int16_t a) {
  return fx_sat_shl(fx_sub(fx_reciprocal_half_denominator(fx_rounding_half_sum(a, INT16_MAX)), 1 << 13), 2);
}

/* gemmlowp::logistic of a Q(int_bits) value, Q0.15 result. */
static int16_t fx_logistic(int16_t a, int int_bits) {
  const int16_t magnitude = a > 0 ? a : fx_neg(a);
  const int16_t positive = fx_one_over_one_plus_x(fx_exp_on_negative_values(fx_neg(magnitude), int_bits));
  if (a == 0) return fx_const(1 << 30);
  return a > 0 ? positive : fx_sub(INT16_MAX, positive);
}

/* gemmlowp::tanh of a Q(int_bits) value, Q0.15 result. */
static int16_t fx_tanh(int16_t a, int int_bits) {
  const int16_t negative = a < 0 ? a : fx_neg(a);
  const int16_t t = fx_one_minus_x_over_one_plus_x(fx_exp_on_negative_values(negative, int_bits + 1));
  if (a == 0) return 0;
  return a < 0 ? fx_neg(t) : t;
}

/* clamp16(mbqm(bias + w_row . v, mult, shift) + acc): one row of MatrixBatchVectorMultiplyAccumulate. */
static int16_t accumulate_row(const int8_t *w_row, const int8_t *v, int32_t n, int32_t bias, int32_t mult,
                              int32_t shift, int16_t acc) {
  int32_t dot = bias, c;
  for (c = 0; c < n; ++c) dot += (int32_t)w_row[c] * (int32_t)v[c];
  return fx_sat(ta_multiply_by_quantized_multiplier(dot, mult, shift) + acc);
}

/* Gate g of cell r: both matrix products (input first, as TFLite adds them), then sigmoid (tanh
 * for the cell gate) of the Q3.12 sum. */
static int16_t gate(const ta_lstm_params *p, int g, int32_t r, const int8_t *x, const int8_t *h) {
  const int16_t from_input = accumulate_row(p->input_weights[g] + (size_t)r * (size_t)p->n_input, x, p->n_input,
                                            p->input_bias[g][r], p->input_mult[g], p->input_shift[g], 0);
  const int16_t sum = accumulate_row(p->recurrent_weights[g] + (size_t)r * (size_t)p->n_cell, h, p->n_cell,
                                     p->recurrent_bias[g][r], p->recurrent_mult[g], p->recurrent_shift[g], from_input);
  return g == kGateCell ? fx_tanh(sum, 3) : fx_logistic(sum, 3);
}

/* One step. Every gate of every cell reads the previous hidden state, and everything after the
 * matrix products is per cell, so TFLite's gate-by-gate order and this cell-by-cell one give the
 * same values: c = f * c + i * g (i = 1 - f with CIFG), clipped; h = o * tanh(c) requantized.
 * The new hidden state goes to `next` (the step's output row, which nothing reads during the
 * step) and is copied to `hidden` when the step is done. */
static void lstm_step(const ta_lstm_params *p, const int8_t *x, int8_t *hidden, int16_t *cell, int8_t *next) {
  const int cell_shift = 30 + p->cell_scale_log2, tanh_int_bits = 15 + p->cell_scale_log2;
  int32_t r;
  for (r = 0; r < p->n_cell; ++r) {
    const int16_t forget = gate(p, kGateForget, r, x, hidden);
    const int16_t candidate = gate(p, kGateCell, r, x, hidden);
    const int16_t input = p->use_cifg ? (int16_t)(INT16_MAX - forget) : gate(p, kGateInput, r, x, hidden);
    const int16_t kept = (int16_t)ta_rounding_divide_by_pot((int32_t)forget * cell[r], 15);
    const int16_t added = (int16_t)ta_rounding_divide_by_pot((int32_t)input * candidate, cell_shift);
    int16_t c = fx_sat((int32_t)kept + added);
    if (p->cell_clip > 0) c = (int16_t)ta_clamp32(c, -p->cell_clip, p->cell_clip);
    cell[r] = c;
    {
      const int32_t product = (int32_t)gate(p, kGateOutput, r, x, hidden) * fx_tanh(c, tanh_int_bits);
      const int32_t scaled = ta_multiply_by_quantized_multiplier(product, p->hidden_mult, p->hidden_shift);
      next[r] = (int8_t)ta_clamp32(scaled + p->hidden_zero_point, -128, 127);
    }
  }
  memcpy(hidden, next, (size_t)p->n_cell);
}

/* Every step of every batch; a step's input row is read from `input` or, with `float_input`,
 * quantized from it into `step_input` first. */
static void run_sequence(const ta_lstm_params *p, const int8_t *input, const float *float_input, int8_t *step_input,
                         int8_t *hidden, int16_t *cell, int8_t *output) {
  int32_t b, t;
  for (b = 0; b < p->batches; ++b) {
    int8_t *h = hidden + (size_t)b * (size_t)p->n_cell;
    int16_t *c = cell + (size_t)b * (size_t)p->n_cell;
    for (t = 0; t < p->steps; ++t) {
      const int32_t row = p->time_major ? t * p->batches + b : b * p->steps + t;
      const int32_t out_row = p->output_last_step_only ? b : row;
      const size_t first = (size_t)row * (size_t)p->n_input;
      if (float_input)
        ta_quantize_f32_s8(float_input + first, step_input, p->n_input, p->input_scale, p->input_zero_point);
      lstm_step(p, float_input ? step_input : input + first, h, c, output + (size_t)out_row * (size_t)p->n_cell);
    }
  }
}

void ta_lstm_s8(const ta_lstm_params *p, const int8_t *input, int8_t *hidden, int16_t *cell, int8_t *output) {
  run_sequence(p, input, NULL, NULL, hidden, cell, output);
}

size_t ta_lstm_s8_float_input_scratch_bytes(const ta_lstm_params *p) { return (size_t)p->n_input; }

void ta_lstm_s8_float_input(const ta_lstm_params *p, const float *input, int8_t *step_input, int8_t *hidden,
                            int16_t *cell, int8_t *output) {
  run_sequence(p, NULL, input, step_input, hidden, cell, output);
}

void ta_lstm_s8_reset_state(const ta_lstm_params *p, int8_t *hidden, int16_t *cell) {
  const size_t n = (size_t)p->batches * (size_t)p->n_cell;
  memset(hidden, p->state_zero_point, n);
  memset(cell, 0, n * sizeof(int16_t));
}
