// ADD and SUB -> ta_add_s8 (SUB with input2_mult negated), MUL -> ta_mul_s8,
// SQUARED_DIFFERENCE -> ta_squared_difference_s8 (TFLite's broadcasting int8 kernels);
// float32 ADD / SUB / MUL -> ta_add_f32 / ta_sub_f32 / ta_mul_f32.
// The output may share an input's buffer (planned in place): the kernels read
// each element before writing it.
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::codegen {
namespace {

// `kernel(&params, in1, in2, out);`
std::string binary_call(const LoweringContext& context, KernelCall& call, const graph::Op& op, const char* kernel) {
  return call_text(kernel, {params_ref(op), operand(context, call, op, 0), operand(context, call, op, 1),
                            context.address(op.outputs[0])});
}

KernelCall lower_float_binary(const LoweringContext& context, const graph::Op& op) {
  const ta_binary_f32_params p = op_params::binary_f32_params(context.graph(), op);
  KernelCall call = start_call(context, op, "elementwise.c");
  call.params_type = "ta_binary_f32_params";
  call.params = Fields()
                    .add("act_min", float_literal(p.act_min)).add("act_max", float_literal(p.act_max))
                    .add_list("shape1", p.shape1, TA_MAX_DIMS)
                    .add_list("shape2", p.shape2, TA_MAX_DIMS)
                    .add_list("out_shape", p.out_shape, TA_MAX_DIMS)
                    .take();
  const char* kernel = op.opcode == op_params::opcode::kAdd   ? "ta_add_f32"
                       : op.opcode == op_params::opcode::kSub ? "ta_sub_f32"
                                                            : "ta_mul_f32";
  call.call = binary_call(context, call, op, kernel);
  return call;
}

KernelCall lower_binary(const LoweringContext& context, const graph::Op& op, const char* kernel) {
  if (op_params::is_float_binary(context.graph(), op)) return lower_float_binary(context, op);
  const ta_binary_params p = op_params::binary_params(context.graph(), op);
  KernelCall call = start_call(context, op, "elementwise.c");
  call.params_type = "ta_binary_params";
  call.params = Fields()
                    .add("input1_offset", p.input1_offset).add("input2_offset", p.input2_offset)
                    .add("output_offset", p.output_offset).add("left_shift", p.left_shift)
                    .add("input1_mult", p.input1_mult).add("input1_shift", p.input1_shift)
                    .add("input2_mult", p.input2_mult).add("input2_shift", p.input2_shift)
                    .add("output_mult", p.output_mult).add("output_shift", p.output_shift)
                    .add("act_min", p.act_min).add("act_max", p.act_max)
                    .add_list("shape1", p.shape1, TA_MAX_DIMS)
                    .add_list("shape2", p.shape2, TA_MAX_DIMS)
                    .add_list("out_shape", p.out_shape, TA_MAX_DIMS)
                    .take();
  call.call = binary_call(context, call, op, kernel);
  return call;
}

KernelCall lower_add(const LoweringContext& context, const graph::Op& op) {
  return lower_binary(context, op, "ta_add_s8");
}

KernelCall lower_squared_difference(const LoweringContext& context, const graph::Op& op) {
  return lower_binary(context, op, "ta_squared_difference_s8");
}

KernelCall lower_mul(const LoweringContext& context, const graph::Op& op) {
  return lower_binary(context, op, "ta_mul_s8");
}

}  // namespace

std::vector<OpLowering> binary_lowerings() {
  return {{op_params::opcode::kAdd, "ADD", lower_add},
          {op_params::opcode::kSub, "SUB", lower_add},
          {op_params::opcode::kMul, "MUL", lower_mul},
          {op_params::opcode::kSquaredDifference, "SQUARED_DIFFERENCE", lower_squared_difference}};
}

}  // namespace tinyarena::codegen
