#include "tinyarena/schedule/memory_model.h"

#include <algorithm>
#include <numeric>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/graph/storage.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::schedule {
namespace {

using graph::Graph;
using graph::Op;
using graph::Tensor;

constexpr int32_t kDepthwiseConv2D = 4;

int64_t bytes(const Tensor& t) { return t.byte_size ? *t.byte_size : -1; }

// The liveness's activation set: tensors that get a buffer.
// Tensors with arena bytes: not constants, not unused, not left in the caller's arrays.
std::vector<bool> active_tensors(const Graph& graph, const liveness::LivenessOptions& options) {
  std::vector<bool> io(graph.tensors.size(), false), active(graph.tensors.size(), false);
  for (int32_t t : graph.inputs) io[t] = true;
  for (int32_t t : graph.outputs) io[t] = true;
  for (const Tensor& t : graph.tensors)
    active[t.index] = !t.is_constant() && (t.producer >= 0 || !t.consumers.empty() || io[t.index] || t.is_variable);
  if (options.caller_float_io)
    for (int32_t t : liveness::caller_float_io_tensors(graph)) active[t] = false;
  return active;
}

// The view op `op` joins its output to input 0 (both active).
bool joins_view(const Op& op, const std::vector<bool>& active) {
  return graph::is_view_op(op.opcode) && !op.outputs.empty() && op.outputs[0] >= 0 && active[op.outputs[0]] &&
         !op.inputs.empty() && op.inputs[0] >= 0 && active[op.inputs[0]];
}

// Outputs that share memory another op wrote: a view's, an elided op's.
std::vector<bool> joined_tensors(const Graph& graph, const std::vector<bool>& active) {
  std::vector<bool> joined(graph.tensors.size(), false);
  for (const Op& op : graph.ops) {
    if (op.elided) {
      for (int32_t t : op.outputs)
        if (t >= 0) joined[t] = true;
    } else if (joins_view(op, active)) {
      joined[op.outputs[0]] = true;
    }
  }
  return joined;
}

// Tensors the liveness may let `op` overwrite, in its order of preference,
// before the "dies here" test (never in or into a group holding placements).
std::vector<int32_t> inplace_inputs(const Graph& graph, const Op& op, const liveness::LivenessOptions& options,
                                    const std::vector<bool>& active, graph::StorageGroups& storage) {
  const Tensor* out = graph.output(op, 0);
  if (!out || !active[out->index] || graph::is_view_op(op.opcode) || op.elided || storage.placed(out->index))
    return {};
  if (op.opcode == kDepthwiseConv2D) {
    const Tensor* in = graph.input(op, 0);
    if (!options.inplace_depthwise || !in || !active[in->index] || storage.placed(in->index) ||
        op.options.depth_multiplier != 1 || in->shape.size() != 4 || in->shape[0] != 1 || bytes(*out) > bytes(*in))
      return {};
    return {in->index};
  }
  if (liveness::is_inplace_conversion(graph, op)) {  // int8 output over the float input's first quarter
    const int32_t in = op.inputs[0];
    return options.inplace_elementwise && active[in] && !storage.placed(in) ? std::vector<int32_t>{in}
                                                                             : std::vector<int32_t>{};
  }
  if (!liveness::is_inplace_elementwise_op(op.opcode) || !options.inplace_elementwise || op.outputs.size() != 1)
    return {};
  std::vector<int32_t> candidates;
  for (int32_t t : op.inputs)
    if (t >= 0 && active[t] && !storage.placed(t) && bytes(graph.tensors[t]) == bytes(*out)) candidates.push_back(t);
  return candidates;
}

void sort_unique(std::vector<int32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

int64_t size_of(const MemoryModel& model, const std::vector<Inflation>& inflated, int32_t c) {
  for (const Inflation& i : inflated)
    if (i.component == c) return i.size;
  return model.components[c].size;
}

// Component `c` is read for the last time by `op` (all its other readers ran).
bool dies_at(const MemoryModel& model, const uint64_t* done, int32_t c, int32_t op) {
  const Component& comp = model.components[c];
  if (comp.pinned) return false;
  for (int32_t reader : comp.consumers)
    if (reader != op && !has_op(done, reader)) return false;
  return true;
}

// The buffer of `comp` exists before `op` runs: a source, or another writer ran.
bool born_before(const Component& comp, const uint64_t* done, int32_t op) {
  if (comp.source) return true;
  for (int32_t w : comp.writers)
    if (w != op && has_op(done, w)) return true;
  return false;
}

bool is_empty(const MemoryModel& model, const uint64_t* done) {
  return std::all_of(done, done + model.words, [](uint64_t w) { return w == 0; });
}

}  // namespace

MemoryModel build_memory_model(const Graph& graph, const liveness::LivenessOptions& options, int64_t alignment) {
  MemoryModel model;
  model.ops = static_cast<int32_t>(graph.ops.size());
  model.words = (model.ops + 63) / 64;
  const std::vector<bool> active = active_tensors(graph, options);
  std::vector<int64_t> sizes(graph.tensors.size(), 0);
  for (const Tensor& t : graph.tensors)
    if (active[t.index]) sizes[t.index] = std::max<int64_t>(bytes(t), 0);
  graph::StorageGroups storage(sizes);
  graph::join_fixed_storage(graph, active, storage);
  const std::vector<bool> joined = joined_tensors(graph, active);
  for (const Op& op : graph.ops)
    if (joins_view(op, active) && bytes(graph.tensors[op.outputs[0]]) > bytes(graph.tensors[op.inputs[0]]))
      model.exact = false;

  std::vector<bool> pinned(graph.tensors.size(), false);
  for (int32_t t : graph.outputs) pinned[t] = true;
  std::vector<int32_t> comp_of(graph.tensors.size(), -1), comp_of_root(graph.tensors.size(), -1);
  for (const Tensor& t : graph.tensors) {
    if (!active[t.index]) continue;
    const int32_t r = storage.root(t.index);
    int32_t& c = comp_of_root[r];
    if (c < 0) {
      c = static_cast<int32_t>(model.components.size());
      model.components.emplace_back();
      model.components[c].size = allocation::align_up(storage.end(r) - storage.begin(r), alignment);
    }
    comp_of[t.index] = c;
    Component& comp = model.components[c];
    // State the code resets at its one reader is written, in effect, by that reader.
    const bool reset_state = op_params::state_reset_by_reader(graph, t);
    comp.pinned = comp.pinned || pinned[t.index] || (t.is_variable && !reset_state);
    comp.source = comp.source || (!joined[t.index] && t.producer < 0 && !reset_state);
    comp.consumers.insert(comp.consumers.end(), t.consumers.begin(), t.consumers.end());
    if (!joined[t.index] && t.producer >= 0) comp.writers.push_back(t.producer);
    if (reset_state) comp.writers.push_back(t.consumers[0]);
  }
  for (Component& comp : model.components) sort_unique(comp.writers);
  for (Component& comp : model.components) sort_unique(comp.consumers);

  model.op.resize(graph.ops.size());
  for (const Op& op : graph.ops) {
    OpInfo& info = model.op[op.index];
    for (int32_t t : op.inputs) {
      if (t < 0) continue;
      if (graph.tensors[t].producer >= 0) info.preds.push_back(graph.tensors[t].producer);
      if (active[t]) info.uses.push_back(comp_of[t]);
    }
    sort_unique(info.preds);
    sort_unique(info.uses);
    for (int32_t t : op.outputs)
      if (t >= 0 && active[t] && !joined[t]) info.births.push_back(comp_of[t]);
    sort_unique(info.births);
    for (int32_t t : inplace_inputs(graph, op, options, active, storage)) info.victims.push_back(comp_of[t]);
    if (!info.victims.empty()) info.out = comp_of[op.outputs[0]];
    if (!options.scratch) continue;
    info.scratch = allocation::align_up(op_params::scratch_bytes(graph, op, false), alignment);
    // The kernel library's in-place variant serves depthwise only; elementwise ops keep their kernel.
    info.inplace_scratch = op.opcode == kDepthwiseConv2D
                               ? allocation::align_up(op_params::scratch_bytes(graph, op, true), alignment)
                               : info.scratch;
  }
  for (const Component& comp : model.components) {
    if (!comp.source) continue;
    model.start_bytes += comp.size;
    if (!comp.pinned && comp.consumers.empty()) model.first_step_only += comp.size;
  }
  return model;
}

MemoryState initial_state(const MemoryModel& model) {
  MemoryState state;
  state.done.assign(model.words, 0);
  state.bytes = model.start_bytes;
  return state;
}

bool is_ready(const MemoryModel& model, const uint64_t* done, int32_t op) {
  if (has_op(done, op)) return false;
  for (int32_t p : model.op[op].preds)
    if (!has_op(done, p)) return false;
  return true;
}

int64_t run_op(const MemoryModel& model, const uint64_t* done, const std::vector<Inflation>& inflated,
               int64_t bytes, int32_t op, MemoryState& after) {
  const OpInfo& info = model.op[op];
  int32_t victim = -1;
  for (int32_t c : info.victims)
    if (dies_at(model, done, c, op)) {
      victim = c;
      break;
    }
  int64_t step = bytes + (victim >= 0 ? info.inplace_scratch : info.scratch);
  int64_t left = model.first_step_only && is_empty(model, done) ? bytes - model.first_step_only : bytes;
  after.inflated.clear();
  // Readers' buffers that die here leave; the others stay as they are.
  for (const Inflation& i : inflated)
    if (!(std::binary_search(info.uses.begin(), info.uses.end(), i.component) && dies_at(model, done, i.component, op)))
      after.inflated.push_back(i);
  for (int32_t c : info.uses)
    if (dies_at(model, done, c, op)) left -= size_of(model, inflated, c);
  // New buffers; an in-place output takes over its victim's buffer (and size).
  for (int32_t c : info.births) {
    const Component& comp = model.components[c];
    if (born_before(comp, done, op)) continue;  // another slice's writer made the buffer
    int64_t size = comp.size;
    if (c == info.out && victim >= 0) {
      const int64_t victim_size = size_of(model, inflated, victim);
      size = std::max(size, victim_size);
      step += size - victim_size;
    } else {
      step += size;
    }
    if (!comp.pinned && comp.consumers.empty()) continue;
    left += size;
    if (size > comp.size) after.inflated.push_back({c, size});
  }
  std::sort(after.inflated.begin(), after.inflated.end(),
            [](const Inflation& a, const Inflation& b) { return a.component < b.component; });
  after.bytes = left;
  return step;
}

int64_t model_peak(const MemoryModel& model, const std::vector<int32_t>& order) {
  MemoryState state = initial_state(model), next;
  int64_t peak = order.empty() ? state.bytes : 0;
  for (int32_t op : order) {
    peak = std::max(peak, run_op(model, state.done.data(), state.inflated, state.bytes, op, next));
    add_op(state.done.data(), op);
    state.inflated.swap(next.inflated);
    state.bytes = next.bytes;
  }
  return peak;
}

}  // namespace tinyarena::schedule
