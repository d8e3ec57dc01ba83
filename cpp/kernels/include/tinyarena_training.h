/*
 * tinyarena kernels: backward (training) kernels for int8 graphs (C99), in the number formats of
 * cpp/include/tinyarena/training/training_graph.h.
 *
 * Formats
 * -------
 * - Forward tensors are int8 as inference. A tensor saved only for a RELU/RELU6 derivative is
 *   a 1-bit mask: element i is bit (i % 8) of byte i / 8 (LSB first), ceil(n / 8) bytes; the
 *   unused bits of the last byte are 0.
 * - Activation gradients are int8 with zero point 0, range [-127, 127] (symmetric), and one
 *   per-tensor scale chosen at run time. The input gradient of CONV_2D / FULLY_CONNECTED is
 *   accumulated in int32 and requantized with a POWER-OF-TWO step: the kernel returns the
 *   shift s (0..31), the smallest for which every value fits, and
 *       grad_in_scale = grad_out_scale * weight_scale * 2^s.
 *   Power of two because the scale is picked at run time on a core that may have no FPU: the
 *   requantization is then one rounding shift per element (round half away from zero, as
 *   ta_rounding_divide_by_pot), integer-exact on every target, and the float work is one
 *   ldexp per tensor. The price is at most one bit of the int8 range (the largest |value|
 *   lands in [64, 127] instead of exactly 127). Two passes (training_graph.h's default): each
 *   input-gradient row is gathered twice, first for the maximum, then to be written; the
 *   scratch is one row of int32.
 * - Weights are int8 with zero point 0 (TFLite's symmetric weights), OHWI for conv
 *   ([out_c][kernel_h][kernel_w][in_c]) and [out][in] for fully connected. Per-channel weight
 *   scales enter the input gradient as integer factors `channel_mult[co]` = round(s_w[co] /
 *   max(s_w) * 2^R) that multiply each output-gradient value (NULL: all 1, a per-tensor scale);
 *   the input gradient's scale is then grad_out_scale * max(s_w) * 2^(s - R). The code generator
 *   picks R so that no int32 sum can overflow.
 * - Weight and bias gradients are int32 (exact sums; scale grad_out_scale * input_scale for
 *   weights, grad_out_scale for biases). A weight gradient is computed one output channel at
 *   a time (channel_weights int32 of scratch) and applied at once by the SGD update.
 *
 * SGD update (QAS-style scaling)
 * ------------------------------
 * With real weight w = s_w * q (q the int8 value), SGD on the real weight, w -= lr * dL/dw,
 * in int8 units is q -= lr * dL/dw / s_w; QAS (quantization-aware scaling) reaches the same
 * step by multiplying the gradient of the quantized weight (s_w * dL/dw) by s_w^-2. With the
 * int32 gradient G (dL/dw = s_g * s_x * G for weights, dL/db = s_g * G for biases):
 *     weights  q[k][j] = clamp(q[k][j] - round(G[j] * lr * s_g * s_x / s_w[k]), -127, 127)
 *     biases   b[k]    = sat32(b[k]    - round(G[k] * lr * s_g / (s_x * s_w[k])))
 * where the real factor is computed per channel in double, ((lr * s_g) * s_x) / s_w[k] (bias:
 * (lr * s_g) / (s_x * s_w[k])), turned into a multiplier (m, e) as TFLite's QuantizeMultiplier
 * (factor = m * 2^(e - 31), m in [2^30, 2^31)), and each element's step is the exact integer
 * round(G * m / 2^(31 - e)), ties away from zero. Steps below half an int8 step round to 0.
 *
 * Conv and depthwise take one NHWC image (fully connected: `batches` rows), dilation 1.
 */
#ifndef TINYARENA_TRAINING_H
#define TINYARENA_TRAINING_H

#include <stddef.h>
#include <stdint.h>

#include "tinyarena_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- RELU / RELU6 derivative masks ------------------------------------------------------- */

/* Bit i of `mask` = (lo < output[i] && output[i] < hi): 1 strictly inside the active range.
 * lo is the output zero point (real 0); hi is RELU6's int8 upper bound (the quantized 6), or
 * 128 for RELU (no upper bound). Writes ceil(n / 8) bytes. */
