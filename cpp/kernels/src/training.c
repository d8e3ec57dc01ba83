/*
 * Backward kernels of on-device training: RELU masks, CONV_2D / FULLY_CONNECTED /
 * DEPTHWISE_CONV_2D gradients and
 * the fused per-output-channel SGD update (formats and formulas: tinyarena_training.h).
 */
#include "tinyarena_training.h"

#include <math.h>

#include "tinyarena_requantize.h"
#include "ta_internal.h"

void ta_relu_mask_write(const int8_t *output, int32_t n, int32_t lo, int32_t hi, uint8_t *mask) {
  int32_t i;
  for (i = 0; i < (n + 7) / 8; ++i) mask[i] = 0;
  for (i = 0; i < n; ++i) {
    if (lo < output[i] && output[i] < hi) mask[i >> 3] |= (uint8_t)(1u << (i & 7));
  }
}

void ta_relu_mask_apply(int8_t *grad, int32_t n, const uint8_t *mask) {
  int32_t i;
  for (i = 0; i < n; ++i) {
    if (!((mask[i >> 3] >> (i & 7)) & 1u)) grad[i] = 0;
  }
}

int32_t ta_grad_shift_for(int32_t max_abs) {
  int32_t s = 0;
  while (s < 31 && ta_rounding_divide_by_pot(max_abs, s) > 127) ++s;
  return s;
}

void ta_grad_requantize_s8(const int32_t *acc, int32_t n, int32_t shift, int8_t *out) {
  int32_t i;
  for (i = 0; i < n; ++i) out[i] = (int8_t)ta_clamp32(ta_rounding_divide_by_pot(acc[i], shift), -127, 127);
}

void ta_sgd_multiplier(double factor, int32_t *m, int32_t *e) {
  int exponent = 0;
  double q;
  int64_t mantissa;
  if (!(factor > 0.0)) {
    *m = 0;
    *e = 0;
    return;
  }
  q = frexp(factor, &exponent); /* q in [0.5, 1) */
  mantissa = (int64_t)floor(q * 2147483648.0 + 0.5);
  if (mantissa == ((int64_t)1 << 31)) {
    mantissa /= 2;
    ++exponent;
  }
  *m = (int32_t)mantissa;
  *e = (int32_t)exponent;
}

static int32_t saturate_to_int32(int64_t x) {
  return x > INT32_MAX ? INT32_MAX : (x < INT32_MIN ? INT32_MIN : (int32_t)x);
}

int32_t ta_sgd_step(int32_t g, int32_t m, int32_t e) {
  const int64_t product = (int64_t)g * (int64_t)m; /* |product| < 2^62 */
  const int64_t magnitude = product < 0 ? -product : product;
  const int32_t right = 31 - e;
  int64_t step;
  if (product == 0) return 0;
  if (right >= 63) return 0;
  if (right > 0) {
    step = (magnitude + ((int64_t)1 << (right - 1))) >> right;
  } else {
    if (-right >= 32 || magnitude > ((int64_t)INT32_MAX >> -right)) return product < 0 ? INT32_MIN : INT32_MAX;
    step = magnitude << -right;
  }
  return saturate_to_int32(product < 0 ? -step : step);
}

void ta_sgd_update_strided_s8(int8_t *q, int32_t stride, const int32_t *grad, int32_t n, int32_t m, int32_t e) {
  int32_t j;
  for (j = 0; j < n; ++j) {
    int8_t *w = q + (int64_t)j * stride;
    const int64_t updated = (int64_t)*w - ta_sgd_step(grad[j], m, e);
    *w = (int8_t)(updated < -127 ? -127 : (updated > 127 ? 127 : updated));
  }
}

void ta_sgd_update_s8(int8_t *q, const int32_t *grad, int32_t n, int32_t m, int32_t e) {
  ta_sgd_update_strided_s8(q, 1, grad, n, m, e);
}

/* The output index o with position = o * stride - pad + k, or -1 when there is none in range. */
static int32_t output_index(int32_t position, int32_t k, int32_t stride, int32_t pad, int32_t out_size) {
  const int32_t scaled = position + pad - k;
  if (scaled < 0 || scaled % stride != 0) return -1;
  return scaled / stride < out_size ? scaled / stride : -1;
}

