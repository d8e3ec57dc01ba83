/*
 * ADD / SUB / MUL / SQUARED_DIFFERENCE int8 with numpy broadcasting (TFLite
 * reference_integer_ops::Add/Mul and the broadcasting loops around them).
 * ADD: both inputs are shifted left by left_shift (20), scaled to a common scale with their
 * own multipliers, summed, then scaled to the output (MultiplyByQuantizedMultiplierSmallerThanOneExp).
 * SUB runs as ADD with input2_mult negated (what TFLite's sub.cc does for int8).
 * MUL: (in1 + off1) * (in2 + off2) scaled by one multiplier.
 * SQUARED_DIFFERENCE: as ADD with left_shift 7, but the scaled inputs' difference is squared
 * before the output multiplier (its square fits int32: |diff| < 2^15).
 * Float32 ADD / SUB / MUL (reference_ops Add/Sub/Mul and their 6-D broadcasting loops): one
 * float32 operation per element, then TFLite's ActivationFunctionWithMinMax clamp,
 * min(max(x, act_min), act_max) with std::max / std::min's comparisons (so no activation clamps
 * an infinity to +-FLT_MAX and NaN passes through). Build with -ffp-contract=off (the generated
 * Makefile does) so no multiply-add is fused across calls.
 * Each output element is written after both of its inputs are read, in row-major order, so
 * `out` may alias an input that has the output's shape (in-place ADD/MUL).
 */
#include "tinyarena_kernels.h"

static inline int8_t add_one(const ta_binary_params *p, int32_t x, int32_t y) {
  const int32_t a = ta_multiply_by_quantized_multiplier_below_one(ta_wrap_shl(x + p->input1_offset, p->left_shift),
                                                                  p->input1_mult, p->input1_shift);
  const int32_t b = ta_multiply_by_quantized_multiplier_below_one(ta_wrap_shl(y + p->input2_offset, p->left_shift),
                                                                  p->input2_mult, p->input2_shift);
  const int32_t r = ta_multiply_by_quantized_multiplier_below_one(ta_wrap_add(a, b), p->output_mult, p->output_shift);
  return (int8_t)ta_offset_clamp(r, p->output_offset, p->act_min, p->act_max);
}

static inline int8_t squared_difference_one(const ta_binary_params *p, int32_t x, int32_t y) {
  const int32_t a = ta_multiply_by_quantized_multiplier_below_one((x + p->input1_offset) * (1 << p->left_shift),
                                                                  p->input1_mult, p->input1_shift);
  const int32_t b = ta_multiply_by_quantized_multiplier_below_one((y + p->input2_offset) * (1 << p->left_shift),
                                                                  p->input2_mult, p->input2_shift);
  const int32_t r = ta_multiply_by_quantized_multiplier_below_one((a - b) * (a - b), p->output_mult, p->output_shift) +
                    p->output_offset;
  return (int8_t)ta_clamp32(r, p->act_min, p->act_max);
}

static inline int8_t mul_one(const ta_binary_params *p, int32_t x, int32_t y) {
  const int32_t r = ta_multiply_by_quantized_multiplier((x + p->input1_offset) * (y + p->input2_offset), p->output_mult,
                                                        p->output_shift);
  return (int8_t)ta_offset_clamp(r, p->output_offset, p->act_min, p->act_max);
}

/* std::min(std::max(x, lo), hi), comparison for comparison. */
static inline float clamp_f32(const ta_binary_f32_params *p, float x) {
  const float low = x < p->act_min ? p->act_min : x;
  return p->act_max < low ? p->act_max : low;
}

static inline float add_f32_one(const ta_binary_f32_params *p, float x, float y) { return clamp_f32(p, x + y); }
static inline float sub_f32_one(const ta_binary_f32_params *p, float x, float y) { return clamp_f32(p, x - y); }
static inline float mul_f32_one(const ta_binary_f32_params *p, float x, float y) { return clamp_f32(p, x * y); }

static int32_t total(const int32_t *s) {
  int32_t n = 1, i;
  for (i = 0; i < TA_MAX_DIMS; ++i) n *= s[i];
  return n;
}

static int same_shape(const int32_t *a, const int32_t *b) {
  int i;
  for (i = 0; i < TA_MAX_DIMS; ++i)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* Element strides of an input over the output index space (0 along broadcast dims). */
static void bstrides(const int32_t *shape, int32_t *st) {
  int32_t s = 1, i;
  for (i = TA_MAX_DIMS - 1; i >= 0; --i) {
    st[i] = shape[i] == 1 ? 0 : s;
    s *= shape[i];
  }
}

#define TA_BINARY_LOOP(T, FN)                                                                     \
  do {                                                                                           \
    const int32_t *os = p->out_shape;                                                            \
    if (same_shape(p->shape1, os) && same_shape(p->shape2, os)) {                                \
      const int32_t n = total(os);                                                               \
      int32_t i;                                                                                 \
      for (i = 0; i < n; ++i) out[i] = FN(p, in1[i], in2[i]);                                    \
    } else {                                                                                     \
      int32_t s1[TA_MAX_DIMS], s2[TA_MAX_DIMS], i0, i1, i2, i3, i4, i5;                          \
      T *o = out;                                                                                \
      bstrides(p->shape1, s1);                                                                   \
      bstrides(p->shape2, s2);                                                                   \
      for (i0 = 0; i0 < os[0]; ++i0)                                                             \
        for (i1 = 0; i1 < os[1]; ++i1)                                                           \
          for (i2 = 0; i2 < os[2]; ++i2)                                                         \
            for (i3 = 0; i3 < os[3]; ++i3)                                                       \
              for (i4 = 0; i4 < os[4]; ++i4) {                                                   \
                const int32_t b1 = i0 * s1[0] + i1 * s1[1] + i2 * s1[2] + i3 * s1[3] + i4 * s1[4]; \
                const int32_t b2 = i0 * s2[0] + i1 * s2[1] + i2 * s2[2] + i3 * s2[3] + i4 * s2[4]; \
                for (i5 = 0; i5 < os[5]; ++i5) *o++ = FN(p, in1[b1 + i5 * s1[5]], in2[b2 + i5 * s2[5]]); \
              }                                                                                  \
    }                                                                                            \
  } while (0)

void ta_add_s8(const ta_binary_params *p, const int8_t *in1, const int8_t *in2, int8_t *out) {
  TA_BINARY_LOOP(int8_t, add_one);
}

void ta_mul_s8(const ta_binary_params *p, const int8_t *in1, const int8_t *in2, int8_t *out) {
  TA_BINARY_LOOP(int8_t, mul_one);
}

void ta_squared_difference_s8(const ta_binary_params *p, const int8_t *in1, const int8_t *in2, int8_t *out) {
  TA_BINARY_LOOP(int8_t, squared_difference_one);
}

void ta_add_f32(const ta_binary_f32_params *p, const float *in1, const float *in2, float *out) {
  TA_BINARY_LOOP(float, add_f32_one);
}

void ta_sub_f32(const ta_binary_f32_params *p, const float *in1, const float *in2, float *out) {
  TA_BINARY_LOOP(float, sub_f32_one);
}

void ta_mul_f32(const ta_binary_f32_params *p, const float *in1, const float *in2, float *out) {
  TA_BINARY_LOOP(float, mul_f32_one);
}
