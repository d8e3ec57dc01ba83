// SOFTMAX and LOG_SOFTMAX -> ta_softmax_s8 / ta_log_softmax_s8 (TFLite's
// reference int8 softmax: gemmlowp fixed-point exp over 5 integer bits).
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::codegen {
namespace {

KernelCall lower(const LoweringContext& context, const graph::Op& op, const char* kernel) {
  const ta_softmax_params p = op_params::softmax_params(context.graph(), op);
  KernelCall call = start_call(context, op, "softmax.c");
  call.params_type = "ta_softmax_params";
  call.params = Fields()
                    .add("outer_size", p.outer_size)
                    .add("depth", p.depth)
                    .add("input_multiplier", p.input_multiplier)
                    .add("input_left_shift", p.input_left_shift)
                    .add("diff_min", p.diff_min)
                    .add("reverse_scaling_divisor", p.reverse_scaling_divisor)
                    .add("reverse_scaling_right_shift", p.reverse_scaling_right_shift)
                    .take();
  call.call = call_text(kernel, {params_ref(op), operand(context, call, op, 0), context.address(op.outputs[0])});
  return call;
}

KernelCall lower_softmax(const LoweringContext& context, const graph::Op& op) {
  return lower(context, op, "ta_softmax_s8");
}

KernelCall lower_log_softmax(const LoweringContext& context, const graph::Op& op) {
  return lower(context, op, "ta_log_softmax_s8");
}

}  // namespace

std::vector<OpLowering> softmax_lowerings() {
  return {{op_params::opcode::kSoftmax, "SOFTMAX", lower_softmax},
          {op_params::opcode::kLogSoftmax, "LOG_SOFTMAX", lower_log_softmax}};
}

}  // namespace tinyarena::codegen
