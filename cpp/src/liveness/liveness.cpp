#include "tinyarena/liveness/liveness.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "tinyarena/common/errors.h"
#include "tinyarena/graph/storage.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::liveness {
namespace {

using graph::Graph;
using graph::is_view_op;
using graph::Op;
using graph::StorageGroups;
using graph::Tensor;

constexpr int32_t kAdd = 0, kDepthwiseConv2D = 4, kLogistic = 14, kMul = 18, kRelu = 19,
                  kRelu6 = 21, kTanh = 28, kQuantize = 114, kHardSwish = 117, kDequantize = 6;

std::vector<int32_t> checked_order(const Graph& graph, std::vector<int32_t> order) {
  const int32_t n = static_cast<int32_t>(graph.ops.size());
  if (order.empty()) {
    order.resize(n);
    std::iota(order.begin(), order.end(), 0);
    return order;
  }
  std::vector<bool> done(n, false);
  std::vector<bool> ready(graph.tensors.size(), true);
  for (const Tensor& t : graph.tensors) ready[t.index] = t.producer < 0;
  if (static_cast<int32_t>(order.size()) != n)
    throw std::invalid_argument("schedule has " + std::to_string(order.size()) + " ops, graph has " + std::to_string(n));
  for (int32_t index : order) {
    if (index < 0 || index >= n || done[index])
      throw std::invalid_argument("schedule is not a permutation of the ops (op " + std::to_string(index) + ")");
    for (int32_t t : graph.ops[index].inputs)
      if (t >= 0 && !ready[t])
        throw std::invalid_argument("schedule runs op " + std::to_string(index) + " before the producer of its input '" +
                                    graph.tensors[t].name + "'");
    for (int32_t t : graph.ops[index].outputs) ready[t] = true;
    done[index] = true;
  }
  return order;
}

// Tensors grouped into shared buffers: the fixed storage groups (views,
// placements) joined in place as the schedule runs; each root keeps the
// group's lifetime.
class BufferGroups {
 public:
  BufferGroups(const Graph& graph, const std::vector<int32_t>& step_of, int32_t last_step,
               const std::vector<int32_t>& caller_tensors)
      : storage_(std::vector<int64_t>(graph.tensors.size(), 0)), first_(graph.tensors.size(), 0),
        last_(graph.tensors.size(), 0), pinned_to_end_(graph.tensors.size(), false),
        active_(graph.tensors.size(), false) {
    std::vector<bool> is_io(graph.tensors.size(), false);
    std::vector<int64_t> sizes(graph.tensors.size(), 0);
    for (int32_t t : graph.inputs) is_io[t] = true;
    for (int32_t t : graph.outputs) pinned_to_end_[t] = is_io[t] = true;
    std::vector<bool> in_caller_array(graph.tensors.size(), false);
    for (int32_t t : caller_tensors) in_caller_array[t] = true;
    for (const Tensor& tensor : graph.tensors) {
      if (tensor.is_constant() || in_caller_array[tensor.index]) continue;
      if (tensor.producer < 0 && tensor.consumers.empty() && !is_io[tensor.index] && !tensor.is_variable) continue;
      if (!tensor.byte_size)
        throw UnsupportedError("activation tensor " + std::to_string(tensor.index) + " '" + tensor.name +
                               "' has type " + graph::dtype_name(tensor.dtype) + ", which has no fixed size");
      const int32_t t = tensor.index;
      active_[t] = true;
      // State the code resets at its reader lives at that op only; other variables persist.
      const bool reset_state = op_params::state_reset_by_reader(graph, tensor);
      pinned_to_end_[t] = pinned_to_end_[t] || (tensor.is_variable && !reset_state);
      first_[t] = tensor.producer >= 0 ? step_of[tensor.producer] : reset_state ? step_of[tensor.consumers[0]] : 0;
      last_[t] = first_[t];
      for (int32_t consumer : tensor.consumers) last_[t] = std::max(last_[t], step_of[consumer]);
      if (pinned_to_end_[t]) last_[t] = last_step;
      sizes[t] = *tensor.byte_size;
    }
    storage_ = StorageGroups(sizes);
    join_fixed_storage(graph, active_, storage_);
    // Fold each member's lifetime into its root.
    for (int32_t t = 0; t < static_cast<int32_t>(graph.tensors.size()); ++t) {
      const int32_t r = storage_.root(t);
      if (r == t || !active_[t]) continue;
      first_[r] = std::min(first_[r], first_[t]);
      last_[r] = std::max(last_[r], last_[t]);
      pinned_to_end_[r] = pinned_to_end_[r] || pinned_to_end_[t];
    }
  }

