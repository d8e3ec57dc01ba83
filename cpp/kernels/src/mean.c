/*
 * MEAN int8 (TFLite reference_ops::QuantizedMeanOrSum, compute_sum = false):
 *   sum over the reduced dims, subtract zp_in * n, then multiply by in_scale/out_scale/n, where
 *   the 1/n is folded into the multiplier: shift = min(floor(log2 n), 32, 31 + out_shift),
 *   mult' = (mult << shift) / n (truncating), shift' = out_shift - shift.
 */
#include "tinyarena_kernels.h"

void ta_mean_s8(const ta_mean_params *p, const int8_t *input, int8_t *output) {
  int32_t st[TA_MAX_DIMS], kept[TA_MAX_DIMS], red[TA_MAX_DIMS];
  int32_t kidx[TA_MAX_DIMS], ridx[TA_MAX_DIMS];
  int32_t nk = 0, nr = 0, n_out = 1, n_red = 1, d, s = 1, o, r, j;
  int32_t mult, shift, log2n = 0;
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
  while (((int64_t)n_red >> (log2n + 1)) != 0) ++log2n;
  log2n = ta_min32(log2n, 32);
  log2n = ta_min32(log2n, 31 + p->shift);
  mult = (int32_t)(((int64_t)p->mult << log2n) / n_red);
  shift = p->shift - log2n;
  for (j = 0; j < nk; ++j) kidx[j] = 0;
  for (o = 0; o < n_out; ++o) {
    int32_t base = 0, sum = 0, v;
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
    v = ta_mbqm((int32_t)((int64_t)sum - (int64_t)p->input_zero_point * n_red), mult, shift) + p->output_zero_point;
    output[o] = (int8_t)ta_clamp32(v, -128, 127);
    for (j = nk - 1; j >= 0; --j) {
      if (++kidx[j] < p->in_shape[kept[j]]) break;
      kidx[j] = 0;
    }
  }
}
