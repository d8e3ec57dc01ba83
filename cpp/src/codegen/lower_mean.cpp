// MEAN -> ta_mean_s8 (TFLite's QuantizedMeanOrSum over any set of axes).
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::codegen {
namespace {

KernelCall lower_mean(const LoweringContext& context, const graph::Op& op) {
  const ta_mean_params p = op_params::mean_params(context.graph(), op);
  KernelCall call = start_call(context, op, "mean.c");
  call.params_type = "ta_mean_params";
  call.params = Fields()
                    .add("ndims", p.ndims).add_list("in_shape", p.in_shape, TA_MAX_DIMS)
                    .add("reduce_mask", p.reduce_mask)
                    .add("input_zero_point", p.input_zero_point).add("output_zero_point", p.output_zero_point)
                    .add("mult", p.mult).add("shift", p.shift)
                    .take();
  call.call = call_text("ta_mean_s8", {params_ref(op), operand(context, call, op, 0), context.address(op.outputs[0])});
  return call;
}

}  // namespace

std::vector<OpLowering> mean_lowerings() { return {{op_params::opcode::kMean, "MEAN", lower_mean}}; }

}  // namespace tinyarena::codegen
