// Checks the kernel-params builders share: what a kernel needs of an op's
// tensors. Each throws UnsupportedError naming the op (index and type).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/op_params/quantization.h"

namespace tinyarena::op_params::detail {

[[noreturn]] void unsupported(const graph::Op& op, const std::string& why);

// An int8 tensor at input/output `position` (an activation, or a constant
// operand), with at most TA_MAX_DIMS dimensions (exactly `rank` when rank > 0)
// and < 2^31 elements.
const graph::Tensor& int8_input(const graph::Graph& graph, const graph::Op& op, size_t position, int rank = 0);
const graph::Tensor& int8_output(const graph::Graph& graph, const graph::Op& op, size_t position, int rank = 0);
// Any activation of `dtype` at input/output `position` (same limits).
const graph::Tensor& activation(const graph::Op& op, const graph::Tensor* tensor, graph::DType dtype,
                                const char* what, int rank = 0);

// A constant input of `dtype` (and `rank` when > 0).
const graph::Tensor& constant_input(const graph::Graph& graph, const graph::Op& op, size_t position,
                                    graph::DType dtype, int rank = 0);
// The values of a constant int32 (or int64) input, e.g. axes, paddings, perm.
std::vector<int32_t> int_values(const graph::Graph& graph, const graph::Op& op, size_t position);

// The optional int32 bias at `position` with `channels` values; empty when absent.
std::vector<int32_t> bias_values(const graph::Graph& graph, const graph::Op& op, size_t position, int64_t channels);

// Weight scales, one per output channel (a per-tensor scale repeated); a
// per-channel quantization must run along `axis`.
std::vector<float> weight_scales(const graph::Op& op, const graph::Tensor& weights, int64_t channels, int axis);
// The weights' zero point, which every channel must share (0 when absent).
int32_t weights_zero_point(const graph::Op& op, const graph::Tensor& weights);

// QuantizeMultiplier of a requantization's `real` scale ratio (`what`), for a
// kernel that takes shifts up to `max_shift`: refuses a ratio that is negative,
// not finite, or so large that the shift would exceed it (TFLite's kernels
// assume shift <= 30; the "smaller than one" forms shift <= 0).
Multiplier requant_multiplier(const graph::Op& op, double real, const char* what, int max_shift = 30);
// The ratio itself, for kernels that rescale in floating point: finite and >= 0.
double requant_scale(const graph::Op& op, double real, const char* what);

// Checks that `tensor` has exactly `shape`.
void require_shape(const graph::Op& op, const graph::Tensor& tensor, const std::vector<int64_t>& shape,
                   const char* what);
// Throws when `value` (a computed size) does not fit an int32 kernel field.
int32_t to_int32(const graph::Op& op, int64_t value, const char* what);

// The fused activation range of an int8 output (NONE, RELU, RELU6, RELU_N1_TO_1).
std::pair<int32_t, int32_t> fused_activation_range(const graph::Op& op, const graph::Tensor& output);

// The output geometry of a sliding window (conv, depthwise, pools) over the
// NHWC `input`: output height/width and padding, checked to fit int32.
struct Window {
  int32_t out_h = 0, out_w = 0;
  int32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};
Window window(const graph::Op& op, const graph::Tensor& input, int64_t kernel_h, int64_t kernel_w,
              int64_t dilation_h, int64_t dilation_w);

// The window fields conv, depthwise and pool params share (the same names in
// their structs): input and output height/width, strides, padding.
template <typename Params>
void fill_window(Params& p, const graph::Op& op, const graph::Tensor& input, const Window& win) {
  p.in_h = input.shape[1];
  p.in_w = input.shape[2];
  p.out_h = win.out_h;
  p.out_w = win.out_w;
  p.stride_h = op.options.stride_h;
  p.stride_w = op.options.stride_w;
  p.pad_top = win.pad_top;
  p.pad_left = win.pad_left;
  p.pad_bottom = win.pad_bottom;
  p.pad_right = win.pad_right;
}

// A shape right-aligned into TA_MAX_DIMS entries with leading 1s.
std::vector<int32_t> shape6(const std::vector<int32_t>& shape);
// Copies `values` into a fixed C array field of TA_MAX_DIMS entries (rest = fill).
void fill6(int32_t* field, const std::vector<int32_t>& values, int32_t fill = 0);

}  // namespace tinyarena::op_params::detail
