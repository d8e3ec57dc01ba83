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
 * each element in a short exact form prepared once per call (ta_eltwise_rq.h; SSAT in place of
 * the clamp without an activation), where the params allow it: TFLite's ADD params (one input at
 * multiplier 0.5), output shifts -1..-22 (MUL also 0..14), double rounding. Others run TFLite's
 * per-element arithmetic as written. On the DSP cores two paths apply the same integers faster:
 * ADD through a per-call table of the other input's term (add_lut_walk), MUL 4 outputs at a time
 * on 2x16-bit pairs (mul_simd_walk). Cortex-M4, mcunet_se_224_int8io (codegen_profile.py): ADD
 * 20.0 -> 10.4 instructions an output (77,616 outputs, residual ADDs of equal shapes), MUL 13.4 ->
 * 8.4 (about 137,600, mostly [1, H, W, C] maps times a [1, 1, 1, C] vector).
 */
#include "tinyarena_kernels.h"

#include "ta_eltwise_rq.h"
#include "ta_internal.h"
#include "ta_simd.h"

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

/* out = FN(Q, a, b) elementwise along the walk of inputs A, B of shapes SA, SB. INDEXED (a
 * constant): contiguous runs get an indexed loop of their own -- for the short forms, where the
 * pointer steps are a large share of an element; the general forms run one strided loop (half
 * the code). */
#define TA_BINARY_WALK(T, FN, Q, A, B, SA, SB, INDEXED)                                     \
  do {                                                                                      \
    ta_walk w;                                                                              \
    if (!walk_init(&w, SA, SB, p->out_shape)) break;                                        \
    do {                                                                                    \
      const T *a = (A) + w.off1, *b = (B) + w.off2;                                         \
      int32_t i;                                                                            \
      if ((INDEXED) && (w.s1 & w.s2))                                                       \
        for (i = 0; i < w.n; ++i) out[i] = FN(Q, a[i], b[i]);                               \
      else                                                                                  \
        for (i = 0; i < w.n; ++i, a += w.s1, b += w.s2) out[i] = FN(Q, *a, *b);             \
      out += w.n;                                                                           \
    } while (walk_next(&w));                                                                \
  } while (0)
#define TA_BINARY_LOOP(T, FN, Q) TA_BINARY_WALK(T, FN, Q, in1, in2, p->shape1, p->shape2, 0)
#define TA_BINARY_FAST_LOOP(T, FN, Q) TA_BINARY_WALK(T, FN, Q, in1, in2, p->shape1, p->shape2, 1)

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

/* ta_rqd_apply of an output stage whose offset is 0 (add_fast_prep and mul_fast_prep require it),
 * the 0 a constant the compiler folds: ADD's x = 2 * (the sum of the two stages), MUL's doubled
 * product. */
static inline int32_t rqd_no_offset(ta_rqd q, int32_t doubled) {
  q.oo = 0;
  return ta_rqd_apply(q, doubled);
}

static inline int32_t add_fast_value(const add_fast *f, int32_t half, int32_t other) {
  return rqd_no_offset(f->q, half * f->g + f->k + 2 * ta_add_in_apply(&f->o, other));
}

/* With the activation's clamp, and without one (the full int8 range: a saturation). */
static inline int8_t add_fast_clamp(const add_fast *f, int32_t half, int32_t other) {
  return (int8_t)ta_clamp_act(add_fast_value(f, half, other), f->lo, f->hi);
}

static inline int8_t add_fast_sat(const add_fast *f, int32_t half, int32_t other) {
  return (int8_t)ta_sat8(add_fast_value(f, half, other));
}

#if TA_SIMD
/*
 * ADD through a table of the other input's term, every call of the short form on the DSP builds
 * (whose conv kernels' frames are larger than its 1 KB table; the portable build, for the
 * smallest cores, keeps its stack and the per-element form): t[v] = k + 2 * stage(v) for every
 * int8 v, so x = half * g + t[other] is the integer add_fast_value forms (no new arithmetic) --
 * one load in place of the stage's four instructions (Cortex-M4: 9 instructions an output and a
 * quarter of the loop's 5). The table is 1 KB of stack, built once per call (256 stage
 * evaluations, about 2,000 instructions: more than it saves on calls under about 200 outputs,
 * which real models rarely have; one path is half the code of two).
 */

