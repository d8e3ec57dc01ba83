// Params of the data-movement kernels (values pass through unchanged): PAD /
// PADV2, CONCATENATION / PACK, SPLIT / SPLIT_V / UNPACK, GATHER, TRANSPOSE,
// STRIDED_SLICE (strided_slice_logic), TILE and RESIZE_NEAREST_NEIGHBOR; and of MEAN
// (QuantizedMeanOrSum).
#include "accumulators.h"
#include "tinyarena/op_params/op_checks.h"
#include "tinyarena/graph/slicing.h"
#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena/op_params/quantization.h"

namespace tinyarena::op_params {
namespace {

using namespace detail;

// An axis argument in [-rank, rank), made non-negative.
int32_t resolve_axis(const graph::Op& op, int32_t axis, size_t rank) {
  const int32_t r = static_cast<int32_t>(rank);
  if (axis < -r || axis >= r) unsupported(op, "axis " + std::to_string(axis) + " is out of range");
  return axis < 0 ? axis + r : axis;
}

int64_t product(const std::vector<int32_t>& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d) p *= shape[d];
  return p;
}

// The copy plan of tensors `parts` joined along `axis` into `whole`: every
// dimension but the axis equal, the axis sizes adding up.
CopyPlan copy_plan(const graph::Op& op, const std::vector<const graph::Tensor*>& parts, const graph::Tensor& whole,
                   int32_t axis) {
  CopyPlan plan;
  const int64_t inner = product(whole.shape, axis + 1, whole.shape.size());
  int64_t total = 0;
  for (const graph::Tensor* part : parts) {
    std::vector<int64_t> expected(whole.shape.begin(), whole.shape.end());
    expected[axis] = part->shape.size() == whole.shape.size() ? part->shape[axis] : 0;
    require_shape(op, *part, expected, "a part");
    total += expected[axis];
    plan.copy_sizes.push_back(static_cast<int32_t>(expected[axis] * inner));
  }
  if (total != whole.shape[axis]) unsupported(op, "the parts do not add up along the axis");
  plan.outer_size = static_cast<int32_t>(product(whole.shape, 0, axis));
  return plan;
}

// The copy plan of tensors `parts` stacked along a new `axis` into `whole`
// (PACK, UNPACK): each part is `whole` without that axis, one per index of it.
CopyPlan stack_plan(const graph::Op& op, const std::vector<const graph::Tensor*>& parts, const graph::Tensor& whole,
                    int32_t axis) {
  std::vector<int64_t> part_shape(whole.shape.begin(), whole.shape.end());
  part_shape.erase(part_shape.begin() + axis);
  if (static_cast<int64_t>(parts.size()) != whole.shape[axis])
    unsupported(op, "the number of parts does not match the stacked axis");
  for (const graph::Tensor* part : parts) require_shape(op, *part, part_shape, "a part");
  CopyPlan plan;
  plan.copy_sizes.assign(parts.size(), static_cast<int32_t>(product(whole.shape, axis + 1, whole.shape.size())));
  plan.outer_size = static_cast<int32_t>(product(whole.shape, 0, axis));
  return plan;
}

}  // namespace

ta_mean_params mean_params(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0);
  const graph::Tensor& out = int8_output(graph, op, 0);
  ta_mean_params p{};
  p.ndims = static_cast<int32_t>(in.shape.size());
  fill6(p.in_shape, in.shape);
  int64_t kept = 1;
  for (int32_t axis : int_values(graph, op, 1)) p.reduce_mask |= 1 << resolve_axis(op, axis, in.shape.size());
  for (size_t d = 0; d < in.shape.size(); ++d)
    if (!(p.reduce_mask >> d & 1)) kept *= in.shape[d];
  if (out.element_count != kept) unsupported(op, "the output size does not match the kept dimensions");
  if (in.element_count == 0) unsupported(op, "the input is empty");
  prove_int8_sum(op, in.element_count / kept, "each mean");
  p.input_zero_point = zero_point_of(in);
  p.output_zero_point = zero_point_of(out);
  // double(input_scale) / double(output_scale); the kernel folds in 1/n.
  const Multiplier m = requant_multiplier(
      op, static_cast<double>(scale_of(in)) / static_cast<double>(scale_of(out)), "the multiplier");
  p.mult = m.mult;
  p.shift = m.shift;
  return p;
}

