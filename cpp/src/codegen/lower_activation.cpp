// Elementwise one-input ops (kernels in activations.c), all safe in place:
//   RELU, RELU6, RELU_N1_TO_1, QUANTIZE int8->int8 -> ta_requantize_s8
//   LOGISTIC, TANH -> ta_lut_s8 with the table TFLite builds (computed here, on the host)
//   HARD_SWISH -> ta_hard_swish_s8, LEAKY_RELU -> ta_leaky_relu_s8
//   QUANTIZE float32->int8 -> ta_quantize_f32_s8, DEQUANTIZE -> ta_dequantize_s8_f32
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::codegen {
namespace {

namespace op_code = op_params::opcode;

constexpr const char* kSource = "activations.c";

// `kernel(first, in, out, n);` over the op's elements, or one call per pixel
// when the output is a channel slice of a zero-copy concatenation.
std::string elementwise_call(const LoweringContext& context, KernelCall& call, const graph::Op& op,
                             const char* kernel, const std::string& first) {
  const int32_t n = op_params::elementwise_count(context.graph(), op);
  const std::string in = operand(context, call, op, 0), out = context.address(op.outputs[0]);
  const int32_t stride = context.pix_stride(op.outputs[0]);
  if (stride == 0) {  // dense: a tiled schedule may call the kernel on sub-ranges
    call.elementwise_kernel = kernel;
    call.elementwise_first = first;
    return call_text(kernel, {first, in, out, std::to_string(n)});
  }
  const std::string channels = std::to_string(context.graph().tensors[op.outputs[0]].shape.back());
  return "for (int32_t px = 0; px < " + std::to_string(n) + " / " + channels + "; ++px)\n  " +
         call_text(kernel, {first, in + " + px * " + channels, out + " + px * " + std::to_string(stride), channels});
}

KernelCall lower_requantize(const LoweringContext& context, const graph::Op& op) {
  const ta_requant_params p = op_params::requant_params(context.graph(), op);
  KernelCall call = start_call(context, op, kSource);
  call.params_type = "ta_requant_params";
  call.params = Fields()
                    .add("input_zero_point", p.input_zero_point).add("output_zero_point", p.output_zero_point)
                    .add("mult", p.mult).add("shift", p.shift)
                    .add("act_min", p.act_min).add("act_max", p.act_max)
                    .take();
  call.call = elementwise_call(context, call, op, "ta_requantize_s8", params_ref(op));
  return call;
}

KernelCall lower_lut(const LoweringContext& context, const graph::Op& op) {
  const std::array<int8_t, 256> table = op_params::lut(context.graph(), op);
  KernelCall call = start_call(context, op, kSource);
  call.arrays.push_back(const_array(op, "lut", ElementType::Int8, table.data(), table.size()));
  call.call = elementwise_call(context, call, op, "ta_lut_s8", call.arrays.back().name);
  return call;
}

KernelCall lower_hard_swish(const LoweringContext& context, const graph::Op& op) {
  const ta_hard_swish_params p = op_params::hard_swish_params(context.graph(), op);
  KernelCall call = start_call(context, op, kSource);
  call.params_type = "ta_hard_swish_params";
  call.params = Fields()
                    .add("input_zero_point", p.input_zero_point).add("output_zero_point", p.output_zero_point)
                    .add("reluish_multiplier_fixedpoint_int16", p.reluish_multiplier_fixedpoint_int16)
                    .add("reluish_multiplier_exponent", p.reluish_multiplier_exponent)
                    .add("output_multiplier_fixedpoint_int16", p.output_multiplier_fixedpoint_int16)
                    .add("output_multiplier_exponent", p.output_multiplier_exponent)
                    .take();
  call.call = elementwise_call(context, call, op, "ta_hard_swish_s8", params_ref(op));
  return call;
}

KernelCall lower_leaky_relu(const LoweringContext& context, const graph::Op& op) {
  const ta_leaky_relu_params p = op_params::leaky_relu_params(context.graph(), op);
  KernelCall call = start_call(context, op, kSource);
  call.params_type = "ta_leaky_relu_params";
  call.params = Fields()
                    .add("input_zero_point", p.input_zero_point).add("output_zero_point", p.output_zero_point)
                    .add("identity_mult", p.identity_mult).add("identity_shift", p.identity_shift)
                    .add("alpha_mult", p.alpha_mult).add("alpha_shift", p.alpha_shift)
                    .take();
  call.call = elementwise_call(context, call, op, "ta_leaky_relu_s8", params_ref(op));
  return call;
}

// float32 <-> int8 with the int8 side's scale and zero point.
KernelCall lower_float_conversion(const LoweringContext& context, const graph::Op& op, const char* kernel) {
  const op_params::AffineQuantization q = op_params::float_conversion(context.graph(), op);
  KernelCall call = start_call(context, op, kSource);
  call.call = call_text(kernel, {context.address(op.inputs[0]), context.address(op.outputs[0]),
                                 std::to_string(q.elements), float_literal(q.scale), std::to_string(q.zero_point)});
  return call;
}

KernelCall lower_quantize(const LoweringContext& context, const graph::Op& op) {
  const graph::Tensor* in = context.graph().input(op, 0);
  if (in && in->dtype == graph::DType::Float32) return lower_float_conversion(context, op, "ta_quantize_f32_s8");
  return lower_requantize(context, op);
}

KernelCall lower_dequantize(const LoweringContext& context, const graph::Op& op) {
  return lower_float_conversion(context, op, "ta_dequantize_s8_f32");
}

}  // namespace

std::vector<OpLowering> activation_lowerings() {
  return {{op_code::kRelu, "RELU", lower_requantize},
          {op_code::kRelu6, "RELU6", lower_requantize},
          {op_code::kReluN1To1, "RELU_N1_TO_1", lower_requantize},
          {op_code::kLogistic, "LOGISTIC", lower_lut},
          {op_code::kTanh, "TANH", lower_lut},
          {op_code::kHardSwish, "HARD_SWISH", lower_hard_swish},
          {op_code::kLeakyRelu, "LEAKY_RELU", lower_leaky_relu},
          {op_code::kQuantize, "QUANTIZE", lower_quantize},
          {op_code::kDequantize, "DEQUANTIZE", lower_dequantize}};
}

}  // namespace tinyarena::codegen