static TA_ALWAYS_INLINE int8_t add_lut_one(const ta_rqd *q, const int32_t *t, int32_t g, int32_t half, int32_t other,
                                         int sat, int32_t lo, int32_t hi) {
  const int32_t v = rqd_no_offset(*q, half * g + t[other]);
  return (int8_t)(sat ? ta_sat8(v) : ta_clamp_act(v, lo, hi));
}

/* The walk's runs, contiguous ones four outputs an iteration (all read before any is written:
 * `out` may be an input); the constants are locals so the int8 stores, which may alias anything,
 * do not reload them. */
static TA_ALWAYS_INLINE void add_lut_runs(const add_fast *f, const int32_t *t, const int8_t *half, const int8_t *other,
                                          ta_walk *w, int8_t *out, int sat) {
  const int32_t g = f->g, lo = f->lo, hi = f->hi;
  const ta_rqd q = f->q;
  do {
    const int8_t *a = half + w->off1, *b = other + w->off2;
    const int32_t s1 = w->s1, s2 = w->s2;
    int8_t *const end = out + w->n;
    if (s1 & s2)
      for (; out + 4 <= end; out += 4, a += 4, b += 4) {
        const int32_t a0 = a[0], b0 = b[0], a1 = a[1], b1 = b[1], a2 = a[2], b2 = b[2], a3 = a[3], b3 = b[3];
        out[0] = add_lut_one(&q, t, g, a0, b0, sat, lo, hi);
        out[1] = add_lut_one(&q, t, g, a1, b1, sat, lo, hi);
        out[2] = add_lut_one(&q, t, g, a2, b2, sat, lo, hi);
        out[3] = add_lut_one(&q, t, g, a3, b3, sat, lo, hi);
      }
    for (; out < end; ++out, a += s1, b += s2) *out = add_lut_one(&q, t, g, *a, *b, sat, lo, hi);
  } while (walk_next(w));
}

TA_NOINLINE static void add_lut_walk(const add_fast *f, const int8_t *half, const int8_t *other, ta_walk *w,
                                     int8_t *out) {
  int32_t table[256], v;
  for (v = -128; v < 128; ++v) table[v + 128] = f->k + 2 * ta_add_in_apply(&f->o, v);
  if (f->lo <= -128 && f->hi >= 127)
    add_lut_runs(f, table + 128, half, other, w, out, 1);
  else
    add_lut_runs(f, table + 128, half, other, w, out, 0);
}
#endif

/* MUL in its short form (ta_eltwise_rq.h), prepared once per call. */
typedef struct mul_fast {
  int32_t off1, off2, g2, k2, sm;
  ta_rqd q;
  int32_t lo, hi;
} mul_fast;

