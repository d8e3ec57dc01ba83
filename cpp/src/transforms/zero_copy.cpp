// Zero-copy concatenation and splitting: the slices of a concatenation's
// output are written by their producers in place, the slices a SPLIT or
// STRIDED_SLICE takes are read where they lie. Each slice gets a Placement
// in the big tensor and the op is elided; liveness then plans one buffer.
// A STRIDED_SLICE of an LSTM's last step goes: the LSTM writes just that step.
// A QUANTIZE feeding an LSTM goes: the LSTM quantizes one step's input at a time.
#include <algorithm>
#include <optional>

#include "rebuild.h"
#include "tinyarena/graph/storage.h"
#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena/transforms/transforms.h"

namespace tinyarena::transforms {
namespace {

using graph::Graph;
using graph::Op;
using graph::Placement;
using graph::Tensor;
namespace op_code = op_params::opcode;

struct Slice {
  int32_t tensor = -1;
  Placement placement;
};

// Tensors that get memory (as the liveness stage decides).
std::vector<bool> activations(const Graph& graph) {
  std::vector<bool> io(graph.tensors.size(), false), active(graph.tensors.size(), false);
  for (int32_t t : graph.inputs) io[t] = true;
  for (int32_t t : graph.outputs) io[t] = true;
  for (const Tensor& t : graph.tensors)
    active[t.index] = !t.is_constant() && t.byte_size && (t.producer >= 0 || !t.consumers.empty() || io[t.index]);
  return active;
}

// Ops whose lowering can write their output with a pixel stride: the window
// kernels (out_pix_stride) and int8 elementwise ops (one call per pixel).
bool writes_with_pixel_stride(const Graph& graph, const Op& op) {
  switch (op.opcode) {
    case op_code::kConv2D: case op_code::kDepthwiseConv2D: case op_code::kAveragePool2D: case op_code::kMaxPool2D:
    case op_code::kRelu: case op_code::kRelu6: case op_code::kReluN1To1: case op_code::kLogistic:
    case op_code::kTanh: case op_code::kHardSwish:
      return true;
    case op_code::kQuantize: return graph.input(op, 0) && graph.input(op, 0)->dtype == graph::DType::Int8;
    default: return false;
  }
}

bool is_graph_output(const Graph& graph, int32_t t) {
  return std::find(graph.outputs.begin(), graph.outputs.end(), t) != graph.outputs.end();
}

// A concatenation input its producer can write as a channel slice: the only
// output of a strided-writing op, read by the concatenation alone.
bool channel_slice_writable(const Graph& graph, const Op& concat, const Tensor& t, const std::vector<bool>& is_base) {
  if (t.producer < 0 || is_base[t.index] || is_graph_output(graph, t.index)) return false;
  const Op& producer = graph.ops[t.producer];
  return writes_with_pixel_stride(graph, producer) && !producer.elided && producer.outputs.size() == 1 &&
         t.consumers == std::vector<int32_t>{concat.index};
}

// Where each input of a concatenation goes in its output, or nothing.
std::vector<Slice> concat_slices(const Graph& graph, const Op& op, const std::vector<bool>& is_base) {
  const auto plan = detail::kernel_params_or_nothing([&] { return op_params::concat_plan(graph, op); });
  if (!plan) return {};
  const Tensor& out = *graph.output(op, 0);
  const bool contiguous = plan->outer_size == 1;
  const bool channels = out.shape.size() == 4 && out.shape[0] == 1 && (op.options.axis + 4) % 4 == 3;
  if (!contiguous && !channels) return {};
  std::vector<Slice> slices;
  int64_t offset = 0;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const Tensor& t = graph.tensors[op.inputs[i]];
    if (t.is_constant() || t.is_variable || t.placement || !detail::same_quantization(t, out)) return {};
    if (!contiguous && !channel_slice_writable(graph, op, t, is_base)) return {};
    slices.push_back({t.index, {out.index, offset, contiguous ? 0 : out.shape[3]}});
    offset += plan->copy_sizes[i];
  }
  return slices;
}

// SPLIT along a dimension with only 1s before it: each part is a contiguous run.
std::vector<Slice> split_slices(const Graph& graph, const Op& op) {
  const auto plan = detail::kernel_params_or_nothing([&] { return op_params::split_plan(graph, op); });
  if (!plan || plan->outer_size != 1) return {};
  const Tensor& in = *graph.input(op, 1);
  std::vector<Slice> slices;
  int64_t offset = 0;
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const Tensor& t = graph.tensors[op.outputs[i]];
    if (t.placement || !detail::same_quantization(t, in)) return {};
    slices.push_back({t.index, {in.index, offset, 0}});
    offset += plan->copy_sizes[i];
  }
  return slices;
}

// STRIDED_SLICE that keeps one contiguous run of its input: step 1, whole
// dimensions after some axis, single indices before it.
std::vector<Slice> strided_slice_slices(const Graph& graph, const Op& op) {
  const auto params = detail::kernel_params_or_nothing([&] { return op_params::strided_slice_params(graph, op); });
  if (!params) return {};
  const ta_slice_params& p = *params;
  const Tensor &in = *graph.input(op, 0), &out = *graph.output(op, 0);
  if (!detail::same_quantization(in, out) || out.placement || out.element_count == 0) return {};
  int64_t offset = 0, inner = 1;
  bool partial_seen = false;  // a dimension inside it is cut: everything outside must be one index
  for (int32_t d = p.ndims - 1; d >= 0; --d) {
    if (p.count[d] > 1 && p.step[d] != 1) return {};
    if (partial_seen && p.count[d] != 1) return {};
    partial_seen = partial_seen || p.count[d] != p.in_shape[d];
    offset += int64_t{p.start[d]} * inner;
    inner *= p.in_shape[d];
  }
  return {{out.index, {in.index, offset, 0}}};
}

