#include "tinyarena/codegen/quantization.h"

#include <algorithm>
#include <cmath>

namespace tinyarena::codegen {

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

std::pair<int32_t, int32_t> activation_range(graph::Activation activation, float scale, int64_t zero_point) {
  // roundf(f / scale) in float32, as TFLite's quantize lambda does.
  const auto quantize = [&](float f) { return static_cast<int32_t>(zero_point) + static_cast<int32_t>(std::round(f / scale)); };
  constexpr int32_t qmin = -128, qmax = 127;
  switch (activation) {
    case graph::Activation::Relu: return {std::max(qmin, quantize(0.0f)), qmax};
    case graph::Activation::Relu6: return {std::max(qmin, quantize(0.0f)), std::min(qmax, quantize(6.0f))};
    case graph::Activation::ReluN1To1: return {std::max(qmin, quantize(-1.0f)), std::min(qmax, quantize(1.0f))};
    default: return {qmin, qmax};
  }
}

AxisPadding compute_padding(int32_t in_size, int32_t filter_size, int32_t stride, int32_t dilation,
                            graph::Padding padding) {
  const int32_t effective = (filter_size - 1) * dilation + 1;
  AxisPadding p;
  p.out_size = padding == graph::Padding::Same ? (in_size + stride - 1) / stride : (in_size - effective + stride) / stride;
  const int32_t total = std::max((p.out_size - 1) * stride + effective - in_size, 0);
  p.before = total / 2;
  p.after = total - total / 2;
  return p;
}

float scale_of(const graph::Tensor& tensor) {
  return tensor.quantization.scale.empty() ? 1.0f : tensor.quantization.scale[0];
}

int32_t zero_point_of(const graph::Tensor& tensor) {
  return tensor.quantization.zero_point.empty() ? 0 : static_cast<int32_t>(tensor.quantization.zero_point[0]);
}

}  // namespace tinyarena::codegen
