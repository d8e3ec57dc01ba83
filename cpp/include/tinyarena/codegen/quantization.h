// The parameter arithmetic of TFLite's reference kernels' Prepare steps,
// reproduced exactly: which products are float32 and which double changes
// multipliers in their last bit, and so outputs.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tinyarena/graph/graph.h"

namespace tinyarena::codegen {

// TFLite's QuantizeMultiplier: real = mult * 2^(shift - 31), mult in [2^30, 2^31).
struct Multiplier {
  int32_t mult = 0;
  int32_t shift = 0;
};
Multiplier quantize_multiplier(double real);

// CalculateActivationRangeQuantized for int8 outputs: [act_min, act_max].
std::pair<int32_t, int32_t> activation_range(graph::Activation activation, float scale, int64_t zero_point);

// ComputePaddingHeightWidth for one axis.
struct AxisPadding {
  int32_t out_size = 0;
  int32_t before = 0;
  int32_t after = 0;
};
AxisPadding compute_padding(int32_t in_size, int32_t filter_size, int32_t stride, int32_t dilation,
                            graph::Padding padding);

// The first scale and zero point of a tensor (per-tensor quantization).
float scale_of(const graph::Tensor& tensor);
int32_t zero_point_of(const graph::Tensor& tensor);

}  // namespace tinyarena::codegen