/* acc[ci] += g[co] * mult[co] * w[co * channel_stride + ci] for co in [begin, end) (mult NULL: 1). */
static TA_ALWAYS_INLINE void accumulate_channels(int32_t *acc, const int8_t *g, const int32_t *mult,
                                                 const int8_t *w, int32_t begin, int32_t end, int64_t channel_stride,
                                                 int32_t cin) {
  int32_t co, ci;
  for (co = begin; co < end; ++co) {
    const int32_t gv = mult ? g[co] * mult[co] : g[co];
    const int8_t *wc = w + co * channel_stride;
    if (gv == 0) continue; /* masked gradients are mostly zeros */
    for (ci = 0; ci < cin; ++ci) acc[ci] += gv * wc[ci];
  }
}

void ta_conv_grad_input_row_s32(const ta_conv_grad_params *p, const int8_t *grad_out, int32_t iy, int32_t *row) {
  const int32_t cin = p->in_c, cout = p->out_c;
  /* channels from `split` on are read from the frozen tensor (a partial update) */
  const int32_t split = p->trainable_channels > 0 ? p->trainable_channels : cout;
  const int64_t channel_stride = (int64_t)p->kernel_h * p->kernel_w * cin;
  int32_t ix, ky, kx, ci;
  for (ci = 0; ci < p->in_w * cin; ++ci) row[ci] = 0;
  for (ky = 0; ky < p->kernel_h; ++ky) {
    const int32_t oy = output_index(iy, ky, p->stride_h, p->pad_top, p->out_h);
    if (oy < 0) continue;
    for (ix = 0; ix < p->in_w; ++ix) {
      int32_t *acc = row + ix * cin;
      for (kx = 0; kx < p->kernel_w; ++kx) {
        const int32_t ox = output_index(ix, kx, p->stride_w, p->pad_left, p->out_w);
        const int64_t tap = ((int64_t)ky * p->kernel_w + kx) * cin;
        const int8_t *g;
        if (ox < 0) continue;
        g = grad_out + ((int64_t)oy * p->out_w + ox) * cout;
        accumulate_channels(acc, g, p->channel_mult, p->weights + tap, 0, split, channel_stride, cin);
        if (split < cout)
          accumulate_channels(acc, g, p->channel_mult, p->frozen_weights + tap, split, cout, channel_stride, cin);
      }
    }
  }
}

/* One input-gradient row, int32 (conv or depthwise: `p` is that op's grad params). */
typedef void (*grad_row_fn)(const void *p, const int8_t *grad_out, int32_t iy, int32_t *row);

/* The two-pass requantization both input gradients share: every row once for the largest
 * |value| (so the shift), then again to write it as int8. Returns the shift. */
static int32_t grad_input_two_pass(const void *p, grad_row_fn row, int32_t rows, int32_t row_len,
                                   const int8_t *grad_out, int8_t *grad_in, int32_t *row_scratch) {
  int32_t max_abs = 0, shift, iy, i;
  for (iy = 0; iy < rows; ++iy) {
    row(p, grad_out, iy, row_scratch);
    for (i = 0; i < row_len; ++i) {
      const int32_t v = row_scratch[i] < 0 ? -row_scratch[i] : row_scratch[i];
      if (v > max_abs) max_abs = v;
    }
  }
  shift = ta_grad_shift_for(max_abs);
  for (iy = 0; iy < rows; ++iy) {
    row(p, grad_out, iy, row_scratch);
    ta_grad_requantize_s8(row_scratch, row_len, shift, grad_in + (int64_t)iy * row_len);
  }
  return shift;
}

static void conv_grad_row(const void *p, const int8_t *grad_out, int32_t iy, int32_t *row) {
  ta_conv_grad_input_row_s32((const ta_conv_grad_params *)p, grad_out, iy, row);
}

int32_t ta_conv_grad_input_s8(const ta_conv_grad_params *p, const int8_t *grad_out, int8_t *grad_in,
                              int32_t *row_scratch) {
  return grad_input_two_pass(p, conv_grad_row, p->in_h, p->in_w * p->in_c, grad_out, grad_in, row_scratch);
}

