// CONV_2D and DEPTHWISE_CONV_2D params (TFLite's conv.cc / depthwise_conv.cc
// Prepare with reference_integer_ops::ConvPerChannel / DepthwiseConvPerChannel).
#include <tuple>

#include "accumulators.h"
#include "tinyarena/op_params/geometry.h"
#include "tinyarena/op_params/op_checks.h"
#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena/op_params/quantization.h"

namespace tinyarena::op_params {
namespace {

using namespace detail;

// PopulateConvolutionQuantizationParams: per channel,
// double(input_scale) * double(filter_scale) / double(output_scale).
ChannelRequant channel_requant(const graph::Op& op, const graph::Tensor& in, const graph::Tensor& weights,
                               const graph::Tensor& out, int64_t channels, int axis) {
  if (weights_zero_point(op, weights) != 0) unsupported(op, "the weights must be symmetric (zero point 0)");
  ChannelRequant requant;
  for (float w_scale : weight_scales(op, weights, channels, axis)) {
    const Multiplier m = requant_multiplier(
        op, static_cast<double>(scale_of(in)) * static_cast<double>(w_scale) / static_cast<double>(scale_of(out)),
        "the output multiplier");
    requant.mult.push_back(m.mult);
    requant.shift.push_back(m.shift);
  }
  return requant;
}

// The shape fields conv and depthwise share.
template <typename Params>
void fill_geometry(Params& p, const graph::Op& op, const graph::Tensor& in, const Window& win, int32_t kernel_h,
                   int32_t kernel_w) {
  fill_window(p, op, in, win);
  p.in_c = in.shape[3];
  p.kernel_h = kernel_h;
  p.kernel_w = kernel_w;
  p.dilation_h = op.options.dilation_h;
  p.dilation_w = op.options.dilation_w;
}

// The quantization fields they share: offsets, activation range.
template <typename Params>
void fill_quantization(Params& p, const graph::Op& op, const graph::Tensor& in, const graph::Tensor& out) {
  p.input_offset = -zero_point_of(in);
  p.output_offset = zero_point_of(out);
  std::tie(p.act_min, p.act_max) = fused_activation_range(op, out);
}

}  // namespace

ConvKernel detail::conv_geometry(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0, 4);
  const graph::Tensor& weights = constant_input(graph, op, 1, graph::DType::Int8, 4);  // [out_c][kh][kw][in_c]
  const graph::Tensor& out = int8_output(graph, op, 0, 4);
  const int32_t out_c = weights.shape[0], kh = weights.shape[1], kw = weights.shape[2];
  if (weights.shape[3] != in.shape[3])
    unsupported(op, "grouped convolution (filter depth " + std::to_string(weights.shape[3]) + ", input depth " +
                        std::to_string(in.shape[3]) + ") is not supported");
  const Window win = window(op, in, kh, kw, op.options.dilation_h, op.options.dilation_w);
  require_shape(op, out, {in.shape[0], win.out_h, win.out_w, out_c}, "the output");
  ConvKernel k;
  fill_geometry(k.params, op, in, win, kh, kw);
  k.params.out_c = out_c;
  k.images = in.shape[0];
  return k;
}

DepthwiseKernel detail::depthwise_geometry(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0, 4);
  const graph::Tensor& weights = constant_input(graph, op, 1, graph::DType::Int8, 4);  // [1][kh][kw][out_c]
  const graph::Tensor& out = int8_output(graph, op, 0, 4);
  const int32_t kh = weights.shape[1], kw = weights.shape[2], out_c = weights.shape[3], in_c = in.shape[3];
  // The multiplier follows from the shapes (out_c = in_c * depth_multiplier), as in TFLite.
  if (weights.shape[0] != 1 || in_c < 1 || out_c % in_c != 0)
    unsupported(op, "filter shape does not match the input depth " + std::to_string(in_c));
  const Window win = window(op, in, kh, kw, op.options.dilation_h, op.options.dilation_w);
  require_shape(op, out, {in.shape[0], win.out_h, win.out_w, out_c}, "the output");
  DepthwiseKernel k;
  fill_geometry(k.params, op, in, win, kh, kw);
  k.params.depth_multiplier = out_c / in_c;
  k.images = in.shape[0];
  return k;
}

ConvKernel conv_kernel(const graph::Graph& graph, const graph::Op& op) {
  ConvKernel k = conv_geometry(graph, op);
  const graph::Tensor &in = *graph.input(op, 0), &out = *graph.output(op, 0);
  fill_quantization(k.params, op, in, out);
  k.requant = channel_requant(op, in, *graph.input(op, 1), out, k.params.out_c, 0);
  k.bias = bias_values(graph, op, 2, k.params.out_c);
  const auto* weights = reinterpret_cast<const int8_t*>(graph.constant_data(*graph.input(op, 1)));
  const int64_t taps = int64_t{k.params.kernel_h} * k.params.kernel_w * k.params.in_c;  // OHWI: a channel's taps in a row
  prove_weight_accumulators(op, {weights, k.params.out_c, taps, taps, 1}, k.bias, k.params.input_offset, 0);
  k.params.packed_doubled = conv_can_double(k, weights);  // the SIMD path's 2x weights, where exact
  return k;
}

DepthwiseKernel depthwise_kernel(const graph::Graph& graph, const graph::Op& op) {
  DepthwiseKernel k = depthwise_geometry(graph, op);
  const graph::Tensor &in = *graph.input(op, 0), &out = *graph.output(op, 0);
  const int32_t out_c = k.params.in_c * k.params.depth_multiplier;
  fill_quantization(k.params, op, in, out);
  k.requant = channel_requant(op, in, *graph.input(op, 1), out, out_c, 3);
  k.bias = bias_values(graph, op, 2, out_c);
  const auto* weights = reinterpret_cast<const int8_t*>(graph.constant_data(*graph.input(op, 1)));
  const int64_t taps = int64_t{k.params.kernel_h} * k.params.kernel_w;  // [1][kh][kw][out_c]: channel c every out_c
  prove_weight_accumulators(op, {weights, out_c, taps, 1, out_c}, k.bias, k.params.input_offset, 0);
  return k;
}

}  // namespace tinyarena::op_params
