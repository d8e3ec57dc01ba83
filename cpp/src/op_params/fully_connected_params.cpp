// FULLY_CONNECTED params (TFLite's fully_connected.cc Prepare and its current
// reference kernel, which rescales the int32 accumulator in double: as one int32 multiply where
// integer_rescale proves that equal).
#include <optional>
#include <tuple>

#include "accumulators.h"
#include "tinyarena/op_params/geometry.h"
#include "tinyarena/op_params/op_checks.h"
#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena/op_params/quantization.h"

namespace tinyarena::op_params {

using namespace detail;

FullyConnectedKernel detail::fully_connected_geometry(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0);
  const graph::Tensor& weights = constant_input(graph, op, 1, graph::DType::Int8, 2);  // [N][K]
  const graph::Tensor& out = int8_output(graph, op, 0);
  const int32_t n = weights.shape[0], k = weights.shape[1];
  // The input is read as rows of K values, whatever its rank.
  if (k < 1 || n < 1 || in.element_count % k != 0)
    unsupported(op, "the input's " + std::to_string(in.element_count) + " values are not rows of " + std::to_string(k));
  const int64_t batches = in.element_count / k;
  if (out.element_count != batches * n)
    unsupported(op, "the output has " + std::to_string(out.element_count) + " values; the op computes " +
                        std::to_string(batches * n));
  FullyConnectedKernel kernel;
  kernel.params.batches = static_cast<int32_t>(batches);
  kernel.params.in_depth = k;
  kernel.params.out_depth = n;
  return kernel;
}

namespace {

// integer_rescale for every scale, or none if one is not proved (the layer stays in double).
std::vector<IntegerRescale> integer_rescales(const std::vector<double>& scales, int32_t lo, int32_t hi) {
  std::vector<IntegerRescale> rescales;
  for (double scale : scales) {
    const std::optional<IntegerRescale> rescale = integer_rescale(scale, lo, hi);
    if (!rescale) return {};
    rescales.push_back(*rescale);
  }
  return rescales;
}

}  // namespace

FullyConnectedKernel fully_connected_kernel(const graph::Graph& graph, const graph::Op& op) {
  FullyConnectedKernel kernel = fully_connected_geometry(graph, op);
  const graph::Tensor &in = *graph.input(op, 0), &weights = *graph.input(op, 1), &out = *graph.output(op, 0);
  ta_fc_params& p = kernel.params;
  p.input_offset = -zero_point_of(in);
  p.weights_offset = -weights_zero_point(op, weights);
  p.output_offset = zero_point_of(out);
  std::tie(p.act_min, p.act_max) = fused_activation_range(op, out);
  p.per_channel = weights.quantization.scale.size() > 1;
  // double(input_scale) * double(filter_scale) / double(output_scale), per channel or once.
  for (float w_scale : p.per_channel ? weight_scales(op, weights, p.out_depth, 0) : std::vector<float>{scale_of(weights)})
    kernel.out_scale_f64.push_back(requant_scale(
        op, static_cast<double>(scale_of(in)) * static_cast<double>(w_scale) / static_cast<double>(scale_of(out)),
        "the output scale"));
  kernel.rescale = integer_rescales(kernel.out_scale_f64, p.act_min - p.output_offset, p.act_max - p.output_offset);
  if (!kernel.rescale.empty()) kernel.out_scale_f64.clear();
  kernel.bias = bias_values(graph, op, 2, p.out_depth);
  prove_weight_accumulators(op, {reinterpret_cast<const int8_t*>(graph.constant_data(weights)), p.out_depth,
                                 p.in_depth, p.in_depth, 1},
                            kernel.bias, p.input_offset, p.weights_offset);
  return kernel;
}

}  // namespace tinyarena::op_params