// A STRIDED_SLICE taking the last step of a one-batch LSTM's sequence output,
// its only reader: the LSTM can write that step alone, straight into the
// slice's output (the sequence is never stored). Returns the LSTM's index or -1.
int32_t lstm_writing_last_step(const Graph& graph, const Op& slice) {
  if (slice.opcode != op_code::kStridedSlice) return -1;
  const Tensor* sequence = graph.input(slice, 0);
  if (!sequence || sequence->producer < 0 || sequence->consumers.size() != 1 || is_graph_output(graph, sequence->index))
    return -1;
  const Op& lstm = graph.ops[sequence->producer];
  if (lstm.opcode != op_code::kUnidirectionalSequenceLstm || lstm.outputs.size() != 1) return -1;
  const auto k = detail::kernel_params_or_nothing([&] { return op_params::lstm_kernel(graph, lstm); });
  const std::vector<Slice> slices = strided_slice_slices(graph, slice);
  if (!k || k->params.batches != 1 || k->params.output_last_step_only || slices.size() != 1) return -1;
  const ta_lstm_params& p = k->params;
  const bool last_step = slices[0].placement.offset == int64_t{p.steps - 1} * p.n_cell &&
                         graph.tensors[slices[0].tensor].element_count == p.n_cell;
  return last_step ? lstm.index : -1;
}

// A QUANTIZE (float32 -> int8) whose only reader is an LSTM's input: the LSTM
// can read the float sequence and quantize one step's row at a time into its
// scratch, so the int8 sequence is never stored. Returns the LSTM's index or -1.
int32_t lstm_quantizing_its_input(const Graph& graph, const Op& quantize) {
  if (quantize.opcode != op_code::kQuantize || quantize.outputs.size() != 1) return -1;
  const Tensor *in = graph.input(quantize, 0), *out = graph.output(quantize, 0);
  if (!in || !out || in->dtype != graph::DType::Float32 || in->is_constant() || in->shape != out->shape ||
      out->consumers.size() != 1 || is_graph_output(graph, out->index))
    return -1;
  const Op& lstm = graph.ops[out->consumers[0]];
  if (lstm.opcode != op_code::kUnidirectionalSequenceLstm || lstm.inputs.empty() || lstm.inputs[0] != out->index)
    return -1;
  const auto k = detail::kernel_params_or_nothing([&] { return op_params::lstm_kernel(graph, lstm); });
  return k ? lstm.index : -1;
}

}  // namespace

TransformResult zero_copy(const Graph& graph, const std::vector<int32_t>& only) {
  TransformResult result;
  result.graph = graph;
  Graph& g = result.graph;
  const std::vector<bool> active = activations(graph);
  std::vector<int64_t> sizes(graph.tensors.size(), 0);
  for (const Tensor& t : graph.tensors)
    if (active[t.index]) sizes[t.index] = *t.byte_size;
  graph::StorageGroups storage(sizes);
  graph::join_fixed_storage(graph, active, storage);
  std::vector<bool> is_base(graph.tensors.size(), false);
  for (const Tensor& t : graph.tensors)
    if (t.placement) is_base[t.placement->base] = true;

  std::vector<bool> drop(graph.ops.size(), false);
  for (const Op& op : graph.ops) {
    if (op.elided || !detail::selected(only, op.index)) continue;
    if (const int32_t lstm = lstm_writing_last_step(graph, op); lstm >= 0) {
      g.ops[lstm].outputs[0] = op.outputs[0];
      drop[op.index] = true;
      result.rewrites.push_back({op.index, "STRIDED_SLICE of the last step: the LSTM writes only that step"});
      continue;
    }
    if (const int32_t lstm = lstm_quantizing_its_input(graph, op); lstm >= 0) {
      g.ops[lstm].inputs[0] = op.inputs[0];
      g.ops[lstm].intermediates.push_back(op.outputs[0]);  // carries the int8 input's quantization
      drop[op.index] = true;
      result.rewrites.push_back({op.index, "QUANTIZE of the LSTM's input: the LSTM quantizes one step at a time"});
      continue;
    }
    std::vector<Slice> slices;
    if (op.opcode == op_code::kConcatenation) slices = concat_slices(g, op, is_base);
    else if (op.opcode == op_code::kSplit) slices = split_slices(g, op);
    else if (op.opcode == op_code::kStridedSlice) slices = strided_slice_slices(g, op);
    if (slices.empty()) continue;
    // Every slice must fit the memory the tensors already share (views, earlier placements).
    graph::StorageGroups trial = storage;
    const bool fits = std::all_of(slices.begin(), slices.end(), [&](const Slice& s) {
      return active[s.tensor] && active[s.placement.base] && trial.join(s.placement.base, s.tensor, s.placement.offset);
    });
    if (!fits) continue;
    storage = std::move(trial);
    for (const Slice& s : slices) {
      g.tensors[s.tensor].placement = s.placement;
      is_base[s.placement.base] = true;
    }
    g.ops[op.index].elided = true;
    result.rewrites.push_back({op.index, op.type + " without copies (" + std::to_string(slices.size()) + " slices)"});
  }
  if (std::find(drop.begin(), drop.end(), true) != drop.end()) g = detail::without_ops(std::move(g), drop);
  return result;
}

std::vector<std::string> transform_names() { return {"fold_pads", "zero_copy"}; }

TransformResult apply_transform(const Graph& graph, const std::string& name, const std::vector<int32_t>& only) {
  if (name == "fold_pads") return fold_pads(graph, only);
  if (name == "zero_copy") return zero_copy(graph, only);
  throw std::invalid_argument("unknown transform '" + name + "' (fold_pads, zero_copy)");
}

}  // namespace tinyarena::transforms
