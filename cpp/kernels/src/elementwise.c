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
 * Every kernel walks the output as runs along merged dims (ta_walk below). ADD and MUL compute
 * each element in a short exact form prepared once per call (ta_eltwise_rq.h: on Cortex-M4 about
 * 20 and 13 instructions an element, SSAT in place of the clamp without an activation), where the
 * params allow it: TFLite's ADD params (one input at multiplier 0.5), output shifts -1..-22 (MUL
 * also 0..14), double rounding. Others run TFLite's per-element arithmetic as written.
 */
#include "tinyarena_kernels.h"

#include "ta_eltwise_rq.h"
#include "ta_internal.h"

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

/*
 * The broadcast walk: the output in row-major order as runs of `n` elements along which each input
 * advances by s1 / s2 (1, or 0 where it is broadcast). Adjacent output dims with the same broadcast
 * pattern are merged first, so equal shapes are one run, a [.., C] vector against a
 * [.., H, W, C] map (either side) H*W runs of C, and a scalar one run with stride 0. The runs'
 * starts in each input come from the outer (merged) dims, advanced by walk_next.
 */
typedef struct ta_walk {
  int32_t n, s1, s2, off1, off2, nd;
  int32_t dim[TA_MAX_DIMS], st1[TA_MAX_DIMS], st2[TA_MAX_DIMS], idx[TA_MAX_DIMS];
} ta_walk;

/* 0 if the output is empty. */
TA_NOINLINE static int walk_init(ta_walk *w, const int32_t *shape1, const int32_t *shape2, const int32_t *os) {
  int32_t size[TA_MAX_DIMS], f1[TA_MAX_DIMS], f2[TA_MAX_DIMS], k = 0, d, run1 = 1, run2 = 1;
  for (d = 0; d < TA_MAX_DIMS; ++d) {
    const int32_t b1 = shape1[d] == os[d], b2 = shape2[d] == os[d]; /* 1: the input spans dim d */
    if (os[d] == 0) return 0;
    if (os[d] == 1) continue;
    if (k > 0 && f1[k - 1] == b1 && f2[k - 1] == b2) {
      size[k - 1] *= os[d];
    } else {
      size[k] = os[d], f1[k] = b1, f2[k] = b2;
      ++k;
    }
  }
  if (k == 0) size[0] = f1[0] = f2[0] = k = 1;
  for (d = k - 1; d >= 0; --d) {
    w->dim[d] = size[d], w->idx[d] = 0;
    w->st1[d] = f1[d] ? run1 : 0, w->st2[d] = f2[d] ? run2 : 0;
    run1 *= f1[d] ? size[d] : 1, run2 *= f2[d] ? size[d] : 1;
  }
  w->nd = k - 1, w->n = size[k - 1], w->s1 = w->st1[k - 1], w->s2 = w->st2[k - 1], w->off1 = w->off2 = 0;
  return 1;
}

/* Moves to the next run; 0 after the last. */
TA_NOINLINE static int walk_next(ta_walk *w) {
  int32_t d;
  for (d = w->nd - 1; d >= 0; --d) {
    w->off1 += w->st1[d], w->off2 += w->st2[d];
    if (++w->idx[d] < w->dim[d]) return 1;
    w->idx[d] = 0;
    w->off1 -= w->st1[d] * w->dim[d], w->off2 -= w->st2[d] * w->dim[d];
  }
  return 0;
}

/* out = FN(Q, a, b) elementwise along the walk of inputs A, B of shapes SA, SB; contiguous runs get
 * an indexed loop. */
#define TA_BINARY_WALK(T, FN, Q, A, B, SA, SB)                                              \
  do {                                                                                      \
    ta_walk w;                                                                              \
    if (!walk_init(&w, SA, SB, p->out_shape)) break;                                        \
    do {                                                                                    \
      const T *a = (A) + w.off1, *b = (B) + w.off2;                                         \
      int32_t i;                                                                            \
      if (w.s1 & w.s2)                                                                      \
        for (i = 0; i < w.n; ++i) out[i] = FN(Q, a[i], b[i]);                               \
      else                                                                                  \
        for (i = 0; i < w.n; ++i, a += w.s1, b += w.s2) out[i] = FN(Q, *a, *b);             \
      out += w.n;                                                                           \
    } while (walk_next(&w));                                                                \
  } while (0)
#define TA_BINARY_LOOP(T, FN, Q) TA_BINARY_WALK(T, FN, Q, in1, in2, p->shape1, p->shape2)

/* ADD in its short form (ta_eltwise_rq.h), prepared once per call: the input of multiplier 0.5
 * (both when the scales are equal; with `swap` it is input2) as "half", the other's stage `o`. */
typedef struct add_fast {
  int32_t g, k; /* half: 2 * stage(v) = v * g + k */
  ta_add_in o;
  ta_rqd q;     /* q.oo == 0 */
  int32_t lo, hi;
} add_fast;

