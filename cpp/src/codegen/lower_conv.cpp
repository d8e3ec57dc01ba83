// CONV_2D -> ta_conv_s8 (its per-channel records precomputed into flash; the SIMD build's weights
// in the plan's op_params::WeightLayout -- int8 TA_PACKED_S8 by default -- doubled where
// ta_conv_s8_can_double allows: the int16 weights, or the int8 layout's column; a Helium build's
// int8 layout: TA_PACKED_MVE weights and its own records; kPlain: the int8 weights and the
// portable loop in every build, no records) and
// DEPTHWISE_CONV_2D -> ta_depthwise_conv_s8, one call per image, or
// ta_depthwise_conv_s8_inplace when the plan put the output over the input
// (its scratch is the plane the kernel copies each channel to).
#include <type_traits>

#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/common/errors.h"
#include "tinyarena/op_params/flash.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::codegen {
namespace {

namespace op_code = op_params::opcode;

// The fields conv and depthwise share (the same names in both structs).
template <typename Params>
Fields window_fields(const Params& p) {
  Fields f;
  add_window_fields(f, p)
      .add("in_c", p.in_c).add("kernel_h", p.kernel_h).add("kernel_w", p.kernel_w)
      .add("dilation_h", p.dilation_h).add("dilation_w", p.dilation_w)
      .add("input_offset", p.input_offset).add("output_offset", p.output_offset)
      .add("act_min", p.act_min).add("act_max", p.act_max);
  return f;
}

// Weights, bias and per-channel requantization arrays. Weights in `layout`: kPlain int8 for every
// build; kPackedInt16 int8 for the portable build and `packed` for the SIMD ones; kPackedInt8: a
// depthwise layer's int8 for every build (simd_int8_weights: the DSP path widens them per
// channel), a conv layer's int8 for the portable build only (the caller adds the SIMD builds' arrays). A conv layer in a packed
// layout has bias, multipliers and shifts in the portable build only: its SIMD builds read the
// same values from the per-channel records (12 B per channel less flash).
template <typename Kernel>
void add_constants(const LoweringContext& context, KernelCall& call, Fields& fields, const graph::Op& op,
                   const Kernel& k, op_params::WeightLayout layout, const std::vector<int16_t>& packed) {
  const graph::Graph& g = context.graph();
  const graph::Tensor& weights = *g.input(op, 1);
  if (layout == op_params::WeightLayout::kPlain) {
    add_plain_weights(call, fields, op, weights, g.constant_data(weights));
  } else if (layout == op_params::WeightLayout::kPackedInt8 && std::is_same_v<Kernel, op_params::DepthwiseKernel>) {
    add_plain_weights(call, fields, op, weights, g.constant_data(weights));  // every build reads them
    fields.add("simd_int8_weights", 1);
  } else if (layout == op_params::WeightLayout::kPackedInt8) {
    call.arrays.push_back(const_array(op, "weights", ElementType::Int8, g.constant_data(weights),
                                      static_cast<size_t>(weights.element_count)));
    call.arrays.back().condition = kWhenPortable;
    fields.add_when(kWhenPortable, "weights", call.arrays.back().name);
  } else {
    add_weights(call, fields, op, weights, g.constant_data(weights), packed,
                std::is_same_v<Kernel, op_params::DepthwiseKernel>);  // Helium's depthwise reads int8
  }
  // a conv layer in a packed layout: the SIMD builds read its records alone (add_rq_records)
  const char* condition =
      std::is_same_v<Kernel, op_params::ConvKernel> && layout != op_params::WeightLayout::kPlain ? kWhenPortable
                                                                                                : nullptr;
  add_int32_array(call, fields, op, "bias", k.bias, condition);
  add_int32_array(call, fields, op, "out_mult", k.requant.mult, condition);
  add_int32_array(call, fields, op, "out_shift", k.requant.shift, condition);
}

// The SIMD path's per-channel records as a flash array (the portable path does not read them),
// in the builds `condition` selects, under the array name `name`.
void add_rq_records(KernelCall& call, Fields& fields, const graph::Op& op, const std::vector<int32_t>& records,
                    const char* condition, const char* name = "rq_records") {
  call.arrays.push_back(int32_array(op, name, records));
  call.arrays.back().condition = condition;
  fields.add_when(condition, "rq_records", call.arrays.back().name);
}

// An int8 conv layer's SIMD constants: the DSP build's TA_PACKED_S8 weights and ta_rq4/ta_rqd
// records, the Helium build's TA_PACKED_MVE weights and records (input offset folded in).
void add_int8_simd_constants(KernelCall& call, Fields& fields, const graph::Op& op, const op_params::ConvKernel& k,
                             const int8_t* weight_values) {
  add_rq_records(call, fields, op, op_params::conv_rq_records(k, weight_values), kWhenDspNotHelium);
  if (k.params.packed_doubled) fields.add_when(kWhenDspNotHelium, "packed_doubled", "1");
  const std::vector<int8_t> packed = op_params::packed_conv_weights_s8(k, weight_values);
  call.arrays.push_back(const_array(op, "packed_s8_weights", ElementType::Int8, packed.data(), packed.size()));
  call.arrays.back().condition = kWhenDspNotHelium;
  fields.add_when(kWhenDspNotHelium, "packed_s8_weights", call.arrays.back().name);
  add_rq_records(call, fields, op, op_params::conv_mve_records(k, weight_values), kWhenHelium, "mve_records");
  const std::vector<int8_t> mve = op_params::packed_conv_weights_mve(k, weight_values);
  call.arrays.push_back(const_array(op, "mve_weights", ElementType::Int8, mve.data(), mve.size()));
  call.arrays.back().condition = kWhenHelium;
  fields.add_when(kWhenHelium, "packed_s8_weights", call.arrays.back().name);
}

KernelCall lower_conv(const LoweringContext& context, const graph::Op& op) {
  const op_params::ConvKernel k = op_params::conv_kernel(context.graph(), op);
  const ta_conv_params& p = k.params;
  const graph::Tensor& weights = *context.graph().input(op, 1);
  KernelCall call = start_call(context, op, "conv.c");
  call.params_type = "ta_conv_params";
  Fields fields = window_fields(p);
  fields.add("out_c", p.out_c);
  add_output_stride(context, fields, op, k.images);
  const auto* weight_values = reinterpret_cast<const int8_t*>(context.graph().constant_data(weights));
  const op_params::WeightLayout layout = context.weight_layout(op);
  add_constants(context, call, fields, op, k, layout,
                layout == op_params::WeightLayout::kPackedInt16 ? op_params::packed_conv_weights(k, weight_values)
                                                                : std::vector<int16_t>{});
  if (layout == op_params::WeightLayout::kPackedInt8) {
    add_int8_simd_constants(call, fields, op, k, weight_values);
  } else if (layout == op_params::WeightLayout::kPackedInt16) {  // kPlain: the portable loop, no records
    add_rq_records(call, fields, op, op_params::conv_rq_records(k, weight_values), kWhenSimd);
    if (p.packed_doubled) fields.add_when(kWhenSimd, "packed_doubled", "1");
  }
  call.params = fields.take();
  call.variants = op_params::kernel_variants(context.graph(), op, layout);
  const std::string scratch = scratch_for(context, op, op_params::conv_scratch_bytes(p));
  call.window_kernel = layout == op_params::WeightLayout::kPackedInt16 ? "ta_conv_s8_packed16" : "ta_conv_s8";
  call.call = per_image_call(op, call.window_kernel, k.images, operand(context, call, op, 0), int64_t{p.in_h} * p.in_w * p.in_c,
                             context.address(op.outputs[0]), int64_t{p.out_h} * p.out_w * p.out_c,
                             {"0", std::to_string(p.out_h), scratch});
  return call;
}

// The in-place kernel's conditions (TinyEngine's trick): one image, multiplier 1,
// and an output no larger than the input (the planner only merges such ops).
void check_in_place(const graph::Op& op, const op_params::DepthwiseKernel& k) {
  const ta_dwconv_params& p = k.params;
  if (k.images != 1 || p.depth_multiplier != 1 || int64_t{p.out_h} * p.out_w > int64_t{p.in_h} * p.in_w)
    throw UnsupportedError("op " + std::to_string(op.index) + " (" + op.type +
                           ") cannot run in place: it needs one image, depth multiplier 1 and no larger output");
}

KernelCall lower_depthwise(const LoweringContext& context, const graph::Op& op) {
  const op_params::DepthwiseKernel k = op_params::depthwise_kernel(context.graph(), op);
  const ta_dwconv_params& p = k.params;
  const graph::Tensor& weights = *context.graph().input(op, 1);
  const int32_t out_c = p.in_c * p.depth_multiplier;
  KernelCall call = start_call(context, op, "depthwise.c");
  call.params_type = "ta_dwconv_params";
  Fields fields = window_fields(p);
  fields.add("depth_multiplier", p.depth_multiplier);
  add_output_stride(context, fields, op, k.images);
  const op_params::WeightLayout layout = context.weight_layout(op);
  add_constants(context, call, fields, op, k, layout,
                layout != op_params::WeightLayout::kPackedInt16 ? std::vector<int16_t>{} : op_params::packed_depthwise_weights(
                    reinterpret_cast<const int8_t*>(context.graph().constant_data(weights)), out_c, p.kernel_h,
                    p.kernel_w));
  call.params = fields.take();
  call.variants = op_params::kernel_variants(context.graph(), op, layout);
  if (context.in_place(op)) {
    check_in_place(op, k);
    const std::string scratch =
        scratch_for(context, op, static_cast<int64_t>(ta_depthwise_conv_s8_inplace_scratch_bytes(&p)));
    call.call = call_text("ta_depthwise_conv_s8_inplace", {params_ref(op), context.address(op.inputs[0]), scratch});
    return call;
  }
  const std::string scratch = scratch_for(context, op, static_cast<int64_t>(ta_depthwise_conv_s8_scratch_bytes(&p)));
  call.call = per_image_call(op, "ta_depthwise_conv_s8", k.images, operand(context, call, op, 0),
                             int64_t{p.in_h} * p.in_w * p.in_c, context.address(op.outputs[0]),
                             int64_t{p.out_h} * p.out_w * out_c, {"0", std::to_string(p.out_h), scratch});
  return call;
}

}  // namespace

std::vector<OpLowering> conv_lowerings() {
  return {{op_code::kConv2D, "CONV_2D", lower_conv}, {op_code::kDepthwiseConv2D, "DEPTHWISE_CONV_2D", lower_depthwise}};
}

}  // namespace tinyarena::codegen
