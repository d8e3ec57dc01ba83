// Params of the elementwise kernels: ADD, SUB, MUL and SQUARED_DIFFERENCE
// (add.cc / sub.cc / mul.cc / squared_difference.cc Prepare; float32 ADD, SUB
// and MUL: shapes and CalculateActivationRange's float range), LEAKY_RELU
// (LeakyReluPrepare),
// RELU / RELU6 / RELU_N1_TO_1 (ReluPrepare + QuantizedReluX), QUANTIZE
// (int8 <-> int8 requantize, float32 <-> int8 affine), HARD_SWISH
// (HardSwishPrepare) and LOGISTIC / TANH (LUTPopulate<int8_t>).
#include <algorithm>
#include <limits>
#include <tuple>

#include "tinyarena/op_params/op_checks.h"
#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena/op_params/quantization.h"

namespace tinyarena::op_params {
namespace {

using namespace detail;

constexpr int32_t kAddLeftShift = 20;  // int8 ADD / SUB rescale both inputs << 20 first
constexpr int32_t kSquaredDifferenceLeftShift = 7;

// ADD, SUB and SQUARED_DIFFERENCE: each input brought to twice the larger input
// scale, shifted left by `left_shift` first (every ratio in double).
// Each is applied as MultiplyByQuantizedMultiplierSmallerThanOneExp: shift <= 0.
void fill_input_multipliers(ta_binary_params& p, const graph::Op& op, const graph::Tensor& a, const graph::Tensor& b,
                            int32_t left_shift) {
  const double twice_max = 2.0 * static_cast<double>(std::max(scale_of(a), scale_of(b)));
  const Multiplier input1 =
      requant_multiplier(op, static_cast<double>(scale_of(a)) / twice_max, "the first input's multiplier", 0);
  const Multiplier input2 =
      requant_multiplier(op, static_cast<double>(scale_of(b)) / twice_max, "the second input's multiplier", 0);
  p.left_shift = left_shift;
  p.input1_mult = input1.mult;
  p.input1_shift = input1.shift;
  p.input2_mult = input2.mult;
  p.input2_shift = input2.shift;
}

// The output multiplier of each binary op, as its Prepare computes it.
Multiplier binary_output_multiplier(const graph::Op& op, const graph::Tensor& a, const graph::Tensor& b,
                                    const graph::Tensor& out) {
  const double twice_max = 2.0 * static_cast<double>(std::max(scale_of(a), scale_of(b)));
  switch (op.opcode) {
    case opcode::kAdd:
    case opcode::kSub:
      return requant_multiplier(op, twice_max / (static_cast<double>(1 << kAddLeftShift) * scale_of(out)),
                                "the output multiplier", 0);
    case opcode::kSquaredDifference: {
      // The square of the common scale over 2^14 * output scale (that product in float32).
      const float shifted_out = static_cast<float>(1 << (2 * kSquaredDifferenceLeftShift)) * scale_of(out);
      return requant_multiplier(op, twice_max * twice_max / static_cast<double>(shifted_out),
                                "the output multiplier", 0);
    }
    default:  // MUL: input1_scale * input2_scale / output_scale, all float32.
      return requant_multiplier(op, static_cast<double>(scale_of(a) * scale_of(b) / scale_of(out)),
                                "the output multiplier");
  }
}

// NumPy-style broadcasting of the right-aligned shapes, as TFLite's
// ProcessBroadcastShapes: every dimension equal or 1 on one side.
void check_broadcast(const graph::Op& op, const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                     const graph::Tensor& out) {
  const size_t rank = std::max(a.size(), b.size());
  const std::vector<int32_t> a6 = shape6(a), b6 = shape6(b);
  std::vector<int64_t> shape;
  for (size_t d = TA_MAX_DIMS - rank; d < TA_MAX_DIMS; ++d) {
    if (a6[d] != b6[d] && a6[d] != 1 && b6[d] != 1) unsupported(op, "the input shapes do not broadcast");
    shape.push_back(a6[d] == 1 ? b6[d] : a6[d]);
  }
  require_shape(op, out, shape, "the output");
}

// The activation range the RELU ops clamp to, in the output's quantization.
graph::Activation relu_activation(int32_t code) {
  switch (code) {
    case opcode::kRelu: return graph::Activation::Relu;
    case opcode::kRelu6: return graph::Activation::Relu6;
    case opcode::kReluN1To1: return graph::Activation::ReluN1To1;
    default: return graph::Activation::None;
  }
}

// Input and output of a one-input elementwise int8 op, same element count.
std::pair<const graph::Tensor*, const graph::Tensor*> unary(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0);
  const graph::Tensor& out = int8_output(graph, op, 0);
  if (in.element_count != out.element_count) unsupported(op, "the input and output sizes differ");
  return {&in, &out};
}

// CalculateActivationRange<float>: the range a float op's fused activation clamps to.
std::pair<float, float> float_activation_range(const graph::Op& op) {
  switch (op.options.activation) {
    case graph::Activation::None:
      return {std::numeric_limits<float>::lowest(), std::numeric_limits<float>::max()};
    case graph::Activation::Relu: return {0.0f, std::numeric_limits<float>::max()};
    case graph::Activation::ReluN1To1: return {-1.0f, 1.0f};
    case graph::Activation::Relu6: return {0.0f, 6.0f};
    default:
      unsupported(op, std::string("fused activation ") + graph::activation_name(op.options.activation) +
                          " is not supported");
  }
}

}  // namespace

