#include "tinyarena/graph/graph.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tinyarena/common/errors.h"

namespace tinyarena::graph {
namespace {

constexpr const char* kDTypeNames[] = {
    "float32", "float16", "int32",  "uint8",   "int64",  "string", "bool",   "int16",
    "complex64", "int8",  "float64", "complex128", "uint64", "resource", "variant", "uint32",
    "uint16",  "int4",    "bfloat16", "int2",   "uint4",  "float8_e4m3fn", "float8_e5m2"};

std::string op_label(const Op& op) { return "op " + std::to_string(op.index) + " (" + op.type + ")"; }

void check_tensor_index(const Graph& graph, const Op& op, int32_t index, bool optional) {
  if (optional && index == -1) return;
  if (index < 0 || index >= static_cast<int32_t>(graph.tensors.size()))
    throw ModelError(op_label(op) + " refers to tensor " + std::to_string(index) + " of " +
                     std::to_string(graph.tensors.size()));
}

// Each output must be a fresh activation: not constant, not a graph input or
// variable, not written by an earlier op.
void link_outputs(Graph& graph, const Op& op, std::vector<bool>& available) {
  for (int32_t index : op.outputs) {
    check_tensor_index(graph, op, index, false);
    Tensor& tensor = graph.tensors[index];
    if (available[index]) {
      const std::string what = tensor.is_constant()  ? "constant"
                               : tensor.producer >= 0 ? "already written by op " + std::to_string(tensor.producer)
                                                      : "graph input or variable";
      throw ModelError(op_label(op) + " writes tensor " + std::to_string(index) + " '" +
                       tensor.name + "' (" + what + ")");
    }
    tensor.producer = op.index;
    available[index] = true;
  }
}

}  // namespace

const char* dtype_name(DType dtype) {
  const int code = static_cast<int>(dtype);
  return code <= kMaxDTypeCode ? kDTypeNames[code] : "unknown";
}

std::optional<int64_t> dtype_bytes(DType dtype, int64_t elements) {
  switch (dtype) {
    case DType::Bool: case DType::Int8: case DType::UInt8:
    case DType::Float8E4M3FN: case DType::Float8E5M2: return elements;
    case DType::Int16: case DType::UInt16: case DType::Float16: case DType::BFloat16: return 2 * elements;
    case DType::Int32: case DType::UInt32: case DType::Float32: return 4 * elements;
    case DType::Int64: case DType::UInt64: case DType::Float64: case DType::Complex64: return 8 * elements;
    case DType::Complex128: return 16 * elements;
    case DType::Int4: case DType::UInt4: return (elements + 1) / 2;
    case DType::Int2: return (elements + 3) / 4;
    case DType::String: case DType::Resource: case DType::Variant: return std::nullopt;
  }
  return std::nullopt;
}

const char* padding_name(Padding padding) {
  switch (padding) {
    case Padding::Same: return "SAME";
    case Padding::Valid: return "VALID";
    case Padding::Explicit: return "EXPLICIT";
  }
  return "UNKNOWN";
}

const char* activation_name(Activation activation) {
  constexpr const char* names[] = {"NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"};
  const int code = static_cast<int>(activation);
  return code <= 5 ? names[code] : "UNKNOWN";
}

const Op& Graph::op_at(int32_t index) const {
  if (index < 0 || index >= static_cast<int32_t>(ops.size()))
    throw std::invalid_argument("op " + std::to_string(index) + " does not exist");
  return ops[static_cast<size_t>(index)];
}

const Tensor* Graph::input(const Op& op, size_t position) const {
  if (position >= op.inputs.size() || op.inputs[position] < 0) return nullptr;
  return &tensors[op.inputs[position]];
}

const Tensor* Graph::output(const Op& op, size_t position) const {
  if (position >= op.outputs.size() || op.outputs[position] < 0) return nullptr;
  return &tensors[op.outputs[position]];
}

Graph link_graph(Graph graph) {
  for (Tensor& tensor : graph.tensors) {
    tensor.producer = -1;
    tensor.consumers.clear();
  }
  for (int32_t index : graph.inputs) {
    if (index < 0 || index >= static_cast<int32_t>(graph.tensors.size()))
      throw ModelError("graph input refers to tensor " + std::to_string(index));
  }
  for (int32_t index : graph.outputs) {
    if (index < 0 || index >= static_cast<int32_t>(graph.tensors.size()))
      throw ModelError("graph output refers to tensor " + std::to_string(index));
  }
  std::vector<bool> available(graph.tensors.size(), false);
  for (const Tensor& tensor : graph.tensors)
    available[tensor.index] = tensor.is_constant() || tensor.is_variable;
  for (int32_t index : graph.inputs) available[index] = true;

  for (const Op& op : graph.ops) {
    for (int32_t index : op.inputs) {
      check_tensor_index(graph, op, index, true);
      if (index < 0) continue;
      if (!available[index])
        throw ModelError(op_label(op) + " reads tensor " + std::to_string(index) + " '" +
                         graph.tensors[index].name + "' before any op writes it");
      auto& consumers = graph.tensors[index].consumers;
      if (consumers.empty() || consumers.back() != op.index) consumers.push_back(op.index);
    }
    for (int32_t index : op.intermediates) check_tensor_index(graph, op, index, true);
    link_outputs(graph, op, available);
  }
  for (int32_t index : graph.outputs) {
    if (!available[index])
      throw ModelError("graph output tensor " + std::to_string(index) + " '" +
                       graph.tensors[index].name + "' is never written");
  }
  return graph;
}

}  // namespace tinyarena::graph