static int mul_fast_prep(mul_fast *f, const ta_binary_params *p) {
  if (!ta_mul_prep(&f->q, &f->g2, &f->sm, p->output_mult, p->output_shift, p->output_offset)) return 0;
  f->off1 = p->input1_offset, f->off2 = p->input2_offset, f->k2 = p->input2_offset * f->g2, f->lo = p->act_min, f->hi = p->act_max;
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

#if TA_SIMD
/*
 * MUL 4 outputs at a time along runs where both inputs advance (equal shapes; a [.., C] vector
 * against a map), for output shifts <= -1 (g2 = 2, the sign term on) and no activation clamp:
 * SXTAB16 widens 4 bytes of each input to (v + off) pairs in the order (bytes 0, 2) and (1, 3),
 * one input's doubled (SADD16) into `pairs` a chunk of TA_MUL_CHUNK at a time, and SMLABB / SMLATT
 * give the products (x + off1) * 2 (y + off2) -- the integer mul_fast_value forms (|.| <= 256 * 512,
 * every lane within int16) -- then its requantization and SSAT. The doubled side is a broadcast
 * vector where there is one (input 1 if it does not advance along the outer dims), so its pairs
 * are formed once per call: a chunk is rebuilt only when its bytes' address changes, and bytes
 * read twice belong to an input broadcast over the output, which `out` cannot alias. Cortex-M4:
 * 30 instructions a quad (7.5 an output) plus about 15 a run. 512 B of stack for the pairs.
 */
#define TA_MUL_CHUNK 256

typedef struct mul_simd {
  const mul_fast *f;
  ta_rqd q;
  int32_t ox, oy;   /* the offsets, both lanes, of the single and the doubled side */
  int32_t y_is_1;   /* input 1 is the doubled side */
  const int8_t *at; /* the bytes `pairs` holds, 0: none */
  int32_t count;    /* ... and their count */
  int32_t pairs[TA_MUL_CHUNK / 2];
} mul_simd;

/* n outputs one at a time (a run's tail, or a strided run), out of line: it is short. */
TA_NOINLINE static void mul_tail(const mul_fast *f, const int8_t *a, const int8_t *b, int32_t n, int32_t s1, int32_t s2,
                                 int8_t *out) {
  for (; n > 0; --n, a += s1, b += s2) *out++ = mul_fast_sat(f, *a, *b);
}

static TA_ALWAYS_INLINE int8_t mul_out(const ta_rqd *q, int32_t v) {
  return (int8_t)ta_ssat8(rqd_no_offset(*q, v));
}

/* `m` (a multiple of 4) outputs of the single side x against the doubled pairs of the other. */
TA_NOINLINE static void mul_quads(const ta_rqd *q, const int8_t *x, int32_t ox, const int32_t *pairs, int32_t m, int8_t *out) {
  const ta_rqd r = *q;
  int8_t *const end = out + m;
  for (; out < end; out += 4, x += 4, pairs += 2) {
    const int32_t w = ta_read32(x), x02 = ta_sxtab16(ox, w), x13 = ta_sxtab16_ror8(ox, w);
    const int32_t y02 = pairs[0], y13 = pairs[1]; /* read before the stores, which may alias them */
    out[0] = mul_out(&r, ta_smlabb(x02, y02, 0));
    out[1] = mul_out(&r, ta_smlabb(x13, y13, 0));
    out[2] = mul_out(&r, ta_smlatt(x02, y02, 0));
    out[3] = mul_out(&r, ta_smlatt(x13, y13, 0));
  }
}

/* The doubled pairs of the m bytes (a multiple of 4) at y, unless `pairs` holds them already. */
static void mul_pairs(mul_simd *c, const int8_t *y, int32_t m) {
  int32_t i;
  if (c->at == y && c->count == m) return;
  for (i = 0; i < m; i += 4) {
    const int32_t w = ta_read32(y + i), p02 = ta_sxtab16(c->oy, w), p13 = ta_sxtab16_ror8(c->oy, w);
    c->pairs[i / 2] = ta_sadd16(p02, p02), c->pairs[i / 2 + 1] = ta_sadd16(p13, p13);
  }
  c->at = y, c->count = m;
}

/* `rows` runs of n where both inputs advance, the inputs' starts `sa` / `sb` apart: chunks of quads,
 * then each run's tail; a doubled side that does not advance (a vector) has its pairs formed once. */
TA_NOINLINE static void mul_simd_rows(mul_simd *c, const int8_t *a, const int8_t *b, int32_t n, int32_t rows,
                                      int32_t sa, int32_t sb, int8_t *out) {
  const int32_t m4 = n & ~3;
  if ((c->y_is_1 ? sa : sb) == 0 && n <= TA_MUL_CHUNK) {
    const int8_t *y = c->y_is_1 ? a : b;
    const int32_t sx = c->y_is_1 ? sb : sa;
    const int8_t *x = c->y_is_1 ? b : a;
    mul_pairs(c, y, m4);
    for (; rows > 0; --rows, a += sa, b += sb, x += sx, out += n) {
      mul_quads(&c->q, x, c->ox, c->pairs, m4, out);
      if (m4 < n) mul_tail(c->f, a + m4, b + m4, n - m4, 1, 1, out + m4);
    }
    return;
  }
  for (; rows > 0; --rows, a += sa, b += sb, out += n) {
    const int8_t *x = c->y_is_1 ? b : a, *y = c->y_is_1 ? a : b;
    int32_t j = 0;
    while (n - j >= 4) {
      const int32_t m = (n - j < TA_MUL_CHUNK ? n - j : TA_MUL_CHUNK) & ~3;
      mul_pairs(c, y + j, m);
      mul_quads(&c->q, x + j, c->ox, c->pairs, m, out + j);
      j += m;
    }
    if (j < n) mul_tail(c->f, a + j, b + j, n - j, 1, 1, out + j);
  }
}

TA_NOINLINE static void mul_simd_walk(const mul_fast *f, const int8_t *in1, const int8_t *in2, ta_walk *w,
                                      int8_t *out) {
  mul_simd c;
  int32_t d, outer1 = 0;
  for (d = 0; d < w->nd; ++d) outer1 |= w->st1[d];
  c.f = f, c.q = f->q, c.at = 0, c.count = 0, c.y_is_1 = w->nd > 0 && outer1 == 0;
  c.ox = c.y_is_1 ? ta_pair16(f->off2, f->off2) : ta_pair16(f->off1, f->off1);
  c.oy = c.y_is_1 ? ta_pair16(f->off1, f->off1) : ta_pair16(f->off2, f->off2);
  if (w->nd == 1 && (w->s1 & w->s2)) { /* e.g. a vector against a map: its rows without walk_next */
    mul_simd_rows(&c, in1, in2, w->n, w->dim[0], w->st1[0], w->st2[0], out);
    return;
  }
  do {
    if (w->s1 & w->s2)
      mul_simd_rows(&c, in1 + w->off1, in2 + w->off2, w->n, 1, 0, 0, out);
    else
      mul_tail(f, in1 + w->off1, in2 + w->off2, w->n, w->s1, w->s2, out);
    out += w->n;
  } while (walk_next(w));
}
#endif

#if !TA_SIMD
/* ADD's short form on the portable build, out of line so that its loop has the registers to
 * itself (inlined into ta_add_s8, the general form's values cost it stack reloads). */
static TA_NOINLINE void add_fast_walk(const ta_binary_params *p, const add_fast *f, const int8_t *half,
                                      const int8_t *other, const int32_t *half_shape, const int32_t *other_shape,
                                      int8_t *out) {
  const add_fast k = *f; /* a local copy: the int8 stores cannot alias it, its fields stay in registers */
  if (k.lo <= -128 && k.hi >= 127)
    TA_BINARY_WALK(int8_t, add_fast_sat, &k, half, other, half_shape, other_shape, 1);
  else
    TA_BINARY_WALK(int8_t, add_fast_clamp, &k, half, other, half_shape, other_shape, 1);
}
#endif

void ta_add_s8(const ta_binary_params *p, const int8_t *in1, const int8_t *in2, int8_t *out) {
  add_fast f;
  int swap;
  if (add_fast_prep(&f, p, &swap)) {
    const int8_t *half = swap ? in2 : in1, *other = swap ? in1 : in2;
    const int32_t *half_shape = swap ? p->shape2 : p->shape1, *other_shape = swap ? p->shape1 : p->shape2;
#if TA_SIMD
    ta_walk w;
    if (walk_init(&w, half_shape, other_shape, p->out_shape)) add_lut_walk(&f, half, other, &w, out);
#else
    add_fast_walk(p, &f, half, other, half_shape, other_shape, out);
#endif
  } else {
    TA_BINARY_LOOP(int8_t, add_one, p);
  }
}

void ta_mul_s8(const ta_binary_params *p, const int8_t *in1, const int8_t *in2, int8_t *out) {
  mul_fast f;
  if (!mul_fast_prep(&f, p)) {
    TA_BINARY_LOOP(int8_t, mul_one, p);
  }
#if TA_SIMD
  else if (f.sm == -1 && f.lo <= -128 && f.hi >= 127) { /* shift <= -1: g2 = 2 */
    ta_walk w;
    if (walk_init(&w, p->shape1, p->shape2, p->out_shape)) mul_simd_walk(&f, in1, in2, &w, out);
  } else { /* shifts >= 0 and clamping activations, rare: one loop (a clamp to int8's range saturates) */
    TA_BINARY_FAST_LOOP(int8_t, mul_fast_clamp, &f);
  }
#else
  else if (f.lo <= -128 && f.hi >= 127)
    TA_BINARY_FAST_LOOP(int8_t, mul_fast_sat, &f);
  else
    TA_BINARY_FAST_LOOP(int8_t, mul_fast_clamp, &f);
#endif
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