bool is_float_binary(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor* in = graph.input(op, 0);
  return (op.opcode == opcode::kAdd || op.opcode == opcode::kSub || op.opcode == opcode::kMul) && in &&
         in->dtype == graph::DType::Float32;
}

ta_binary_f32_params binary_f32_params(const graph::Graph& graph, const graph::Op& op) {
  if (op.opcode != opcode::kAdd && op.opcode != opcode::kSub && op.opcode != opcode::kMul)
    unsupported(op, "only ADD, SUB and MUL have float32 kernels");
  const graph::Tensor& a = activation(op, graph.input(op, 0), graph::DType::Float32, "the first input");
  const graph::Tensor& b = activation(op, graph.input(op, 1), graph::DType::Float32, "the second input");
  const graph::Tensor& out = activation(op, graph.output(op, 0), graph::DType::Float32, "the output");
  check_broadcast(op, a.shape, b.shape, out);
  ta_binary_f32_params p{};
  std::tie(p.act_min, p.act_max) = float_activation_range(op);
  fill6(p.shape1, shape6(a.shape));
  fill6(p.shape2, shape6(b.shape));
  fill6(p.out_shape, shape6(out.shape));
  return p;
}

ta_binary_params binary_params(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& a = int8_input(graph, op, 0);
  const graph::Tensor& b = int8_input(graph, op, 1);
  const graph::Tensor& out = int8_output(graph, op, 0);
  check_broadcast(op, a.shape, b.shape, out);
  ta_binary_params p{};
  p.input1_offset = -zero_point_of(a);
  p.input2_offset = -zero_point_of(b);
  p.output_offset = zero_point_of(out);
  std::tie(p.act_min, p.act_max) = op.opcode == opcode::kSquaredDifference ? std::pair<int32_t, int32_t>{-128, 127}
                                                                           : fused_activation_range(op, out);
  fill6(p.shape1, shape6(a.shape));
  fill6(p.shape2, shape6(b.shape));
  fill6(p.out_shape, shape6(out.shape));
  if (op.opcode == opcode::kSquaredDifference) fill_input_multipliers(p, op, a, b, kSquaredDifferenceLeftShift);
  if (op.opcode == opcode::kAdd || op.opcode == opcode::kSub) fill_input_multipliers(p, op, a, b, kAddLeftShift);
  if (op.opcode == opcode::kSub) p.input2_mult = -p.input2_mult;
  const Multiplier output = binary_output_multiplier(op, a, b, out);
  p.output_mult = output.mult;
  p.output_shift = output.shift;
  return p;
}

