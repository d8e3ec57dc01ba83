// Data movement (values copied unchanged; kernels in data_movement.c):
// PAD / PADV2, TRANSPOSE, STRIDED_SLICE, TILE, RESIZE_NEAREST_NEIGHBOR, GATHER, and
// CONCATENATION / PACK -> ta_concat_s8 and SPLIT / SPLIT_V / UNPACK ->
// ta_split_s8, whose several tensors are passed as a local array of arena
// addresses.
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::codegen {
namespace {

namespace op_code = op_params::opcode;

constexpr const char* kSource = "data_movement.c";

// A call `kernel(&params, input 0, output 0);` with a params struct of `params_type`.
KernelCall one_to_one(const LoweringContext& context, const graph::Op& op, const char* params_type,
                      const char* kernel, Fields& fields) {
  KernelCall call = start_call(context, op, kSource);
  call.params_type = params_type;
  call.params = fields.take();
  call.call = call_text(kernel, {params_ref(op), operand(context, call, op, 0), context.address(op.outputs[0])});
  return call;
}

KernelCall lower_pad(const LoweringContext& context, const graph::Op& op) {
  const ta_pad_params p = op_params::pad_params(context.graph(), op);
  return one_to_one(context, op, "ta_pad_params", "ta_pad_s8",
                    Fields()
                        .add("ndims", p.ndims).add_list("in_shape", p.in_shape, TA_MAX_DIMS)
                        .add_list("before", p.before, TA_MAX_DIMS).add_list("after", p.after, TA_MAX_DIMS)
                        .add("pad_value", p.pad_value));
}

KernelCall lower_transpose(const LoweringContext& context, const graph::Op& op) {
  const ta_transpose_params p = op_params::transpose_params(context.graph(), op);
  return one_to_one(context, op, "ta_transpose_params", "ta_transpose_s8",
                    Fields()
                        .add("ndims", p.ndims).add_list("in_shape", p.in_shape, TA_MAX_DIMS)
                        .add_list("perm", p.perm, TA_MAX_DIMS));
}

KernelCall lower_strided_slice(const LoweringContext& context, const graph::Op& op) {
  const ta_slice_params p = op_params::strided_slice_params(context.graph(), op);
  return one_to_one(context, op, "ta_slice_params", "ta_strided_slice_s8",
                    Fields()
                        .add("ndims", p.ndims).add_list("in_shape", p.in_shape, TA_MAX_DIMS)
                        .add_list("start", p.start, TA_MAX_DIMS).add_list("step", p.step, TA_MAX_DIMS)
                        .add_list("count", p.count, TA_MAX_DIMS));
}

KernelCall lower_tile(const LoweringContext& context, const graph::Op& op) {
  const ta_tile_params p = op_params::tile_params(context.graph(), op);
  return one_to_one(context, op, "ta_tile_params", "ta_tile_s8",
                    Fields()
                        .add("ndims", p.ndims).add_list("in_shape", p.in_shape, TA_MAX_DIMS)
                        .add_list("multiples", p.multiples, TA_MAX_DIMS));
}

KernelCall lower_resize_nearest(const LoweringContext& context, const graph::Op& op) {
  const ta_resize_params p = op_params::resize_nearest_params(context.graph(), op);
  return one_to_one(context, op, "ta_resize_params", "ta_resize_nearest_s8",
                    Fields()
                        .add("batches", p.batches).add("in_h", p.in_h).add("in_w", p.in_w)
                        .add("channels", p.channels).add("out_h", p.out_h).add("out_w", p.out_w)
                        .add("align_corners", p.align_corners).add("half_pixel_centers", p.half_pixel_centers));
}

// Params of CONCATENATION / SPLIT: the count, outer size and copy sizes.
void copy_fields(KernelCall& call, const graph::Op& op, const char* params_type, const char* count_field,
                 const op_params::CopyPlan& plan) {
  call.params_type = params_type;
  call.arrays.push_back(int32_array(op, "copy_sizes", plan.copy_sizes));
  call.params = Fields()
                    .add(count_field, static_cast<int64_t>(plan.copy_sizes.size()))
                    .add("outer_size", plan.outer_size)
                    .add("copy_sizes", call.arrays.back().name)
                    .take();
}

// `{a, b, ...}`
std::string braced(const std::vector<std::string>& items) {
  std::string text = "{";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i];
  return text + "}";
}

KernelCall lower_concatenation(const LoweringContext& context, const graph::Op& op) {
  const op_params::CopyPlan plan = op_params::concat_plan(context.graph(), op);
  KernelCall call = start_call(context, op, kSource);
  copy_fields(call, op, "ta_concat_params", "num_inputs", plan);
  std::vector<std::string> inputs;
  for (size_t i = 0; i < op.inputs.size(); ++i) inputs.push_back(operand(context, call, op, i));
  call.call = "{\n  const int8_t *const inputs[" + std::to_string(inputs.size()) + "] = " + braced(inputs) +
              ";\n  " + call_text("ta_concat_s8", {params_ref(op), "inputs", context.address(op.outputs[0])}) + "\n}";
  return call;
}

KernelCall lower_split(const LoweringContext& context, const graph::Op& op) {
  const op_params::CopyPlan plan = op_params::split_plan(context.graph(), op);
  KernelCall call = start_call(context, op, kSource);
  copy_fields(call, op, "ta_split_params", "num_outputs", plan);
  std::vector<std::string> outputs;
  for (int32_t t : op.outputs) outputs.push_back(context.address(t));
  call.call = "{\n  int8_t *const outputs[" + std::to_string(outputs.size()) + "] = " + braced(outputs) + ";\n  " +
              call_text("ta_split_s8", {params_ref(op), operand(context, call, op, op_params::split_input(op)), "outputs"}) +
              "\n}";
  return call;
}

KernelCall lower_gather(const LoweringContext& context, const graph::Op& op) {
  const op_params::GatherKernel k = op_params::gather_kernel(context.graph(), op);
  KernelCall call = start_call(context, op, kSource);
  call.params_type = "ta_gather_params";
  call.arrays.push_back(int32_array(op, "indices", k.indices));
  call.params = Fields()
                    .add("outer_size", k.params.outer_size).add("axis_size", k.params.axis_size)
                    .add("inner_size", k.params.inner_size).add("num_indices", k.params.num_indices)
                    .add("indices", call.arrays.back().name)
                    .take();
  call.call = call_text("ta_gather_s8", {params_ref(op), operand(context, call, op, 0), context.address(op.outputs[0])});
  return call;
}

}  // namespace

std::vector<OpLowering> data_movement_lowerings() {
  return {{op_code::kPad, "PAD", lower_pad},
          {op_code::kPadV2, "PADV2", lower_pad},
          {op_code::kTranspose, "TRANSPOSE", lower_transpose},
          {op_code::kStridedSlice, "STRIDED_SLICE", lower_strided_slice},
          {op_code::kTile, "TILE", lower_tile},
          {op_code::kResizeNearestNeighbor, "RESIZE_NEAREST_NEIGHBOR", lower_resize_nearest},
          {op_code::kConcatenation, "CONCATENATION", lower_concatenation},
          {op_code::kPack, "PACK", lower_concatenation},
          {op_code::kSplit, "SPLIT", lower_split},
          {op_code::kSplitV, "SPLIT_V", lower_split},
          {op_code::kUnpack, "UNPACK", lower_split},
          {op_code::kGather, "GATHER", lower_gather}};
}

}  // namespace tinyarena::codegen
