// The parameter arithmetic of TFLite's reference kernels' Prepare steps,
// reproduced exactly: which products are float32 and which double changes
// multipliers in their last bit, and so outputs.
#pragma once

#include <cstdint>
#include <utility>

#include "tinyarena/graph/graph.h"

namespace tinyarena::op_params {

// TFLite's QuantizeMultiplier: real = mult * 2^(shift - 31), mult in [2^30, 2^31).
struct Multiplier {
  int32_t mult = 0;
  int32_t shift = 0;
};
Multiplier quantize_multiplier(double real);

// TFLite's DownScaleInt32ToInt16Multiplier (HARD_SWISH's 16-bit fixed point).
int32_t downscale_to_int16_multiplier(int32_t mult);

// zero_point + roundf(value / scale), all in float32, as the Quantize lambda of
// CalculateActivationRangeQuantized computes it.
int32_t quantize_value(float value, float scale, int32_t zero_point);

// CalculateActivationRangeQuantized for int8 outputs: [act_min, act_max].
std::pair<int32_t, int32_t> activation_range(graph::Activation activation, float scale, int32_t zero_point);

// ComputePaddingHeightWidth for one axis (sizes in int64: hostile options cannot overflow).
struct AxisPadding {
  int64_t out_size = 0;
  int64_t before = 0;
  int64_t after = 0;
};
AxisPadding compute_padding(int64_t in_size, int64_t filter_size, int64_t stride, int64_t dilation,
                            graph::Padding padding);

// The height (`height`) or width padding of a window op with `options`:
// SAME/VALID as compute_padding, Explicit as VALID over the input padded by
// its pad_top/bottom (pad_left/right).
AxisPadding window_padding(const graph::OpOptions& options, bool height, int64_t in_size, int64_t filter_size,
                           int64_t dilation);

// The first scale and zero point of a tensor (per-tensor quantization).
float scale_of(const graph::Tensor& tensor);
int32_t zero_point_of(const graph::Tensor& tensor);

}  // namespace tinyarena::op_params