  bool active(int32_t t) const { return t >= 0 && active_[t]; }
  int32_t root(int32_t t) { return storage_.root(t); }
  // The group of `t` holds a tensor placed inside another: no in-place write
  // lands in it or reads from it (slices may overlap, or be strided).
  bool placed(int32_t t) { return storage_.placed(t); }
  // The group of `t` is last read at `step` and need not outlive it.
  bool dies_at(int32_t t, int32_t step) {
    const int32_t r = root(t);
    return last_[r] == step && !pinned_to_end_[r];
  }
  // `out` is written over `victim` (same first byte).
  void merge(int32_t victim, int32_t out) {
    const int32_t a = root(victim), b = root(out);
    if (a == b || !storage_.join(victim, out, 0)) return;
    const int32_t r = std::min(a, b);  // the root join keeps
    first_[r] = std::min(first_[a], first_[b]);
    last_[r] = std::max(last_[a], last_[b]);
    pinned_to_end_[r] = pinned_to_end_[a] || pinned_to_end_[b];
  }
  int32_t first(int32_t r) const { return first_[r]; }
  int32_t last(int32_t r) const { return last_[r]; }
  // Bytes from the group's first byte to its last.
  int64_t size(int32_t r) const { return storage_.end(r) - storage_.begin(r); }
  // Bytes from the group's first byte to tensor `t`.
  int64_t start_of(int32_t t) { return storage_.offset(t) - storage_.begin(root(t)); }

 private:
  StorageGroups storage_;
  std::vector<int32_t> first_, last_;
  std::vector<bool> pinned_to_end_, active_;
};

int64_t bytes(const Tensor* t) { return t && t->byte_size ? *t->byte_size : -1; }

// Depthwise with multiplier 1 on a single image may overwrite its input
// channel by channel if that input dies here and the output is no larger.
bool can_depthwise_inplace(const Graph& graph, const Op& op, BufferGroups& groups, int32_t step) {
  const Tensor* in = graph.input(op, 0);
  const Tensor* out = graph.output(op, 0);
  if (!in || !out || !groups.active(in->index) || !groups.active(out->index)) return false;
  if (op.options.depth_multiplier != 1 || in->shape.size() != 4 || in->shape[0] != 1 || groups.placed(in->index))
    return false;
  return bytes(out) <= bytes(in) && groups.dies_at(in->index, step);
}

// The input an elementwise op can overwrite: same size as the output, dying here.
int32_t elementwise_inplace_input(const Graph& graph, const Op& op, BufferGroups& groups, int32_t step) {
  const Tensor* out = graph.output(op, 0);
  if (!out || !groups.active(out->index) || op.outputs.size() != 1) return -1;
  for (int32_t t : op.inputs) {
    if (groups.active(t) && bytes(&graph.tensors[t]) == bytes(out) && !groups.placed(t) && groups.dies_at(t, step))
      return t;
  }
  return -1;
}

// An in-place conversion (is_inplace_conversion) whose input dies here: the input it writes over.
int32_t conversion_inplace_input(const Graph& graph, const Op& op, BufferGroups& groups, int32_t step) {
  if (!is_inplace_conversion(graph, op)) return -1;
  const int32_t in = op.inputs[0];
  const bool free = groups.active(in) && groups.active(op.outputs[0]) && !groups.placed(in) && groups.dies_at(in, step);
  return free ? in : -1;
}

std::string buffer_name(const Graph& graph, const std::vector<int32_t>& tensors) {
  std::string name = graph.tensors[tensors.front()].name;
  if (name.empty()) name = "tensor " + std::to_string(tensors.front());
  if (tensors.size() > 1) name += " (+" + std::to_string(tensors.size() - 1) + ")";
  return name;
}

}  // namespace

// QUANTIZE float32 -> int8 writes element i at byte i of its input, where bytes 4i.. are read
// already (the kernel runs element by element, front to back, reading before writing). The group
// keeps the input's size, so the in-place write costs nothing over the input's life. (A DEQUANTIZE
// could read its int8 input from the last quarter of its float output just as safely, but that
// group would hold four times the input's bytes over the input's whole life: no saving in general.)
bool is_inplace_conversion(const Graph& graph, const Op& op) {
  const Tensor *in = graph.input(op, 0), *out = graph.output(op, 0);
  if (op.opcode != kQuantize || op.outputs.size() != 1 || !in || !out || in->is_constant()) return false;
  return in->element_count == out->element_count && in->dtype == graph::DType::Float32 &&
         out->dtype == graph::DType::Int8;
}

std::vector<int32_t> caller_float_io_tensors(const Graph& graph) {
  const auto plain_float = [&](int32_t t) {
    const Tensor& tensor = graph.tensors[t];
    const bool both = std::count(graph.inputs.begin(), graph.inputs.end(), t) &&
                      std::count(graph.outputs.begin(), graph.outputs.end(), t);
    return tensor.dtype == graph::DType::Float32 && !tensor.is_constant() && !tensor.is_variable &&
           !tensor.placement && !both;
  };
  const auto is_op = [&](int32_t op, int32_t opcode) { return graph.ops[op].opcode == opcode && !graph.ops[op].elided; };
  std::vector<int32_t> tensors;
  for (int32_t t : graph.inputs) {
    const auto& readers = graph.tensors[t].consumers;
    if (plain_float(t) && !readers.empty() &&
        std::all_of(readers.begin(), readers.end(), [&](int32_t op) {
          return is_op(op, kQuantize) || (op_params::lstm_reads_float_input(graph.ops[op]) && graph.ops[op].inputs[0] == t);
        }))
      tensors.push_back(t);
  }
  for (int32_t t : graph.outputs) {
    const Tensor& tensor = graph.tensors[t];
    if (plain_float(t) && tensor.producer >= 0 && is_op(tensor.producer, kDequantize) && tensor.consumers.empty())
      tensors.push_back(t);
  }
  std::sort(tensors.begin(), tensors.end());
  tensors.erase(std::unique(tensors.begin(), tensors.end()), tensors.end());
  return tensors;
}