ta_pad_params pad_params(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0);
  const graph::Tensor& out = int8_output(graph, op, 0);
  const std::vector<int32_t> pads = int_values(graph, op, 1);  // [rank][2]
  if (pads.size() != 2 * in.shape.size()) unsupported(op, "the paddings do not have one pair per dimension");
  ta_pad_params p{};
  p.ndims = static_cast<int32_t>(in.shape.size());
  fill6(p.in_shape, in.shape);
  std::vector<int64_t> shape;
  for (size_t d = 0; d < in.shape.size(); ++d) {
    if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) unsupported(op, "negative padding");
    p.before[d] = pads[2 * d];
    p.after[d] = pads[2 * d + 1];
    shape.push_back(int64_t{in.shape[d]} + pads[2 * d] + pads[2 * d + 1]);
  }
  require_shape(op, out, shape, "the output");
  // int8 PAD fills with the output zero point; PADV2 with its constant value.
  p.pad_value = zero_point_of(out);
  if (op.opcode == opcode::kPadV2 && graph.input(op, 2))
    p.pad_value = static_cast<int8_t>(*graph.constant_data(constant_input(graph, op, 2, graph::DType::Int8)));
  return p;
}

ta_transpose_params transpose_params(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0);
  const graph::Tensor& out = int8_output(graph, op, 0);
  const std::vector<int32_t> perm = int_values(graph, op, 1);
  if (perm.size() != in.shape.size()) unsupported(op, "the permutation does not match the input rank");
  ta_transpose_params p{};
  p.ndims = static_cast<int32_t>(in.shape.size());
  fill6(p.in_shape, in.shape);
  std::vector<bool> used(perm.size(), false);
  std::vector<int64_t> shape;
  for (size_t d = 0; d < perm.size(); ++d) {
    const int32_t from = resolve_axis(op, perm[d], perm.size());
    if (used[from]) unsupported(op, "the permutation repeats a dimension");
    used[from] = true;
    p.perm[d] = from;
    shape.push_back(in.shape[from]);
  }
  require_shape(op, out, shape, "the output");
  return p;
}

ta_slice_params strided_slice_params(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0);
  const graph::Tensor& out = int8_output(graph, op, 0);
  const graph::OpOptions& o = op.options;
  if (o.ellipsis_mask || o.new_axis_mask || o.slice_offset)
    unsupported(op, "ellipsis, new-axis masks and offset slicing are not supported");
  const std::vector<int32_t> begin = int_values(graph, op, 1), end = int_values(graph, op, 2),
                             strides = int_values(graph, op, 3);
  const size_t rank = in.shape.size();
  if (begin.size() != rank || end.size() != rank || strides.size() != rank)
    unsupported(op, "begin, end and strides need one value per dimension");
  ta_slice_params p{};
  p.ndims = static_cast<int32_t>(rank);
  fill6(p.in_shape, in.shape);
  int64_t elements = 1;
  for (size_t a = 0; a < rank; ++a) {
    const int32_t dim = in.shape[a], stride = strides[a];
    if (stride == 0) unsupported(op, "stride 0");
    const graph::SliceAxis axis = graph::slice_axis(begin[a], end[a], stride, dim, o.begin_mask >> a & 1,
                                                    o.end_mask >> a & 1, o.shrink_axis_mask >> a & 1);
    p.start[a] = axis.start;
    p.step[a] = stride;
    p.count[a] = axis.count;
    elements *= p.count[a];
  }
  if (out.element_count != elements) unsupported(op, "the output size does not match the slice");
  return p;
}