void ta_relu_mask_write(const int8_t *output, int32_t n, int32_t lo, int32_t hi, uint8_t *mask);

/* grad[i] = 0 where bit i of `mask` is clear (in place); other elements are unchanged. */
void ta_relu_mask_apply(int8_t *grad, int32_t n, const uint8_t *mask);

/* --- Requantization and the SGD update ----------------------------------------------------- */

/* The smallest s in [0, 31] with round(max_abs / 2^s) <= 127. */
int32_t ta_grad_shift_for(int32_t max_abs);

/* out[i] = clamp(round(acc[i] / 2^shift), -127, 127), ties away from zero. */
void ta_grad_requantize_s8(const int32_t *acc, int32_t n, int32_t shift, int8_t *out);

/* (m, e) for a real factor >= 0 as QuantizeMultiplier: factor = m * 2^(e - 31), m in
 * [2^30, 2^31); factor 0 gives m = 0. */
void ta_sgd_multiplier(double factor, int32_t *m, int32_t *e);

/* round(g * m / 2^(31 - e)) (ties away from zero), saturated to int32. */
int32_t ta_sgd_step(int32_t g, int32_t m, int32_t e);

/* q[j] = clamp(q[j] - ta_sgd_step(grad[j], m, e), -127, 127) for j < n. */
void ta_sgd_update_s8(int8_t *q, const int32_t *grad, int32_t n, int32_t m, int32_t e);
/* The same for q[j * stride] (a depthwise channel's weights are `channels` apart). */
void ta_sgd_update_strided_s8(int8_t *q, int32_t stride, const int32_t *grad, int32_t n, int32_t m, int32_t e);

/* Updates at the end (--no-reorder-updates): the SGD update of output channels co < `channels` from a
 * whole int32 weight gradient, channel co's channel_weights values at grad + co * channel_weights;
 * channel co's weights are weights[co * channel_stride + j * element_stride] (conv / fully
 * connected: channel_stride = channel_weights, element_stride 1; depthwise: 1 and out_c). The
 * factor per channel is lr * grad_out_scale * input_scale / weight_scale[co] (see the top): the
 * same arithmetic as the fused per-channel updates. */
void ta_sgd_update_weights_s8(int8_t *weights, int32_t channel_stride, int32_t element_stride, const int32_t *grad,
                              int32_t channels, int32_t channel_weights, float lr, float grad_out_scale,
                              float input_scale, const float *weight_scale);

/* grad[c] = sum over the pixels of grad_out[pixel][c] (a bias gradient, `channels` int32). */
void ta_grad_bias_s32(const int8_t *grad_out, int64_t pixels, int32_t channels, int32_t *grad);

/* bias[k] = sat32(bias[k] - step(grad[k])) for k < channels, with the bias factor
 * lr * grad_scale / (input_scale * weight_scale[k]) (see the top). */
void ta_sgd_update_bias_s32(int32_t *bias, const int32_t *grad, int32_t channels, float lr, float grad_scale,
                            float input_scale, const float *weight_scale);

/* grad[i] = 0 unless lo < output[i] < hi: a RELU/RELU6 derivative read from the saved int8
 * output itself (in place). */
void ta_relu_output_apply(int8_t *grad, int32_t n, const int8_t *output, int32_t lo, int32_t hi);

/* --- Loss ---------------------------------------------------------------------------------- */

/* Softmax cross-entropy of one row of `n` int8 class scores (real = scale * (q - zero_point)):
 * the scores are probabilities (a SOFTMAX output) when `probabilities` is set, else logits
 * (softmax taken here, in float). Writes the logits' gradient p - onehot(label) as
 * grad[i] = round((p[i] - onehot[i]) / *grad_scale) with *grad_scale = max |p - onehot| / 127
 * (1/127 when all are 0), and returns the loss -log(max(p[label], 1e-7)). */
float ta_softmax_xent_grad_s8(const int8_t *scores, int32_t n, float scale, int32_t zero_point, int32_t probabilities,
                              int32_t label, int8_t *grad, float *grad_scale);

/* --- Gradient sum (a tensor several ops read) ----------------------------------------------- */

