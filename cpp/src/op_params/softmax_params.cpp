// SOFTMAX / LOG_SOFTMAX params (TFLite's activations.cc SoftmaxPrepare /
// LogSoftmaxPrepare for int8: gemmlowp fixed-point exp over 5 integer bits).
#include <algorithm>
#include <cmath>

#include "tinyarena/op_params/op_checks.h"
#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena/op_params/quantization.h"

namespace tinyarena::op_params {
namespace {

using namespace detail;

constexpr int kScaledDiffIntegerBits = 5;

// PreprocessSoftmaxScaling, in double.
Multiplier softmax_scaling(const graph::Op& op, double beta, double input_scale) {
  const double real = std::min(beta * input_scale * static_cast<double>(1 << (31 - kScaledDiffIntegerBits)),
                               static_cast<double>((int64_t{1} << 31) - 1));
  return requant_multiplier(op, real, "beta times the input scale", 31);
}

// CalculateInputRadius, floored.
int32_t input_radius(int32_t input_left_shift) {
  const double radius = 1.0 * ((1 << kScaledDiffIntegerBits) - 1) *
                        static_cast<double>(int64_t{1} << (31 - kScaledDiffIntegerBits)) /
                        static_cast<double>(int64_t{1} << input_left_shift);
  return static_cast<int32_t>(std::floor(radius));
}

}  // namespace

ta_softmax_params softmax_params(const graph::Graph& graph, const graph::Op& op) {
  const bool log = op.opcode == opcode::kLogSoftmax;
  const graph::Tensor& in = int8_input(graph, op, 0);
  const graph::Tensor& out = int8_output(graph, op, 0);
  if (in.shape.empty() || in.shape.back() < 1 || out.element_count != in.element_count)
    unsupported(op, "the input and output must have the same non-empty shape");
  // The reference int8 kernels write a fixed output quantization: 1/256 (softmax)
  // or 16/256 (log-softmax), zero point -128 (softmax) or 127 (log-softmax).
  const float out_scale = log ? 16.0f / 256.0f : 1.0f / 256.0f;
  if (std::fabs(scale_of(out) - out_scale) > 0.001f * out_scale || zero_point_of(out) != (log ? 127 : -128))
    unsupported(op, "the output quantization must be the reference kernel's fixed one");
  // LOG_SOFTMAX has no beta; SOFTMAX's is a float32 option widened to double.
  const double beta = log ? 1.0 : static_cast<double>(op.options.beta);
  const Multiplier scaling = softmax_scaling(op, beta, static_cast<double>(scale_of(in)));
  if (scaling.shift < 0) unsupported(op, "the input scale is too small for the fixed-point exp");
  ta_softmax_params p{};
  p.depth = in.shape.back();
  p.outer_size = static_cast<int32_t>(in.element_count / p.depth);
  p.input_multiplier = scaling.mult;
  p.input_left_shift = scaling.shift;
  p.diff_min = -input_radius(scaling.shift);
  if (log) {
    // reverse_scaling_divisor = QuantizeMultiplier((1 << (31 - shift)) / mult), shift negated.
    const Multiplier reverse =
        quantize_multiplier(static_cast<double>(int64_t{1} << (31 - scaling.shift)) / scaling.mult);
    p.reverse_scaling_divisor = reverse.mult;
    p.reverse_scaling_right_shift = -reverse.shift;
  }
  return p;
}

}  // namespace tinyarena::op_params