void ta_conv_grad_weight_channel_s32(const ta_conv_grad_params *p, const int8_t *grad_out, const int8_t *input,
                                     int32_t co, int32_t *grad) {
  const int32_t cin = p->in_c, zp = p->input_zero_point;
  int32_t oy, ox, ky, kx, ci;
  for (ci = 0; ci < p->kernel_h * p->kernel_w * cin; ++ci) grad[ci] = 0;
  for (oy = 0; oy < p->out_h; ++oy) {
    for (ox = 0; ox < p->out_w; ++ox) {
      const int32_t gv = grad_out[((int64_t)oy * p->out_w + ox) * p->out_c + co];
      if (gv == 0) continue;
      for (ky = 0; ky < p->kernel_h; ++ky) {
        const int32_t iy = oy * p->stride_h - p->pad_top + ky;
        if (iy < 0 || iy >= p->in_h) continue;
        for (kx = 0; kx < p->kernel_w; ++kx) {
          const int32_t ix = ox * p->stride_w - p->pad_left + kx;
          const int8_t *x;
          int32_t *acc = grad + (ky * p->kernel_w + kx) * cin;
          if (ix < 0 || ix >= p->in_w) continue;
          x = input + ((int64_t)iy * p->in_w + ix) * cin;
          for (ci = 0; ci < cin; ++ci) acc[ci] += gv * (x[ci] - zp);
        }
      }
    }
  }
}

void ta_grad_bias_s32(const int8_t *grad_out, int64_t pixels, int32_t channels, int32_t *grad) {
  int64_t i;
  int32_t co;
  for (co = 0; co < channels; ++co) grad[co] = 0;
  for (i = 0; i < pixels; ++i) {
    for (co = 0; co < channels; ++co) grad[co] += grad_out[i * channels + co];
  }
}

void ta_conv_grad_bias_s32(const ta_conv_grad_params *p, const int8_t *grad_out, int32_t *grad) {
  ta_grad_bias_s32(grad_out, (int64_t)p->out_h * p->out_w, p->out_c, grad);
}

/* bias[co] -= step(grad[co]) with the bias factor lr * s_g / (s_x * s_w[co]). */
static void update_bias(int32_t *bias, const int32_t *grad, int32_t channels, double lr_g, float input_scale,
                        const float *weight_scale) {
  int32_t co, m, e;
  for (co = 0; co < channels; ++co) {
    ta_sgd_multiplier(lr_g / ((double)input_scale * (double)weight_scale[co]), &m, &e);
    bias[co] = saturate_to_int32((int64_t)bias[co] - ta_sgd_step(grad[co], m, e));
  }
}

/* The SGD update of one output channel's n weights, q[j * stride], from its int32 gradient. */
static void update_weight_channel(int8_t *q, int32_t stride, const int32_t *grad, int32_t n, double lr_g,
                                  float input_scale, float weight_scale) {
  int32_t m, e;
  ta_sgd_multiplier(lr_g * (double)input_scale / (double)weight_scale, &m, &e);
  ta_sgd_update_strided_s8(q, stride, grad, n, m, e);
}

void ta_sgd_update_weights_s8(int8_t *weights, int32_t channel_stride, int32_t element_stride, const int32_t *grad,
                              int32_t channels, int32_t channel_weights, float lr, float grad_out_scale,
                              float input_scale, const float *weight_scale) {
  const double lr_g = (double)lr * (double)grad_out_scale;
  int32_t co;
  for (co = 0; co < channels; ++co)
    update_weight_channel(weights + (int64_t)co * channel_stride, element_stride,
                          grad + (int64_t)co * channel_weights, channel_weights, lr_g, input_scale, weight_scale[co]);
}

void ta_sgd_update_bias_s32(int32_t *bias, const int32_t *grad, int32_t channels, float lr, float grad_scale,
                            float input_scale, const float *weight_scale) {
  update_bias(bias, grad, channels, (double)lr * (double)grad_scale, input_scale, weight_scale);
}

void ta_relu_output_apply(int8_t *grad, int32_t n, const int8_t *output, int32_t lo, int32_t hi) {
  int32_t i;
  for (i = 0; i < n; ++i) {
    if (!(lo < output[i] && output[i] < hi)) grad[i] = 0;
  }
}

/* p[i] - onehot(label)[i] of class i (real scores: probabilities, or logits with their maximum
 * and the sum of exp(logit - maximum)). */
static float xent_gradient(float real, int32_t probabilities, float max_logit, float total, int is_label) {
  const float p = probabilities ? real : expf(real - max_logit) / total;
  return p - (is_label ? 1.0f : 0.0f);
}