/* out[i] = round(sum_k scales[k] * parts[k][i] / *out_scale), *out_scale = max_i |sum| / 127 (1/127
 * when all are 0), the sums in float; `out` may be parts[0] (each element is read before written). */
void ta_grad_sum_s8(const int8_t *const *parts, const float *scales, int32_t count, int32_t n, int8_t *out,
                    float *out_scale);

/* --- PAD / PADV2 backward ------------------------------------------------------------------ */

/* The input gradient of a PAD with params `p` (the forward op's): grad_out cropped,
 * grad_in[i] = grad_out[i shifted by p->before in every dimension]; the scale is unchanged. */
void ta_pad_grad_input_s8(const ta_pad_params *p, const int8_t *grad_out, int8_t *grad_in);

/* --- AVERAGE_POOL_2D / MEAN backward (windows that neither overlap nor leave the input) --------- */

/* grad_in[iy][ix][c] = grad_out[oy][ox][c] for the window (oy, ox) holding (iy, ix), else 0 (an
 * input pixel no window covers). The window's 1 / (filter_h * filter_w) goes into the scale:
 * grad_in_scale = grad_out_scale / (filter_h * filter_w). */
void ta_avgpool_grad_input_s8(const int8_t *grad_out, int32_t in_h, int32_t in_w, int32_t channels, int32_t out_h,
                              int32_t out_w, int32_t filter_h, int32_t filter_w, int32_t stride_h, int32_t stride_w,
                              int8_t *grad_in);

/* --- CONV_2D backward (FULLY_CONNECTED is the 1x1 case: in_h = out_h = batches) ----------- */

typedef struct ta_conv_grad_params {
  int32_t in_h, in_w, in_c;
  int32_t out_h, out_w, out_c;
  int32_t kernel_h, kernel_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left;
  int32_t input_zero_point;  /* of the saved forward input x */
  int8_t *weights;           /* [out_c][kernel_h][kernel_w][in_c], zero point 0; updated in place */
  int32_t *bias;             /* [out_c], updated in place (may be NULL: no bias) */
  const int32_t *channel_mult; /* [out_c] per-channel factors of the input gradient, or NULL (all 1) */
  /* A partial update (layers:I@FRACTION): 0 = every output channel's weights are in `weights` and
   * updated. Else `weights` holds the first trainable_channels channels only (the updated ones,
   * [trainable_channels][kernel_h][kernel_w][in_c]) and channel co >= trainable_channels is read
   * from frozen_weights (the whole constant tensor, same layout), never updated. */
  const int8_t *frozen_weights;
  int32_t trainable_channels;
} ta_conv_grad_params;

/* Input-gradient row iy, int32: row[ix * in_c + ci] = sum over (ky, kx, co) with
 * iy = oy * stride_h - pad_top + ky and ix = ox * stride_w - pad_left + kx of
 * grad_out[oy][ox][co] * weights[co][ky][kx][ci]. `row` holds in_w * in_c int32. */
void ta_conv_grad_input_row_s32(const ta_conv_grad_params *p, const int8_t *grad_out, int32_t iy, int32_t *row);

/* The int8 input gradient (two passes over the rows; `row_scratch`: in_w * in_c int32).
 * Returns the power-of-two shift s: grad_in_scale = grad_out_scale * weight_scale * 2^s. */
int32_t ta_conv_grad_input_s8(const ta_conv_grad_params *p, const int8_t *grad_out, int8_t *grad_in,
                              int32_t *row_scratch);

/* Weight gradient of output channel co, int32: grad[(ky * kernel_w + kx) * in_c + ci] = sum over
 * in-bounds (oy, ox) of grad_out[oy][ox][co] * (input[iy][ix][ci] - input_zero_point)
 * (padding contributes 0). `grad` holds kernel_h * kernel_w * in_c int32. */
void ta_conv_grad_weight_channel_s32(const ta_conv_grad_params *p, const int8_t *grad_out, const int8_t *input,
                                     int32_t co, int32_t *grad);

/* Bias gradient: grad[co] = sum over (oy, ox) of grad_out[oy][ox][co] (out_c int32). */
void ta_conv_grad_bias_s32(const ta_conv_grad_params *p, const int8_t *grad_out, int32_t *grad);