bool is_inplace_elementwise_op(int32_t opcode) {
  return opcode == kAdd || opcode == kMul || opcode == kRelu || opcode == kRelu6 ||
         opcode == kLogistic || opcode == kTanh || opcode == kHardSwish;
}

Liveness analyze_liveness(const Graph& graph, const LivenessOptions& options, std::vector<int32_t> order) {
  Liveness result;
  result.order = checked_order(graph, std::move(order));
  const int32_t steps = static_cast<int32_t>(result.order.size());
  std::vector<int32_t> step_of(graph.ops.size());
  for (int32_t s = 0; s < steps; ++s) step_of[result.order[s]] = s;

  if (options.caller_float_io) result.caller_tensors = caller_float_io_tensors(graph);
  BufferGroups groups(graph, step_of, std::max(steps - 1, 0), result.caller_tensors);
  std::vector<bool> inplace_depthwise(graph.ops.size(), false);
  std::vector<bool> may_inplace(graph.ops.size(), true);
  for (int32_t index : options.not_inplace_ops)
    if (index >= 0 && index < static_cast<int32_t>(graph.ops.size())) may_inplace[index] = false;
  for (int32_t step = 0; step < steps; ++step) {
    const Op& op = graph.ops[result.order[step]];
    const Tensor* out = graph.output(op, 0);
    // Views and elided ops share memory already; a placed output is never written in place.
    if (is_view_op(op.opcode) || op.elided || !out || !groups.active(out->index) || groups.placed(out->index)) continue;
    if (!may_inplace[op.index]) continue;  // e.g. a tiled segment's op writes into a ring, never over its input
    if (op.opcode == kDepthwiseConv2D && options.inplace_depthwise && can_depthwise_inplace(graph, op, groups, step)) {
      groups.merge(op.inputs[0], out->index);
      inplace_depthwise[op.index] = true;
      result.inplace_ops.push_back(op.index);
    } else if (is_inplace_elementwise_op(op.opcode) && options.inplace_elementwise) {
      const int32_t victim = elementwise_inplace_input(graph, op, groups, step);
      if (victim < 0) continue;
      groups.merge(victim, out->index);
      result.inplace_ops.push_back(op.index);
    } else if (options.inplace_elementwise && conversion_inplace_input(graph, op, groups, step) >= 0) {
      groups.merge(op.inputs[0], out->index);  // the int8 output over the first quarter of the float input
      result.inplace_ops.push_back(op.index);
    }
  }
  std::sort(result.inplace_ops.begin(), result.inplace_ops.end());

  // One buffer per group, in order of the group's lowest tensor index.
  result.tensor_buffer.assign(graph.tensors.size(), -1);
  result.tensor_offset.assign(graph.tensors.size(), 0);
  std::vector<int32_t> buffer_of_root(graph.tensors.size(), -1);
  for (const Tensor& tensor : graph.tensors) {
    if (!groups.active(tensor.index)) continue;
    const int32_t r = groups.root(tensor.index);
    if (buffer_of_root[r] < 0) {
      buffer_of_root[r] = static_cast<int32_t>(result.buffers.size());
      LiveBuffer buffer;
      buffer.size = groups.size(r);
      buffer.first = groups.first(r);
      buffer.last = groups.last(r);
      result.buffers.push_back(buffer);
    }
    result.tensor_buffer[tensor.index] = buffer_of_root[r];
    result.tensor_offset[tensor.index] = groups.start_of(tensor.index);
    result.buffers[buffer_of_root[r]].tensors.push_back(tensor.index);
  }
  for (LiveBuffer& buffer : result.buffers) buffer.name = buffer_name(graph, buffer.tensors);

  if (!options.scratch) return result;
  for (int32_t step = 0; step < steps; ++step) {
    const Op& op = graph.ops[result.order[step]];
    // Exactly what the op's kernel asks for (the in-place depthwise kernel's plane when in place).
    const int64_t size = op_params::scratch_bytes(graph, op, inplace_depthwise[op.index]);
    if (size == 0) continue;
    LiveBuffer scratch;
    scratch.name = "scratch@" + std::to_string(op.index) + " " + op.type;
    scratch.kind = BufferKind::Scratch;
    scratch.size = size;
    scratch.first = scratch.last = step;
    scratch.op = op.index;
    result.buffers.push_back(scratch);
  }
  return result;
}

}  // namespace tinyarena::liveness
