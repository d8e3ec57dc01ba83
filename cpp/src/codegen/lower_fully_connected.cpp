// FULLY_CONNECTED -> ta_fully_connected_s8 over every row of the input.
// Requantization follows TFLite's current reference kernel, which rescales
// the int32 accumulator in double: the `out_scale_f64` doubles are emitted, or
// where op_params proved it equal the int32 `rescale_mult` / `rescale_shift`
// (the integer out_mult/out_shift of TFLite Micro stay NULL). Weights in the plan's
// layout: kPackedInt8 (the default) the int8 weights, which the SIMD builds' loops widen
// (simd_int8_weights; with a weights offset Helium reads packed int16 instead); kPackedInt16
// packed int16 for the SIMD builds; kPlain int8 for every build, the portable loop.
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::codegen {
namespace {

// The int8 weights, read by the portable build and by the SIMD builds' int8 loops
// (simd_int8_weights: the DSP build's SXTB16 loop, Helium's VMLADAVA.S16 one); with a weights
// offset (asymmetric weights, which the int8 loops do not take) Helium reads `packed`
// (TA_PACKED_S16, the offset folded in) instead, each array compiled in only where it is read.
void add_int8_simd_weights(KernelCall& call, Fields& fields, const graph::Op& op, const graph::Tensor& weights,
                           const uint8_t* data, int32_t weights_offset, const std::vector<int16_t>& packed) {
  const char* const int8_builds = weights_offset == 0 ? "" : kWhenNotHelium;
  const char* const int8_loops = weights_offset == 0 ? kWhenSimd : kWhenDspNotHelium;
  call.arrays.push_back(const_array(op, "weights", ElementType::Int8, data, static_cast<size_t>(weights.element_count)));
  call.arrays.back().condition = int8_builds;
  if (weights_offset == 0)
    fields.add("weights", call.arrays.back().name);
  else
    fields.add_when(int8_builds, "weights", call.arrays.back().name);
  fields.add_when(int8_loops, "simd_int8_weights", "1");
  if (weights_offset == 0) return;
  call.arrays.push_back(const_array(op, "packed_weights", ElementType::Int16, packed.data(), packed.size()));
  call.arrays.back().condition = kWhenHelium;
  fields.add_when(kWhenHelium, "packed_weights", call.arrays.back().name);
}

KernelCall lower_fully_connected(const LoweringContext& context, const graph::Op& op) {
  const op_params::FullyConnectedKernel k = op_params::fully_connected_kernel(context.graph(), op);
  const ta_fc_params& p = k.params;
  const graph::Tensor& weights = *context.graph().input(op, 1);
  const uint8_t* data = context.graph().constant_data(weights);
  KernelCall call = start_call(context, op, "fully_connected.c");
  call.params_type = "ta_fc_params";
  Fields fields;
  fields.add("batches", p.batches).add("in_depth", p.in_depth).add("out_depth", p.out_depth)
      .add("input_offset", p.input_offset).add("weights_offset", p.weights_offset)
      .add("output_offset", p.output_offset).add("act_min", p.act_min).add("act_max", p.act_max)
      .add("per_channel", p.per_channel);
  // The packed int16 layout folds the weights' offset into the int16 values.
  const op_params::WeightLayout layout = context.weight_layout(op);
  const auto packed = [&] {
    return op_params::packed_gemm_weights(reinterpret_cast<const int8_t*>(data), p.out_depth, p.in_depth,
                                          p.weights_offset);
  };
  if (layout == op_params::WeightLayout::kPlain) {
    add_plain_weights(call, fields, op, weights, data);
  } else if (layout == op_params::WeightLayout::kPackedInt8) {
    add_int8_simd_weights(call, fields, op, weights, data, p.weights_offset,
                          p.weights_offset == 0 ? std::vector<int16_t>{} : packed());
  } else {
    add_weights(call, fields, op, weights, data, packed());
  }
  add_int32_array(call, fields, op, "bias", k.bias);
  if (k.rescale.empty()) {
    call.arrays.push_back(const_array(op, "out_scale_f64", ElementType::Float64, k.out_scale_f64.data(),
                                      k.out_scale_f64.size()));
    fields.add("out_scale_f64", call.arrays.back().name);
  } else {
    std::vector<int32_t> mult, shift;
    for (const op_params::IntegerRescale& rescale : k.rescale) mult.push_back(rescale.mult), shift.push_back(rescale.shift);
    add_int32_array(call, fields, op, "rescale_mult", mult);
    add_int32_array(call, fields, op, "rescale_shift", shift);
  }
  call.params = fields.take();
  const std::string scratch =
      scratch_for(context, op, static_cast<int64_t>(ta_fully_connected_s8_scratch_bytes(&p)));
  call.call = call_text("ta_fully_connected_s8",
                        {params_ref(op), operand(context, call, op, 0), context.address(op.outputs[0]), scratch});
  return call;
}

}  // namespace

std::vector<OpLowering> fully_connected_lowerings() {
  return {{op_params::opcode::kFullyConnected, "FULLY_CONNECTED", lower_fully_connected}};
}

}  // namespace tinyarena::codegen
