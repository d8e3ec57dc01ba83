/*
 * Elementwise int8 activations:
 *  - ta_requantize_s8: QUANTIZE int8->int8 (reference_ops::Requantize) and RELU / RELU6 /
 *    RELU_N1_TO_1 (TFLite's QuantizedReluX: requantize, then clamp to the activation range).
 *  - ta_lut_s8 + host LUT builders: LOGISTIC and TANH, which the reference resolver evaluates
 *    through a 256-entry table built with float math (LUTPopulate<int8_t>).
 *  - ta_hard_swish_s8: reference_ops::HardSwish<int8_t> (16-bit fixed point).
 *  - ta_leaky_relu_s8: reference_ops::QuantizeLeakyRelu (one multiplier per sign).
 */
#include <math.h>

#include "tinyarena_kernels.h"

void ta_requantize_s8(const ta_requant_params *p, const int8_t *input, int8_t *output, int32_t n) {
  int32_t i;
  for (i = 0; i < n; ++i) {
    const int32_t y = ta_multiply_by_quantized_multiplier(input[i] - p->input_zero_point, p->mult, p->shift);
    output[i] = (int8_t)ta_offset_clamp(y, p->output_zero_point, p->act_min, p->act_max);
  }
}

void ta_leaky_relu_s8(const ta_leaky_relu_params *p, const int8_t *input, int8_t *output, int32_t n) {
  int32_t i;
  for (i = 0; i < n; ++i) {
    const int32_t v = input[i] - p->input_zero_point;
    const int32_t scaled = v >= 0 ? ta_multiply_by_quantized_multiplier(v, p->identity_mult, p->identity_shift)
                                  : ta_multiply_by_quantized_multiplier(v, p->alpha_mult, p->alpha_shift);
    output[i] = (int8_t)ta_clamp32(p->output_zero_point + scaled, -128, 127);
  }
}

void ta_lut_s8(const int8_t *lut, const int8_t *input, int8_t *output, int32_t n) {
  int32_t i;
  for (i = 0; i < n; ++i) output[i] = lut[(uint8_t)input[i]];
}

typedef float (*ta_float_fn)(float);

static float logistic_f(float x) { return 1.0f / (1.0f + expf(-x)); }
static float tanh_f(float x) { return tanhf(x); }

static void lut_populate(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp, ta_float_fn fn,
                         int8_t *lut) {
  const float inverse_scale = 1.0f / out_scale;
  int32_t v;
  for (v = -128; v <= 127; ++v) {
    const float dequantized = in_scale * (float)(v - in_zp);
    const float transformed = fn(dequantized);
    const float rescaled = roundf(transformed * inverse_scale);
    const int32_t quantized = (int32_t)(rescaled + (float)out_zp);
    lut[(uint8_t)(int8_t)v] = (int8_t)ta_clamp32(quantized, -128, 127);
  }
}

void ta_lut_logistic_s8(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp, int8_t lut[256]) {
  lut_populate(in_scale, in_zp, out_scale, out_zp, logistic_f, lut);
}

void ta_lut_tanh_s8(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp, int8_t lut[256]) {
  lut_populate(in_scale, in_zp, out_scale, out_zp, tanh_f, lut);
}

/* ---- 16-bit fixed point as in reference_ops::HardSwish (all values int16_t) ---- */
static int16_t srdhm16(int16_t a, int16_t b) {
  const int32_t ab = (int32_t)a * (int32_t)b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  if (a == b && a == INT16_MIN) return INT16_MAX;
  return (int16_t)((ab + nudge) / (1 << 15));
}

static int16_t sdhm16(int16_t a, int16_t b) { /* rounds toward zero */
  if (a == b && a == INT16_MIN) return INT16_MAX;
  return (int16_t)(((int32_t)a * (int32_t)b) / (1 << 15));
}

static int16_t rounding_divide_by_pot16(int16_t x, int e) {
  const int16_t mask = (int16_t)((1ll << e) - 1);
  const int16_t remainder = (int16_t)(x & mask);
  const int16_t threshold = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
  return (int16_t)((x >> e) + (remainder > threshold ? 1 : 0));
}

static int16_t sat_left_shift16(int16_t v, int amount) {
  int64_t r = (int64_t)v * ((int64_t)1 << amount);
  if (r > INT16_MAX) r = INT16_MAX;
  if (r < INT16_MIN) r = INT16_MIN;
  return (int16_t)r;
}

void ta_hard_swish_s8(const ta_hard_swish_params *p, const int8_t *input, int8_t *output, int32_t n) {
  const int16_t out_fp = (int16_t)p->output_multiplier_fixedpoint_int16;
  const int16_t rel_fp = (int16_t)p->reluish_multiplier_fixedpoint_int16;
  const int rel_exp = p->reluish_multiplier_exponent, out_exp = p->output_multiplier_exponent;
  int32_t i;
  for (i = 0; i < n; ++i) {
    const int16_t input_value = (int16_t)(input[i] - p->input_zero_point);
    const int16_t hires = (int16_t)(input_value * (1 << 7));
    const int16_t preshift_out = srdhm16(hires, out_fp);
    int16_t reluish = hires;
    int16_t pre, out;
    if (rel_exp > 0) reluish = sat_left_shift16(reluish, rel_exp - 1);
    reluish = srdhm16(reluish, rel_fp);
    if (rel_exp > 0) reluish = sat_left_shift16(reluish, 1);
    if (rel_exp < 0) reluish = rounding_divide_by_pot16(reluish, -rel_exp);
    reluish = (int16_t)((reluish + (1 << 15)) >> 1);
    pre = sdhm16(reluish, preshift_out);
    out = rounding_divide_by_pot16(pre, -out_exp);
    out = (int16_t)(out + p->output_zero_point);
    output[i] = (int8_t)(out > 127 ? 127 : (out < -128 ? -128 : out));
  }
}

void ta_quantize_f32_s8(const float *input, int8_t *output, int32_t n, float scale, int32_t zero_point) {
  int32_t i;
  for (i = 0; i < n; ++i) {
    /* limited in float before the cast: any input (huge, infinite, NaN -> -128) is defined */
    const float q = roundf(input[i] / scale), lo = (float)(-128 - zero_point), hi = (float)(127 - zero_point);
    output[i] = (int8_t)((int32_t)(q > lo ? (q < hi ? q : hi) : lo) + zero_point);
  }
}

void ta_dequantize_s8_f32(const int8_t *input, float *output, int32_t n, float scale, int32_t zero_point) {
  int32_t i;
  /* TFLite computes (double)scale * (v - zp) and rounds to float; the double product of a float
   * and a 9-bit integer is exact, so one float multiply gives the same correctly rounded value. */
  for (i = 0; i < n; ++i) output[i] = scale * (float)(input[i] - zero_point);
}