ta_tile_params tile_params(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0);
  const graph::Tensor& out = int8_output(graph, op, 0);
  const std::vector<int32_t> multiples = int_values(graph, op, 1);
  if (multiples.size() != in.shape.size()) unsupported(op, "the multiples do not have one value per dimension");
  ta_tile_params p{};
  p.ndims = static_cast<int32_t>(in.shape.size());
  fill6(p.in_shape, in.shape);
  std::vector<int64_t> shape;
  for (size_t d = 0; d < multiples.size(); ++d) {
    if (multiples[d] < 0) unsupported(op, "a negative multiple");
    p.multiples[d] = multiples[d];
    shape.push_back(int64_t{in.shape[d]} * multiples[d]);
  }
  require_shape(op, out, shape, "the output");
  return p;
}

ta_resize_params resize_nearest_params(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0, 4);
  const graph::Tensor& out = int8_output(graph, op, 0, 4);
  const std::vector<int32_t> size = int_values(graph, op, 1);
  if (size.size() != 2 || size[0] < 1 || size[1] < 1) unsupported(op, "the size input must be two positive values");
  require_shape(op, out, {in.shape[0], size[0], size[1], in.shape[3]}, "the output");
  ta_resize_params p{};
  p.batches = in.shape[0];
  p.in_h = in.shape[1];
  p.in_w = in.shape[2];
  p.channels = in.shape[3];
  p.out_h = size[0];
  p.out_w = size[1];
  p.align_corners = op.options.align_corners;
  p.half_pixel_centers = op.options.half_pixel_centers;
  return p;
}

CopyPlan concat_plan(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& out = int8_output(graph, op, 0);
  std::vector<const graph::Tensor*> inputs;
  for (size_t i = 0; i < op.inputs.size(); ++i) inputs.push_back(&int8_input(graph, op, i));
  if (op.opcode == opcode::kPack) return stack_plan(op, inputs, out, resolve_axis(op, op.options.axis, out.shape.size()));
  if (op.options.activation != graph::Activation::None)
    unsupported(op, "a fused activation on CONCATENATION is not supported");
  return copy_plan(op, inputs, out, resolve_axis(op, op.options.axis, out.shape.size()));
}

size_t split_input(const graph::Op& op) { return op.opcode == opcode::kSplit ? 1 : 0; }

CopyPlan split_plan(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, split_input(op));
  std::vector<const graph::Tensor*> outputs;
  for (size_t i = 0; i < op.outputs.size(); ++i) outputs.push_back(&int8_output(graph, op, i));
  if (op.opcode == opcode::kUnpack) return stack_plan(op, outputs, in, resolve_axis(op, op.options.axis, in.shape.size()));
  // SPLIT: (axis, input); SPLIT_V: (input, size_splits, axis). The outputs' shapes carry the sizes.
  const std::vector<int32_t> axis = int_values(graph, op, op.opcode == opcode::kSplit ? 0 : 2);
  if (axis.size() != 1) unsupported(op, "the axis input must be one value");
  return copy_plan(op, outputs, in, resolve_axis(op, axis[0], in.shape.size()));
}

GatherKernel gather_kernel(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0);
  const graph::Tensor& out = int8_output(graph, op, 0);
  if (op.options.batch_dims != 0) unsupported(op, "batch_dims other than 0 is not supported");
  const graph::Tensor* indices_tensor = graph.input(op, 1);
  if (!indices_tensor || !indices_tensor->is_constant()) unsupported(op, "the indices must be constant");
  const int32_t axis = resolve_axis(op, op.options.axis, in.shape.size());
  GatherKernel k;
  k.indices = int_values(graph, op, 1);
  for (int32_t index : k.indices)
    if (index < 0 || index >= in.shape[axis]) unsupported(op, "index " + std::to_string(index) + " is out of range");
  std::vector<int64_t> shape(in.shape.begin(), in.shape.begin() + axis);
  shape.insert(shape.end(), indices_tensor->shape.begin(), indices_tensor->shape.end());
  shape.insert(shape.end(), in.shape.begin() + axis + 1, in.shape.end());
  require_shape(op, out, shape, "the output");
  k.params.outer_size = static_cast<int32_t>(product(in.shape, 0, axis));
  k.params.axis_size = in.shape[axis];
  k.params.inner_size = static_cast<int32_t>(product(in.shape, axis + 1, in.shape.size()));
  k.params.num_indices = static_cast<int32_t>(k.indices.size());
  return k;
}

}  // namespace tinyarena::op_params