float ta_softmax_xent_grad_s8(const int8_t *scores, int32_t n, float scale, int32_t zero_point, int32_t probabilities,
                              int32_t label, int8_t *grad, float *grad_scale) {
  float max_logit = -INFINITY, total = 0.0f, max_abs = 0.0f, step;
  int32_t i;
  if (!probabilities) {
    for (i = 0; i < n; ++i) {
      const float logit = scale * (float)(scores[i] - zero_point);
      if (logit > max_logit) max_logit = logit;
    }
    for (i = 0; i < n; ++i) total += expf(scale * (float)(scores[i] - zero_point) - max_logit);
  }
  for (i = 0; i < n; ++i) {
    const float g = xent_gradient(scale * (float)(scores[i] - zero_point), probabilities, max_logit, total, i == label);
    if (fabsf(g) > max_abs) max_abs = fabsf(g);
  }
  step = max_abs > 0.0f ? max_abs / 127.0f : 1.0f / 127.0f;
  for (i = 0; i < n; ++i) {
    const float g = xent_gradient(scale * (float)(scores[i] - zero_point), probabilities, max_logit, total, i == label);
    const float q = g / step, rounded = q < 0.0f ? -floorf(-q + 0.5f) : floorf(q + 0.5f);
    grad[i] = (int8_t)(rounded < -127.0f ? -127 : (rounded > 127.0f ? 127 : (int32_t)rounded));
  }
  *grad_scale = step;
  {
    const float real = scale * (float)(scores[label] - zero_point);
    const float p_label = xent_gradient(real, probabilities, max_logit, total, 0);
    return -logf(p_label > 1e-7f ? p_label : 1e-7f);
  }
}

static float grad_sum_at(const int8_t *const *parts, const float *scales, int32_t count, int32_t i) {
  float sum = 0.0f;
  int32_t k;
  for (k = 0; k < count; ++k) sum += scales[k] * (float)parts[k][i];
  return sum;
}

void ta_grad_sum_s8(const int8_t *const *parts, const float *scales, int32_t count, int32_t n, int8_t *out,
                    float *out_scale) {
  float max_abs = 0.0f, step;
  int32_t i;
  for (i = 0; i < n; ++i) {
    const float v = fabsf(grad_sum_at(parts, scales, count, i));
    if (v > max_abs) max_abs = v;
  }
  step = max_abs > 0.0f ? max_abs / 127.0f : 1.0f / 127.0f;
  for (i = 0; i < n; ++i) {
    const float q = grad_sum_at(parts, scales, count, i) / step;
    const float rounded = q < 0.0f ? -floorf(-q + 0.5f) : floorf(q + 0.5f);
    out[i] = (int8_t)(rounded < -127.0f ? -127 : (rounded > 127.0f ? 127 : (int32_t)rounded));
  }
  *out_scale = step;
}

void ta_pad_grad_input_s8(const ta_pad_params *p, const int8_t *grad_out, int8_t *grad_in) {
  int32_t idx[TA_MAX_DIMS] = {0}, d;
  int64_t out_stride[TA_MAX_DIMS], stride = 1, total = 1, i;
  for (d = p->ndims - 1; d >= 0; --d) {
    out_stride[d] = stride;
    stride *= (int64_t)p->before[d] + p->in_shape[d] + p->after[d];
    total *= p->in_shape[d];
  }
  for (i = 0; i < total; ++i) {
    int64_t at = 0;
    for (d = 0; d < p->ndims; ++d) at += (int64_t)(idx[d] + p->before[d]) * out_stride[d];
    grad_in[i] = grad_out[at];
    for (d = p->ndims - 1; d >= 0 && ++idx[d] == p->in_shape[d]; --d) idx[d] = 0;
  }
}

void ta_avgpool_grad_input_s8(const int8_t *grad_out, int32_t in_h, int32_t in_w, int32_t channels, int32_t out_h,
                              int32_t out_w, int32_t filter_h, int32_t filter_w, int32_t stride_h, int32_t stride_w,
                              int8_t *grad_in) {
  int32_t iy, ix, c;
  for (iy = 0; iy < in_h; ++iy) {
    for (ix = 0; ix < in_w; ++ix) {
      const int32_t oy = iy / stride_h, ox = ix / stride_w;
      const int covered = oy < out_h && ox < out_w && iy - oy * stride_h < filter_h && ix - ox * stride_w < filter_w;
      int8_t *g = grad_in + ((int64_t)iy * in_w + ix) * channels;
      const int8_t *from = grad_out + ((int64_t)oy * out_w + ox) * channels;
      for (c = 0; c < channels; ++c) g[c] = covered ? from[c] : 0;
    }
  }
}

