#include "tinyarena/graph/op_metrics.h"

#include <algorithm>

namespace tinyarena::graph {
namespace {

constexpr int32_t kConv2D = 3, kDepthwiseConv2D = 4, kFullyConnected = 9, kUnidirectionalSequenceLstm = 44,
                  kTransposeConv = 67, kBatchMatMul = 126;
constexpr size_t kWeightsPosition = 1;
constexpr int64_t kRequantPairBytes = 8;

int64_t dim(const Tensor* tensor, size_t axis) {
  return tensor && axis < tensor->shape.size() ? tensor->shape[axis] : 0;
}

int64_t count(const Tensor* tensor) { return tensor ? tensor->element_count : 0; }

bool has_weights(int32_t opcode) {
  return opcode == kConv2D || opcode == kDepthwiseConv2D || opcode == kFullyConnected ||
         opcode == kTransposeConv;
}

size_t bias_position(int32_t opcode) { return opcode == kTransposeConv ? 3 : 2; }

// Output channels that need their own requantization pair: one per weight
// scale (per-channel), at least one.
int64_t requant_pairs(const Graph& graph, const Op& op) {
  const Tensor* weights = graph.input(op, kWeightsPosition);
  if (!weights) return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(weights->quantization.scale.size()));
}

// Every step multiplies the step's input by each gate's input matrix and the
// hidden state by its recurrent matrix (3 gates for CIFG), then by the projection.
int64_t lstm_macs(const Graph& graph, const Op& op) {
  const Tensor* forget_in = graph.input(op, 2);     // [n_cell][n_input]
  const Tensor* forget_rec = graph.input(op, 6);    // [n_cell][n_output]
  const Tensor* projection = graph.input(op, 16);   // [n_output][n_cell]
  const int64_t n_input = dim(forget_in, 1);
  if (n_input <= 0) return 0;
  const int64_t rows = count(graph.input(op, 0)) / n_input;  // steps x batches
  const int64_t gates = graph.input(op, 1) ? 4 : 3;
  return rows * (gates * dim(forget_in, 0) * (n_input + dim(forget_rec, 1)) + count(projection));
}

}  // namespace

int64_t op_macs(const Graph& graph, const Op& op) {
  const Tensor* weights = graph.input(op, kWeightsPosition);
  const Tensor* output = graph.output(op, 0);
  switch (op.opcode) {
    case kConv2D:  // weights [out_c, kh, kw, in_c / groups]
      return count(output) * dim(weights, 1) * dim(weights, 2) * dim(weights, 3);
    case kDepthwiseConv2D:  // weights [1, kh, kw, out_c]
      return count(output) * dim(weights, 1) * dim(weights, 2);
    case kFullyConnected:  // weights [units, in_features]
      return count(output) * dim(weights, 1);
    case kTransposeConv:  // weights [out_c, kh, kw, in_c]; every input value spreads over kh*kw*out_c
      return count(graph.input(op, 2)) * dim(weights, 0) * dim(weights, 1) * dim(weights, 2);
    case kUnidirectionalSequenceLstm: return lstm_macs(graph, op);
    case kBatchMatMul: {
      const Tensor* lhs = graph.input(op, 0);
      return lhs && !lhs->shape.empty() ? count(output) * lhs->shape.back() : 0;
    }
    default: return 0;
  }
}

std::vector<OpMetrics> op_metrics(const Graph& graph) {
  std::vector<bool> counted(graph.tensors.size(), false);
  std::vector<OpMetrics> metrics(graph.ops.size());
  for (const Op& op : graph.ops) {
    OpMetrics& m = metrics[op.index];
    m.macs = op_macs(graph, op);
    for (size_t position = 0; position < op.inputs.size(); ++position) {
      const Tensor* tensor = graph.input(op, position);
      if (!tensor || !tensor->is_constant() || counted[tensor->index]) continue;
      counted[tensor->index] = true;
      const bool is_bias = has_weights(op.opcode) && position == bias_position(op.opcode);
      (is_bias ? m.bias_bytes : m.weight_bytes) += tensor->byte_size.value_or(static_cast<int64_t>(tensor->data->size));
    }
    if (has_weights(op.opcode)) m.scale_bytes = kRequantPairBytes * requant_pairs(graph, op);
  }
  return metrics;
}

}  // namespace tinyarena::graph
