// SOFTMAX and LOG_SOFTMAX -> ta_softmax_s8 / ta_log_softmax_s8 (TFLite's
// reference int8 softmax: gemmlowp fixed-point exp over 5 integer bits).
#include <algorithm>
#include <cmath>

#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/codegen/quantization.h"
#include "tinyarena/common/errors.h"

namespace tinyarena::codegen {
namespace {

constexpr int32_t kSoftmax = 25, kLogSoftmax = 50;
constexpr int kScaledDiffIntegerBits = 5;

// PreprocessSoftmaxScaling, in double.
Multiplier softmax_scaling(double beta, double input_scale) {
  const double real = std::min(beta * input_scale * static_cast<double>(1 << (31 - kScaledDiffIntegerBits)),
                               static_cast<double>((int64_t{1} << 31) - 1));
  return quantize_multiplier(real);
}

// CalculateInputRadius, floored.
int32_t input_radius(int32_t input_left_shift) {
  const double radius = 1.0 * ((1 << kScaledDiffIntegerBits) - 1) *
                        static_cast<double>(int64_t{1} << (31 - kScaledDiffIntegerBits)) /
                        static_cast<double>(int64_t{1} << input_left_shift);
  return static_cast<int32_t>(std::floor(radius));
}

KernelCall lower(const LoweringContext& context, const graph::Op& op, bool log) {
  const graph::Tensor* in = context.graph().input(op, 0);
  if (!in || in->shape.empty())
    throw UnsupportedError("op " + std::to_string(op.index) + " (" + op.type + ") needs a shaped input");
  const double beta = log ? 1.0 : static_cast<double>(op.options.beta);
  const Multiplier scaling = softmax_scaling(beta, static_cast<double>(scale_of(*in)));
  Multiplier reverse;
  if (log) reverse = quantize_multiplier(static_cast<double>(int64_t{1} << (31 - scaling.shift)) / scaling.mult);
  const int32_t depth = in->shape.back();
  KernelCall call = start_call(context, op, "softmax.c");
  call.params_type = "ta_softmax_params";
  call.params = Fields()
                    .add("outer_size", depth ? in->element_count / depth : 0)
                    .add("depth", depth)
                    .add("input_multiplier", scaling.mult)
                    .add("input_left_shift", scaling.shift)
                    .add("diff_min", -input_radius(scaling.shift))
                    .add("reverse_scaling_divisor", reverse.mult)
                    .add("reverse_scaling_right_shift", -reverse.shift)
                    .take();
  call.call = std::string(log ? "ta_log_softmax_s8" : "ta_softmax_s8") + "(&op" + std::to_string(op.index) +
              "_params, " + context.address(in->index) + ", " + context.address(op.outputs[0]) + ");";
  return call;
}

KernelCall lower_softmax(const LoweringContext& context, const graph::Op& op) { return lower(context, op, false); }
KernelCall lower_log_softmax(const LoweringContext& context, const graph::Op& op) { return lower(context, op, true); }

}  // namespace

std::vector<OpLowering> softmax_lowerings() {
  return {{kSoftmax, "SOFTMAX", lower_softmax}, {kLogSoftmax, "LOG_SOFTMAX", lower_log_softmax}};
}

}  // namespace tinyarena::codegen