void ta_conv_backward_update(const ta_conv_grad_params *p, const int8_t *grad_out, const int8_t *input, float lr,
                             float grad_out_scale, float input_scale, const float *weight_scale,
                             int32_t *channel_scratch, int32_t *bias_grad) {
  const int32_t channel_weights = p->kernel_h * p->kernel_w * p->in_c;
  const double lr_g = (double)lr * (double)grad_out_scale;
  const int32_t updated = p->trainable_channels > 0 ? p->trainable_channels : p->out_c;
  int32_t co;
  for (co = 0; co < updated; ++co) {
    ta_conv_grad_weight_channel_s32(p, grad_out, input, co, channel_scratch);
    update_weight_channel(p->weights + (int64_t)co * channel_weights, 1, channel_scratch, channel_weights, lr_g,
                          input_scale, weight_scale[co]);
  }
  if (p->bias == NULL) return;
  ta_conv_grad_bias_s32(p, grad_out, bias_grad);
  update_bias(p->bias, bias_grad, p->out_c, lr_g, input_scale, weight_scale);
}

void ta_fc_grad_params(int32_t batches, int32_t in_depth, int32_t out_depth, int32_t input_zero_point,
                       int8_t *weights, int32_t *bias, ta_conv_grad_params *p) {
  p->in_h = batches;
  p->in_w = 1;
  p->in_c = in_depth;
  p->out_h = batches;
  p->out_w = 1;
  p->out_c = out_depth;
  p->kernel_h = 1;
  p->kernel_w = 1;
  p->stride_h = 1;
  p->stride_w = 1;
  p->pad_top = 0;
  p->pad_left = 0;
  p->input_zero_point = input_zero_point;
  p->weights = weights;
  p->bias = bias;
  p->channel_mult = NULL;
  p->frozen_weights = NULL;
  p->trainable_channels = 0;
}

void ta_conv_s8_split(const ta_conv_params *p, const int8_t *trainable, int32_t channels, const int8_t *input,
                      int8_t *output, int32_t row_begin, int32_t row_end, void *scratch) {
  const int32_t pix_stride = TA_OR_DEFAULT(p->out_pix_stride, p->out_c);
  const int64_t channel_weights = (int64_t)p->kernel_h * p->kernel_w * p->in_c;
  ta_conv_params part = *p;
  part.out_pix_stride = pix_stride;
  part.out_row_stride = TA_OR_DEFAULT(p->out_row_stride, p->out_w * pix_stride);
  part.packed_weights = NULL;
  part.packed_s8_weights = NULL;
  part.rq_records = NULL;
  part.out_c = channels;
  part.weights = trainable;
  ta_conv_s8(&part, input, output, row_begin, row_end, scratch);
  if (channels == p->out_c) return;
  part.out_c = p->out_c - channels;
  part.weights = p->weights + channels * channel_weights;
  part.bias = p->bias ? p->bias + channels : NULL;
  part.out_mult = p->out_mult + channels;
  part.out_shift = p->out_shift + channels;
  ta_conv_s8(&part, input, output + channels, row_begin, row_end, scratch);
}

void ta_fully_connected_s8_split(const ta_fc_params *p, const int8_t *trainable, int32_t channels,
                                 const int8_t *input, int8_t *output, void *scratch) {
  const int32_t per_channel = p->per_channel ? channels : 0;
  ta_fc_params part = *p;
  part.out_row_stride = TA_OR_DEFAULT(p->out_row_stride, p->out_depth);
  part.packed_weights = NULL;
  part.out_depth = channels;
  part.weights = trainable;
  ta_fully_connected_s8(&part, input, output, scratch);
  if (channels == p->out_depth) return;
  part.out_depth = p->out_depth - channels;
  part.weights = p->weights + (int64_t)channels * p->in_depth;
  part.bias = p->bias ? p->bias + channels : NULL;
  if (p->out_mult) part.out_mult = p->out_mult + per_channel;
  if (p->out_shift) part.out_shift = p->out_shift + per_channel;
  if (p->out_scale_f64) part.out_scale_f64 = p->out_scale_f64 + per_channel;
  if (p->rescale_mult) part.rescale_mult = p->rescale_mult + per_channel;
  if (p->rescale_shift) part.rescale_shift = p->rescale_shift + per_channel;
  ta_fully_connected_s8(&part, input, output + channels, scratch);
}