static int add_fast_prep(add_fast *f, const ta_binary_params *p, int *swap) {
  const int32_t ls = p->left_shift;
  *swap = !ta_add_half_prep(&f->g, &f->k, p->input1_offset, p->input1_mult, p->input1_shift, ls);
  if (*swap ? !ta_add_half_prep(&f->g, &f->k, p->input2_offset, p->input2_mult, p->input2_shift, ls) ||
                  !ta_add_in_prep(&f->o, p->input1_offset, p->input1_mult, p->input1_shift, ls)
            : !ta_add_in_prep(&f->o, p->input2_offset, p->input2_mult, p->input2_shift, ls))
    return 0;
  f->q = ta_eltwise_rqd_prep(p->output_mult, p->output_shift, p->output_offset);
  f->lo = p->act_min, f->hi = p->act_max;
  return f->q.r >= 0 && f->q.oo == 0;
}

static inline int32_t add_fast_value(const add_fast *f, int32_t half, int32_t other) {
  const int32_t x = half * f->g + f->k + 2 * ta_add_in_apply(&f->o, other);
  return ta_smmlar(x, f->q.m, f->q.c + (x >> 31)) >> f->q.r;
}

/* With the activation's clamp, and without one (the full int8 range: a saturation). */
static inline int8_t add_fast_clamp(const add_fast *f, int32_t half, int32_t other) {
  return (int8_t)ta_clamp_act(add_fast_value(f, half, other), f->lo, f->hi);
}

static inline int8_t add_fast_sat(const add_fast *f, int32_t half, int32_t other) {
  return (int8_t)ta_sat8(add_fast_value(f, half, other));
}

/* MUL in its short form (ta_eltwise_rq.h), prepared once per call. */
typedef struct mul_fast {
  int32_t off1, g2, k2, sm;
  ta_rqd q;
  int32_t lo, hi;
} mul_fast;

static int mul_fast_prep(mul_fast *f, const ta_binary_params *p) {
  if (!ta_mul_prep(&f->q, &f->g2, &f->sm, p->output_mult, p->output_shift, p->output_offset)) return 0;
  f->off1 = p->input1_offset, f->k2 = p->input2_offset * f->g2, f->lo = p->act_min, f->hi = p->act_max;
  return f->q.oo == 0 && p->input1_offset >= -128 && p->input1_offset <= 128 && p->input2_offset >= -128 &&
         p->input2_offset <= 128;
}

static inline int32_t mul_fast_value(const mul_fast *f, int32_t x, int32_t y) {
  const int32_t v = (x + f->off1) * (y * f->g2 + f->k2);
  return ta_smmlar(v, f->q.m, f->q.c + ((v >> 31) & f->sm)) >> f->q.r;
}

static inline int8_t mul_fast_clamp(const mul_fast *f, int32_t x, int32_t y) {
  return (int8_t)ta_clamp_act(mul_fast_value(f, x, y), f->lo, f->hi);
}

static inline int8_t mul_fast_sat(const mul_fast *f, int32_t x, int32_t y) {
  return (int8_t)ta_sat8(mul_fast_value(f, x, y));
}

void ta_add_s8(const ta_binary_params *p, const int8_t *in1, const int8_t *in2, int8_t *out) {
  add_fast f;
  int swap;
  if (add_fast_prep(&f, p, &swap)) {
    const int8_t *half = swap ? in2 : in1, *other = swap ? in1 : in2;
    const int32_t *half_shape = swap ? p->shape2 : p->shape1, *other_shape = swap ? p->shape1 : p->shape2;
    if (f.lo <= -128 && f.hi >= 127)
      TA_BINARY_WALK(int8_t, add_fast_sat, &f, half, other, half_shape, other_shape);
    else
      TA_BINARY_WALK(int8_t, add_fast_clamp, &f, half, other, half_shape, other_shape);
  } else {
    TA_BINARY_LOOP(int8_t, add_one, p);
  }
}

void ta_mul_s8(const ta_binary_params *p, const int8_t *in1, const int8_t *in2, int8_t *out) {
  mul_fast f;
  if (!mul_fast_prep(&f, p))
    TA_BINARY_LOOP(int8_t, mul_one, p);
  else if (f.lo <= -128 && f.hi >= 127)
    TA_BINARY_LOOP(int8_t, mul_fast_sat, &f);
  else
    TA_BINARY_LOOP(int8_t, mul_fast_clamp, &f);
}

void ta_squared_difference_s8(const ta_binary_params *p, const int8_t *in1, const int8_t *in2, int8_t *out) {
  TA_BINARY_LOOP(int8_t, squared_difference_one, p);
}

void ta_add_f32(const ta_binary_f32_params *p, const float *in1, const float *in2, float *out) {
  TA_BINARY_LOOP(float, add_f32_one, p);
}

void ta_sub_f32(const ta_binary_f32_params *p, const float *in1, const float *in2, float *out) {
  TA_BINARY_LOOP(float, sub_f32_one, p);
}

void ta_mul_f32(const ta_binary_f32_params *p, const float *in1, const float *in2, float *out) {
  TA_BINARY_LOOP(float, mul_f32_one, p);
}