ta_requant_params requant_params(const graph::Graph& graph, const graph::Op& op) {
  const auto [in, out] = unary(graph, op);
  ta_requant_params p{};
  p.input_zero_point = zero_point_of(*in);
  p.output_zero_point = zero_point_of(*out);
  Multiplier m;
  if (op.opcode == opcode::kQuantize) {
    // Requantize: double(input_scale) / double(output_scale), full int8 range.
    m = requant_multiplier(op, static_cast<double>(scale_of(*in)) / static_cast<double>(scale_of(*out)),
                           "the multiplier");
    p.act_min = -128;
    p.act_max = 127;
  } else {
    // ReluPrepare: the scale ratio in float32; QuantizedReluX clamps like a fused activation.
    m = requant_multiplier(op, static_cast<double>(scale_of(*in) / scale_of(*out)), "the multiplier");
    std::tie(p.act_min, p.act_max) = activation_range(relu_activation(op.opcode), scale_of(*out), p.output_zero_point);
  }
  p.mult = m.mult;
  p.shift = m.shift;
  return p;
}

ta_hard_swish_params hard_swish_params(const graph::Graph& graph, const graph::Op& op) {
  const auto [in, out] = unary(graph, op);
  // HardSwishPrepare, in float32: the input at 1/128 resolution, the "reluish"
  // value at 3/32768, both as int16 fixed-point multipliers.
  const float hires_input_scale = (1.0f / 128.0f) * scale_of(*in);
  const float reluish_scale = 3.0f / 32768.0f;
  const Multiplier output =
      requant_multiplier(op, static_cast<double>(hires_input_scale / scale_of(*out)), "the output multiplier", 0);
  const Multiplier reluish =
      requant_multiplier(op, static_cast<double>(hires_input_scale / reluish_scale), "the reluish multiplier");
  ta_hard_swish_params p{};
  p.input_zero_point = zero_point_of(*in);
  p.output_zero_point = zero_point_of(*out);
  p.reluish_multiplier_fixedpoint_int16 = downscale_to_int16_multiplier(reluish.mult);
  p.reluish_multiplier_exponent = reluish.shift;
  p.output_multiplier_fixedpoint_int16 = downscale_to_int16_multiplier(output.mult);
  p.output_multiplier_exponent = output.shift;
  return p;
}

ta_leaky_relu_params leaky_relu_params(const graph::Graph& graph, const graph::Op& op) {
  const auto [in, out] = unary(graph, op);
  // Both ratios in float32, then widened (LeakyReluPrepare).
  const float alpha = op.options.alpha;
  if (!(alpha >= 0.0f)) unsupported(op, "a negative alpha is not supported");
  const Multiplier identity =
      requant_multiplier(op, static_cast<double>(scale_of(*in) / scale_of(*out)), "the identity multiplier");
  const Multiplier scaled_alpha =
      requant_multiplier(op, static_cast<double>(scale_of(*in) * alpha / scale_of(*out)), "the alpha multiplier");
  ta_leaky_relu_params p{};
  p.input_zero_point = zero_point_of(*in);
  p.output_zero_point = zero_point_of(*out);
  p.identity_mult = identity.mult;
  p.identity_shift = identity.shift;
  p.alpha_mult = scaled_alpha.mult;
  p.alpha_shift = scaled_alpha.shift;
  return p;
}

std::array<int8_t, 256> lut(const graph::Graph& graph, const graph::Op& op) {
  const auto [in, out] = unary(graph, op);
  std::array<int8_t, 256> table{};
  const auto build = op.opcode == opcode::kLogistic ? ta_lut_logistic_s8 : ta_lut_tanh_s8;
  build(scale_of(*in), zero_point_of(*in), scale_of(*out), zero_point_of(*out), table.data());
  return table;
}

AffineQuantization float_conversion(const graph::Graph& graph, const graph::Op& op) {
  const bool quantize = op.opcode == opcode::kQuantize;
  const graph::Tensor& in = activation(op, graph.input(op, 0), quantize ? graph::DType::Float32 : graph::DType::Int8,
                                       "the input");
  const graph::Tensor& out = activation(op, graph.output(op, 0), quantize ? graph::DType::Int8 : graph::DType::Float32,
                                        "the output");
  if (in.element_count != out.element_count) unsupported(op, "the input and output sizes differ");
  const graph::Tensor& quantized = quantize ? out : in;
  if (quantized.quantization.scale.size() > 1) unsupported(op, "per-channel quantization is not supported");
  return {scale_of(quantized), zero_point_of(quantized), in.element_count};
}

int32_t elementwise_count(const graph::Graph& graph, const graph::Op& op) {
  return static_cast<int32_t>(unary(graph, op).second->element_count);
}

}  // namespace tinyarena::op_params