/* The fused per-output-channel step: for each updated co (every co, or co < p->trainable_channels),
 * its weight gradient into `channel_scratch`
 * (kernel_h * kernel_w * in_c int32), then at once the SGD update of that channel's weights;
 * then the bias gradient (into `bias_grad`, out_c int32) and its update when p->bias is set.
 * Scales: lr, grad_out_scale s_g, input_scale s_x, weight_scale[out_c] s_w (see the top). */
void ta_conv_backward_update(const ta_conv_grad_params *p, const int8_t *grad_out, const int8_t *input, float lr,
                             float grad_out_scale, float input_scale, const float *weight_scale,
                             int32_t *channel_scratch, int32_t *bias_grad);

/* The forward CONV_2D / FULLY_CONNECTED of a partial update: output channels co < channels read
 * `trainable` ([channels][...] int8, the SRAM copy), the others p->weights; everything else as
 * ta_conv_s8 / ta_fully_connected_s8 with the portable kernel (two calls over channel ranges). */
void ta_conv_s8_split(const ta_conv_params *p, const int8_t *trainable, int32_t channels, const int8_t *input,
                      int8_t *output, int32_t row_begin, int32_t row_end, void *scratch);
void ta_fully_connected_s8_split(const ta_fc_params *p, const int8_t *trainable, int32_t channels,
                                 const int8_t *input, int8_t *output, void *scratch);

/* FULLY_CONNECTED as the 1x1 conv above: input [batches][in_depth], weights [out_depth][in_depth]. */
void ta_fc_grad_params(int32_t batches, int32_t in_depth, int32_t out_depth, int32_t input_zero_point,
                       int8_t *weights, int32_t *bias, ta_conv_grad_params *p);

/* --- DEPTHWISE_CONV_2D backward --------------------------------------------------------- */

typedef struct ta_dwconv_grad_params {
  int32_t in_h, in_w, in_c;
  int32_t out_h, out_w, depth_multiplier; /* out_c = in_c * depth_multiplier */
  int32_t kernel_h, kernel_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left;
  int32_t input_zero_point;
  int8_t *weights;  /* [kernel_h][kernel_w][out_c] (TFLite's [1][kh][kw][out_c]), zero point 0 */
  int32_t *bias;    /* [out_c] (may be NULL) */
  const int32_t *channel_mult; /* [out_c] per-channel factors of the input gradient, or NULL (all 1) */
} ta_dwconv_grad_params;

/* Input-gradient row iy, int32: row[ix * in_c + ci] = sum over (ky, kx) with
 * iy = oy * stride_h - pad_top + ky, ix = ox * stride_w - pad_left + kx and over d <
 * depth_multiplier of grad_out[oy][ox][co] * weights[ky][kx][co], co = ci * depth_multiplier + d. */
void ta_dwconv_grad_input_row_s32(const ta_dwconv_grad_params *p, const int8_t *grad_out, int32_t iy,
                                  int32_t *row);

/* The int8 input gradient, two passes as ta_conv_grad_input_s8 (returns the shift). */
int32_t ta_dwconv_grad_input_s8(const ta_dwconv_grad_params *p, const int8_t *grad_out, int8_t *grad_in,
                                int32_t *row_scratch);

/* Weight gradient of output channel co: grad[ky * kernel_w + kx] = sum over in-bounds (oy, ox) of
 * grad_out[oy][ox][co] * (input[iy][ix][co / depth_multiplier] - input_zero_point). */
void ta_dwconv_grad_weight_channel_s32(const ta_dwconv_grad_params *p, const int8_t *grad_out,
                                       const int8_t *input, int32_t co, int32_t *grad);

/* The fused per-output-channel gradient + SGD update and the bias update, as
 * ta_conv_backward_update (channel_scratch: kernel_h * kernel_w int32; bias_grad: out_c). */
void ta_dwconv_backward_update(const ta_dwconv_grad_params *p, const int8_t *grad_out, const int8_t *input,
                               float lr, float grad_out_scale, float input_scale, const float *weight_scale,
                               int32_t *channel_scratch, int32_t *bias_grad);

#ifdef __cplusplus
}
#endif

#endif /* TINYARENA_TRAINING_H */
