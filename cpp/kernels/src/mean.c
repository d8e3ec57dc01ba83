/*
 * MEAN int8 (TFLite reference_ops::QuantizedMeanOrSum, compute_sum = false):
 *   sum over the reduced dims, subtract zp_in * n, then multiply by in_scale/out_scale/n, where
 *   the 1/n is folded into the multiplier: shift = min(floor(log2 n), 32, 31 + out_shift),
 *   mult' = (mult << shift) / n (truncating), shift' = out_shift - shift.
 * That requantization is prepared once per call. Reduced dims that form one block of adjacent
 * dims (MEAN over H, W of NHWC; over the last or the first dims) sum as [outer, reduced, inner]
 * with four inner channels at a time in registers (about 3 instructions an input on Cortex-M4);
 * other sets of axes walk index vectors. The int32 sums wrap as the reference's, so the order of
 * the additions does not change a result.
 */
#include "tinyarena_kernels.h"

#include "ta_internal.h"

/* The requantization of a mean of n values, prepared once per call. */
typedef struct mean_rq {
  int32_t mult, shift, zp_sum; /* 1/n folded into mult and shift; input_zero_point * n */
  int32_t out_zp;
} mean_rq;

TA_NOINLINE static mean_rq mean_rq_prep(const ta_mean_params *p, int32_t n) {
  mean_rq q;
  int32_t log2n = 0;
  while (((int64_t)n >> (log2n + 1)) != 0) ++log2n;
  log2n = ta_min32(log2n, 32);
  log2n = ta_min32(log2n, 31 + p->shift);
  q.mult = (int32_t)(((int64_t)p->mult << log2n) / n);
  q.shift = p->shift - log2n;
  q.zp_sum = (int32_t)((int64_t)p->input_zero_point * n);
  q.out_zp = p->output_zero_point;
  return q;
}

/* The quantized mean of values summing to `sum` (int32 wraps as the reference's). */
TA_NOINLINE static int8_t mean_of_sum(const mean_rq *q, int32_t sum) {
  const int32_t v = ta_multiply_by_quantized_multiplier(ta_wrap_sub(sum, q->zp_sum), q->mult, q->shift);
  return (int8_t)ta_offset_clamp(v, q->out_zp, -128, 127);
}

/* The reduced dims as one block: the input is [outer, red, inner] with the output [outer, inner];
 * 0 if the reduced dims (of size > 1) are not adjacent. */
static int reduced_block(const ta_mean_params *p, int32_t *outer, int32_t *red, int32_t *inner) {
  int32_t d, part = 0; /* 0: before the block, 1: in it, 2: after it */
  *outer = *red = *inner = 1;
  for (d = 0; d < p->ndims; ++d) {
    const int32_t size = p->in_shape[d], reduced = p->reduce_mask >> d & 1;
    if (size == 1) continue;
    if (reduced && part == 2) return 0;
    part = reduced ? 1 : part == 1 ? 2 : part;
    *(part == 0 ? outer : part == 1 ? red : inner) *= size;
  }
  return 1;
}

/* Means of [outer, red, inner]: `inner` channels at a time, four in registers. */
static void mean_block(const mean_rq *q, const int8_t *input, int32_t outer, int32_t red, int32_t inner,
                       int8_t *output) {
  int32_t o, k, r;
  for (o = 0; o < outer; ++o, input += red * inner, output += inner) {
    for (k = 0; k + 4 <= inner; k += 4) {
      const int8_t *x = input + k;
      int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (r = 0; r < red; ++r, x += inner) s0 += x[0], s1 += x[1], s2 += x[2], s3 += x[3];
      output[k] = mean_of_sum(q, s0), output[k + 1] = mean_of_sum(q, s1);
      output[k + 2] = mean_of_sum(q, s2), output[k + 3] = mean_of_sum(q, s3);
    }
    for (; k < inner; ++k) {
      const int8_t *x = input + k;
      int32_t s0 = 0;
      for (r = 0; r < red; ++r, x += inner) s0 += *x;
      output[k] = mean_of_sum(q, s0);
    }
  }
}

/* The general case walks index vectors of the kept and reduced dims. */
void ta_mean_s8(const ta_mean_params *p, const int8_t *input, int8_t *output) {
  int32_t st[TA_MAX_DIMS], kept[TA_MAX_DIMS], red[TA_MAX_DIMS];
  int32_t kidx[TA_MAX_DIMS], ridx[TA_MAX_DIMS];
  int32_t nk = 0, nr = 0, n_out = 1, n_red = 1, d, s = 1, o, r, j, n_outer, n_mid, n_inner;
  mean_rq q;
  for (d = p->ndims - 1; d >= 0; --d) {
    st[d] = s;
    s *= p->in_shape[d];
  }
  for (d = 0; d < p->ndims; ++d) {
    if (p->reduce_mask >> d & 1) {
      red[nr++] = d;
      n_red *= p->in_shape[d];
    } else {
      kept[nk++] = d;
      n_out *= p->in_shape[d];
    }
  }
  if (n_red <= 0) return;
  q = mean_rq_prep(p, n_red);
  if (reduced_block(p, &n_outer, &n_mid, &n_inner)) {
    mean_block(&q, input, n_outer, n_mid, n_inner, output);
    return;
  }
  for (j = 0; j < nk; ++j) kidx[j] = 0;
  for (o = 0; o < n_out; ++o) {
    int32_t base = 0, sum = 0;
    for (j = 0; j < nk; ++j) base += kidx[j] * st[kept[j]];
    for (j = 0; j < nr; ++j) ridx[j] = 0;
    for (r = 0; r < n_red; ++r) {
      int32_t off = base;
      for (j = 0; j < nr; ++j) off += ridx[j] * st[red[j]];
      sum += input[off];
      for (j = nr - 1; j >= 0; --j) {
        if (++ridx[j] < p->in_shape[red[j]]) break;
        ridx[j] = 0;
      }
    }
    output[o] = mean_of_sum(&q, sum);
    for (j = nk - 1; j >= 0; --j) {
      if (++kidx[j] < p->in_shape[kept[j]]) break;
      kidx[j] = 0;
    }
  }
}

/* MEAN over H and W of NHWC [1, H, W, C], fed rows at a time: the same sums (int32 wraps as the
 * reference's), so the same results as ta_mean_s8. */
void ta_mean_hw_accumulate_s8(const ta_mean_params *p, const int8_t *input, int32_t y0, int32_t y1, int32_t *sums) {
  const int32_t c = p->in_shape[3], n = (y1 - y0) * p->in_shape[2];
  int32_t i, k;
  if (y0 == 0)
    for (k = 0; k < c; ++k) sums[k] = 0;
  input += y0 * p->in_shape[2] * c;
  for (i = 0; i < n; ++i, input += c)
    for (k = 0; k < c; ++k) sums[k] += input[k];
}

void ta_mean_hw_finish_s8(const ta_mean_params *p, const int32_t *sums, int8_t *output) {
  const mean_rq q = mean_rq_prep(p, p->in_shape[1] * p->in_shape[2]);
  int32_t k;
  for (k = 0; k < p->in_shape[3]; ++k) output[k] = mean_of_sum(&q, sums[k]);
}