/* --- DEPTHWISE_CONV_2D: output channel co = ci * depth_multiplier + d reads input channel ci. */

void ta_dwconv_grad_input_row_s32(const ta_dwconv_grad_params *p, const int8_t *grad_out, int32_t iy,
                                  int32_t *row) {
  const int32_t cin = p->in_c, dm = p->depth_multiplier, cout = p->in_c * p->depth_multiplier;
  int32_t ix, ky, kx, ci, d;
  for (ci = 0; ci < p->in_w * cin; ++ci) row[ci] = 0;
  for (ky = 0; ky < p->kernel_h; ++ky) {
    const int32_t oy = output_index(iy, ky, p->stride_h, p->pad_top, p->out_h);
    if (oy < 0) continue;
    for (ix = 0; ix < p->in_w; ++ix) {
      int32_t *acc = row + ix * cin;
      for (kx = 0; kx < p->kernel_w; ++kx) {
        const int32_t ox = output_index(ix, kx, p->stride_w, p->pad_left, p->out_w);
        const int8_t *g, *w;
        if (ox < 0) continue;
        g = grad_out + ((int64_t)oy * p->out_w + ox) * cout;
        w = p->weights + ((int64_t)ky * p->kernel_w + kx) * cout;
        for (ci = 0; ci < cin; ++ci) {
          for (d = 0; d < dm; ++d) {
            const int32_t co = ci * dm + d;
            acc[ci] += (p->channel_mult ? g[co] * p->channel_mult[co] : g[co]) * w[co];
          }
        }
      }
    }
  }
}

static void dwconv_grad_row(const void *p, const int8_t *grad_out, int32_t iy, int32_t *row) {
  ta_dwconv_grad_input_row_s32((const ta_dwconv_grad_params *)p, grad_out, iy, row);
}

int32_t ta_dwconv_grad_input_s8(const ta_dwconv_grad_params *p, const int8_t *grad_out, int8_t *grad_in,
                                int32_t *row_scratch) {
  return grad_input_two_pass(p, dwconv_grad_row, p->in_h, p->in_w * p->in_c, grad_out, grad_in, row_scratch);
}

void ta_dwconv_grad_weight_channel_s32(const ta_dwconv_grad_params *p, const int8_t *grad_out,
                                       const int8_t *input, int32_t co, int32_t *grad) {
  const int32_t cout = p->in_c * p->depth_multiplier, ci = co / p->depth_multiplier;
  const int32_t zp = p->input_zero_point;
  int32_t oy, ox, ky, kx;
  for (ky = 0; ky < p->kernel_h * p->kernel_w; ++ky) grad[ky] = 0;
  for (oy = 0; oy < p->out_h; ++oy) {
    for (ox = 0; ox < p->out_w; ++ox) {
      const int32_t gv = grad_out[((int64_t)oy * p->out_w + ox) * cout + co];
      if (gv == 0) continue;
      for (ky = 0; ky < p->kernel_h; ++ky) {
        const int32_t iy = oy * p->stride_h - p->pad_top + ky;
        if (iy < 0 || iy >= p->in_h) continue;
        for (kx = 0; kx < p->kernel_w; ++kx) {
          const int32_t ix = ox * p->stride_w - p->pad_left + kx;
          if (ix < 0 || ix >= p->in_w) continue;
          grad[ky * p->kernel_w + kx] += gv * (input[((int64_t)iy * p->in_w + ix) * p->in_c + ci] - zp);
        }
      }
    }
  }
}

void ta_dwconv_backward_update(const ta_dwconv_grad_params *p, const int8_t *grad_out, const int8_t *input,
                               float lr, float grad_out_scale, float input_scale, const float *weight_scale,
                               int32_t *channel_scratch, int32_t *bias_grad) {
  const int32_t cout = p->in_c * p->depth_multiplier;
  const double lr_g = (double)lr * (double)grad_out_scale;
  int32_t co;
  for (co = 0; co < cout; ++co) {
    ta_dwconv_grad_weight_channel_s32(p, grad_out, input, co, channel_scratch);
    update_weight_channel(p->weights + co, cout, channel_scratch, p->kernel_h * p->kernel_w, lr_g, input_scale,
                          weight_scale[co]);
  }
  if (p->bias == NULL) return;
  ta_grad_bias_s32(grad_out, (int64_t)p->out_h * p->out_w, cout, bias_grad);
  update_bias(p->bias, bias_grad, cout, lr_g, input_scale, weight_scale);
}
