/*
 * AVERAGE_POOL_2D / MAX_POOL_2D int8 (TFLite reference_integer_ops::AveragePool / MaxPool).
 * The window is clipped to the input (padding is skipped, not counted); the average rounds the
 * sum / count to nearest with ties away from zero; both clamp to the fused activation range.
 */
#include "tinyarena_kernels.h"
#include "ta_internal.h"

/* The average of `count` values summing to `acc`: to nearest, ties away from zero, clamped. */
static int8_t average_of_sum(const ta_pool_params *p, int32_t acc, int32_t count) {
  if (count <= 0) {
    acc = 0;
  } else {
    acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
  }
  return (int8_t)ta_clamp32(acc, p->act_min, p->act_max);
}

void ta_avg_pool_s8(const ta_pool_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1) {
  const int32_t C = p->channels;
  const int32_t in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, C);
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, p->in_w * in_pix_stride);
  const int32_t out_pix_stride = TA_OR_DEFAULT(p->out_pix_stride, C);
  const int32_t out_row_stride = TA_OR_DEFAULT(p->out_row_stride, p->out_w * out_pix_stride);
  int32_t oy, ox, c, fy, fx;
  for (oy = y0; oy < y1; ++oy) {
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t fy0 = ta_max32(0, -iy0), fy1 = ta_min32(p->filter_h, p->in_h - iy0);
    for (ox = 0; ox < p->out_w; ++ox) {
      const int32_t ix0 = ox * p->stride_w - p->pad_left;
      const int32_t fx0 = ta_max32(0, -ix0), fx1 = ta_min32(p->filter_w, p->in_w - ix0);
      const int32_t count = (fy1 - fy0) * (fx1 - fx0);
      int8_t *o = output + oy * out_row_stride + ox * out_pix_stride;
      for (c = 0; c < C; ++c) {
        int32_t acc = 0;
        for (fy = fy0; fy < fy1; ++fy) {
          const int8_t *ip = input + (iy0 + fy) * in_row_stride + (ix0 + fx0) * in_pix_stride + c;
          for (fx = fx0; fx < fx1; ++fx, ip += in_pix_stride) acc += *ip;
        }
        o[c] = average_of_sum(p, acc, count);
      }
    }
  }
}

/* A global average pool (one window covering the whole unpadded input) fed rows at a time: the
 * same int32 sums and rounding as ta_avg_pool_s8. */
void ta_avg_pool_global_accumulate_s8(const ta_pool_params *p, const int8_t *input, int32_t y0, int32_t y1,
                                      int32_t *sums) {
  const int32_t C = p->channels;
  const int32_t in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, C);
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, p->in_w * in_pix_stride);
  int32_t y, x, c;
  if (y0 == 0)
    for (c = 0; c < C; ++c) sums[c] = 0;
  for (y = y0; y < y1; ++y)
    for (x = 0; x < p->in_w; ++x) {
      const int8_t *ip = input + y * in_row_stride + x * in_pix_stride;
      for (c = 0; c < C; ++c) sums[c] += ip[c];
    }
}

void ta_avg_pool_global_finish_s8(const ta_pool_params *p, const int32_t *sums, int8_t *output) {
  int32_t c;
  for (c = 0; c < p->channels; ++c) output[c] = average_of_sum(p, sums[c], p->in_h * p->in_w);
}

void ta_max_pool_s8(const ta_pool_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1) {
  const int32_t C = p->channels;
  const int32_t in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, C);
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, p->in_w * in_pix_stride);
  const int32_t out_pix_stride = TA_OR_DEFAULT(p->out_pix_stride, C);
  const int32_t out_row_stride = TA_OR_DEFAULT(p->out_row_stride, p->out_w * out_pix_stride);
  int32_t oy, ox, c, fy, fx;
  for (oy = y0; oy < y1; ++oy) {
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t fy0 = ta_max32(0, -iy0), fy1 = ta_min32(p->filter_h, p->in_h - iy0);
    for (ox = 0; ox < p->out_w; ++ox) {
      const int32_t ix0 = ox * p->stride_w - p->pad_left;
      const int32_t fx0 = ta_max32(0, -ix0), fx1 = ta_min32(p->filter_w, p->in_w - ix0);
      int8_t *o = output + oy * out_row_stride + ox * out_pix_stride;
      for (c = 0; c < C; ++c) {
        int32_t m = -128;
        for (fy = fy0; fy < fy1; ++fy) {
          const int8_t *ip = input + (iy0 + fy) * in_row_stride + (ix0 + fx0) * in_pix_stride + c;
          for (fx = fx0; fx < fx1; ++fx, ip += in_pix_stride) m = *ip > m ? *ip : m;
        }
        o[c] = (int8_t)ta_clamp32(m, p->act_min, p->act_max);
      }
    }
  }
}
