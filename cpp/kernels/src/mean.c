/*
 * MEAN int8 (TFLite reference_ops::QuantizedMeanOrSum, compute_sum = false):
 *   sum over the reduced dims, subtract zp_in * n, then multiply by in_scale/out_scale/n, where
 *   the 1/n is folded into the multiplier: shift = min(floor(log2 n), 32, 31 + out_shift),
 *   mult' = (mult << shift) / n (truncating), shift' = out_shift - shift.
 */
#include "tinyarena_kernels.h"

/* The quantized mean of `n` int8 values summing to `sum` (TFLite's requantization, 1/n folded in). */
static int8_t mean_of_sum(const ta_mean_params *p, int32_t sum, int32_t n) {
  int32_t log2n = 0, mult, shift, v;
  while (((int64_t)n >> (log2n + 1)) != 0) ++log2n;
  log2n = ta_min32(log2n, 32);
  log2n = ta_min32(log2n, 31 + p->shift);
  mult = (int32_t)(((int64_t)p->mult << log2n) / n);
  shift = p->shift - log2n;
  v = ta_multiply_by_quantized_multiplier((int32_t)((int64_t)sum - (int64_t)p->input_zero_point * n), mult, shift);
  return (int8_t)ta_offset_clamp(v, p->output_zero_point, -128, 127);
}

void ta_mean_s8(const ta_mean_params *p, const int8_t *input, int8_t *output) {
  int32_t st[TA_MAX_DIMS], kept[TA_MAX_DIMS], red[TA_MAX_DIMS];
  int32_t kidx[TA_MAX_DIMS], ridx[TA_MAX_DIMS];
  int32_t nk = 0, nr = 0, n_out = 1, n_red = 1, d, s = 1, o, r, j;
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
    output[o] = mean_of_sum(p, sum, n_red);
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
  const int32_t c = p->in_shape[3], n = p->in_shape[1] * p->in_shape[2];
  int32_t k;
  for (k = 0; k < c; ++k) output[k] = mean_of_sum(p, sums[k], n);
}
