#include "tinyarena/op_params/quantization.h"

#include <algorithm>
#include <cmath>

namespace tinyarena::op_params {

Multiplier quantize_multiplier(double real) {
  if (real == 0.0) return {};
  int shift = 0;
  const double q = std::frexp(real, &shift);
  int64_t q_fixed = static_cast<int64_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
  if (q_fixed == (int64_t{1} << 31)) {
    q_fixed /= 2;
    ++shift;
  }
  if (shift < -31) return {};
  return {static_cast<int32_t>(q_fixed), shift};
}

int32_t downscale_to_int16_multiplier(int32_t mult) {
  // Rounds the Q31 multiplier to Q15, saturating at the top.
  if (mult >= INT32_MAX - (1 << 15)) return INT16_MAX;
  return (mult + (1 << 15)) >> 16;
}

int32_t quantize_value(float value, float scale, int32_t zero_point) {
  const float scaled = value / scale;  // a float32 division, then roundf
  return zero_point + static_cast<int32_t>(std::round(scaled));
}

std::pair<int32_t, int32_t> activation_range(graph::Activation activation, float scale, int32_t zero_point) {
  constexpr int32_t qmin = -128, qmax = 127;
  const auto q = [&](float f) { return quantize_value(f, scale, zero_point); };
  switch (activation) {
    case graph::Activation::Relu: return {std::max(qmin, q(0.0f)), qmax};
    case graph::Activation::Relu6: return {std::max(qmin, q(0.0f)), std::min(qmax, q(6.0f))};
    case graph::Activation::ReluN1To1: return {std::max(qmin, q(-1.0f)), std::min(qmax, q(1.0f))};
    default: return {qmin, qmax};
  }
}

AxisPadding compute_padding(int64_t in_size, int64_t filter_size, int64_t stride, int64_t dilation,
                            graph::Padding padding) {
  const int64_t effective = (filter_size - 1) * dilation + 1;
  AxisPadding p;
  p.out_size = padding == graph::Padding::Same ? (in_size + stride - 1) / stride : (in_size - effective + stride) / stride;
  const int64_t total = std::max<int64_t>((p.out_size - 1) * stride + effective - in_size, 0);
  p.before = total / 2;
  p.after = total - total / 2;
  return p;
}

AxisPadding window_padding(const graph::OpOptions& options, bool height, int64_t in_size, int64_t filter_size,
                           int64_t dilation) {
  const int64_t stride = height ? options.stride_h : options.stride_w;
  if (options.padding != graph::Padding::Explicit)
    return compute_padding(in_size, filter_size, stride, dilation, options.padding);
  const int64_t before = height ? options.pad_top : options.pad_left;
  const int64_t after = height ? options.pad_bottom : options.pad_right;
  const int64_t padded = in_size + before + after, effective = (filter_size - 1) * dilation + 1;
  return {padded < effective ? 0 : (padded - effective) / stride + 1, before, after};
}

float scale_of(const graph::Tensor& tensor) {
  return tensor.quantization.scale.empty() ? 1.0f : tensor.quantization.scale[0];
}

int32_t zero_point_of(const graph::Tensor& tensor) {
  return tensor.quantization.zero_point.empty() ? 0 : static_cast<int32_t>(tensor.quantization.zero_point[0]);
}

}  // namespace tinyarena::op_params
