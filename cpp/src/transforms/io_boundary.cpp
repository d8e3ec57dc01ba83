// The I/O boundary: converters keep a model's float32 (or NCHW) interface
// with ops at its edges -- a QUANTIZE of each float input, a DEQUANTIZE of
// each output, a TRANSPOSE from NCHW to NHWC. io_boundary drops them, so the
// int8 NHWC tensors next to them become the graph's inputs and outputs.
#include <algorithm>
#include <cstring>
#include <optional>

#include "rebuild.h"
#include "tinyarena/common/errors.h"
#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena/transforms/transforms.h"

namespace tinyarena::transforms {
namespace {

using graph::DType;
using graph::Graph;
using graph::Op;
using graph::Tensor;
namespace op_code = op_params::opcode;

bool per_tensor_int8(const Tensor& t) { return t.dtype == DType::Int8 && t.quantization.scale.size() == 1; }

bool listed(const std::vector<int32_t>& list, int32_t t) { return std::find(list.begin(), list.end(), t) != list.end(); }

// The permutation of a TRANSPOSE (its constant int32 input 1), or nothing.
std::optional<std::vector<int32_t>> transpose_perm(const Graph& graph, const Op& op) {
  const Tensor* perm = graph.input(op, 1);
  if (!perm || !perm->is_constant() || perm->dtype != DType::Int32) return std::nullopt;
  std::vector<int32_t> values(static_cast<size_t>(perm->element_count));
  if (perm->data->size != values.size() * sizeof(int32_t)) return std::nullopt;
  std::memcpy(values.data(), graph.constant_data(*perm), perm->data->size);
  return values;
}

std::string quantization_text(const Tensor& t) {
  return "scale " + std::to_string(t.quantization.scale[0]) + ", zero point " +
         std::to_string(t.quantization.zero_point.empty() ? 0 : t.quantization.zero_point[0]);
}

// The boundary op that reads graph input `t` and can go, with what the input becomes; or nothing.
const Op* input_boundary_op(const Graph& graph, int32_t t, const IoBoundaryOptions& options) {
  const Tensor& in = graph.tensors[t];
  if (in.consumers.size() != 1 || listed(graph.outputs, t)) return nullptr;
  const Op& op = graph.ops[in.consumers[0]];
  if (op.inputs.empty() || op.inputs[0] != t || op.outputs.size() != 1) return nullptr;
  const Tensor& out = *graph.output(op, 0);
  if (listed(graph.outputs, out.index) || listed(graph.inputs, out.index)) return nullptr;
  if (options.int8_io && op.opcode == op_code::kQuantize)
    return in.dtype == DType::Float32 && per_tensor_int8(out) ? &op : nullptr;
  if (options.nhwc_input && op.opcode == op_code::kTranspose) {
    const auto perm = transpose_perm(graph, op);
    return perm && *perm == std::vector<int32_t>{0, 2, 3, 1} && in.dtype == out.dtype ? &op : nullptr;
  }
  return nullptr;
}

// The DEQUANTIZE writing graph output `t` (from a per-tensor int8 tensor), or nothing.
const Op* output_boundary_op(const Graph& graph, int32_t t) {
  const Tensor& out = graph.tensors[t];
  if (out.producer < 0 || out.dtype != DType::Float32 || !out.consumers.empty()) return nullptr;
  const Op& op = graph.ops[out.producer];
  const Tensor* in = graph.input(op, 0);
  if (op.opcode != op_code::kDequantize || !in || !per_tensor_int8(*in) || in->is_constant()) return nullptr;
  if (listed(graph.outputs, in->index) || listed(graph.inputs, in->index)) return nullptr;
  return &op;
}

[[noreturn]] void still_float(const Graph& graph, const char* kind, size_t position, int32_t t) {
  const Tensor& tensor = graph.tensors[t];
  std::string why;
  if (std::string(kind) == "input" && tensor.consumers.size() == 1) {
    const Op& reader = graph.ops[tensor.consumers[0]];
    why = ": its reader is " + detail::op_label(reader) + ", not a QUANTIZE to int8";
    if (reader.opcode == op_code::kTranspose) why += " (add input layout nhwc to fold the TRANSPOSE)";
  } else if (std::string(kind) == "output") {
    why = ": it is not written by a DEQUANTIZE of an int8 tensor";
  }
  throw UnsupportedError(std::string("int8 I/O: ") + kind + " " + std::to_string(position) + " '" + tensor.name +
                         "' stays " + graph::dtype_name(tensor.dtype) + why);
}

}  // namespace

TransformResult io_boundary(const Graph& graph, const IoBoundaryOptions& options) {
  TransformResult result;
  Graph rewired = graph;
  std::vector<bool> drop(graph.ops.size(), false);
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    while (const Op* op = input_boundary_op(graph, rewired.inputs[i], options)) {
      drop[op->index] = true;
      const Tensor& now = graph.tensors[op->outputs[0]];
      rewired.inputs[i] = now.index;
      const std::string what = op->opcode == op_code::kTranspose ? "NHWC" : quantization_text(now);
      result.rewrites.push_back({op->index, op->type + " of input " + std::to_string(i) + " dropped: the model takes '" +
                                                now.name + "' (" + graph::dtype_name(now.dtype) + ", " + what + ")"});
    }
  }
  for (size_t i = 0; options.int8_io && i < graph.outputs.size(); ++i) {
    const Op* op = output_boundary_op(graph, graph.outputs[i]);
    if (!op) continue;
    drop[op->index] = true;
    const Tensor& now = *graph.input(*op, 0);
    rewired.outputs[i] = now.index;
    result.rewrites.push_back({op->index, op->type + " of output " + std::to_string(i) + " dropped: the model gives '" +
                                              now.name + "' (int8, " + quantization_text(now) + ")"});
  }
  std::sort(result.rewrites.begin(), result.rewrites.end(),
            [](const Rewrite& a, const Rewrite& b) { return a.op < b.op; });
  result.graph = detail::without_ops(std::move(rewired), drop);
  for (size_t i = 0; options.int8_io && i < result.graph.inputs.size(); ++i)
    if (result.graph.tensors[result.graph.inputs[i]].dtype == DType::Float32)
      still_float(result.graph, "input", i, result.graph.inputs[i]);
  for (size_t i = 0; options.int8_io && i < result.graph.outputs.size(); ++i)
    if (result.graph.tensors[result.graph.outputs[i]].dtype == DType::Float32)
      still_float(result.graph, "output", i, result.graph.outputs[i]);
  return result;
}

}  // namespace tinyarena::transforms
