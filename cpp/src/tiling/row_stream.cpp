#include "tinyarena/tiling/row_stream.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <stdexcept>
#include <string>

#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena/liveness/liveness.h"
#include "tinyarena/tiling/patches.h"

namespace tinyarena::tiling {
namespace {

using graph::Graph;
using graph::Op;

std::string label(const Op& op) { return "op " + std::to_string(op.index) + " (" + op.type + ")"; }

int32_t rows_of(const graph::Tensor& t) { return image_rows(t); }  // a reduction's result: 1

// The pull-driven simulation: a tensor's rows are produced when a consumer
// needs them, its ring shifted when it would overflow.
class Streamer {
 public:
  Streamer(const Graph& graph, const GraphFacts& facts, const std::vector<int32_t>& ops, const StreamOptions& options)
      : graph_(graph), facts_(facts), options_(options), in_segment_(graph.ops.size(), false),
        ring_(graph.tensors.size(), -1), produced_(graph.tensors.size(), 0), streamed_(graph.tensors.size(), false),
        last_rows_(graph.ops.size(), 0), position_(graph.ops.size(), -1), summed_(graph.ops.size(), 0) {
    if (ops.empty()) throw std::invalid_argument("a row-streamed segment needs at least one op");
    if (options.stripe_rows < 1) throw std::invalid_argument("stripe rows must be at least 1");
    result_.ops = ops;
    result_.op_macs.assign(ops.size(), 0);
    result_.op_scratch.assign(ops.size(), 0);
    result_.op_state.assign(ops.size(), 0);
    for (int32_t index : ops) {
      if (index < 0 || index >= static_cast<int32_t>(graph.ops.size()))
        throw std::invalid_argument("op " + std::to_string(index) + " does not exist");
      const Op& op = graph.ops[index];
      if (!facts.op(index).tileable) throw std::invalid_argument(label(op) + " cannot be row-streamed");
      if (in_segment_[index]) throw std::invalid_argument(label(op) + " is listed twice");
      in_segment_[index] = true;
    }
    for (size_t i = 0; i < ops.size(); ++i) position_[ops[i]] = static_cast<int32_t>(i);
    classify_tensors();
  }

  RowStream run() {
    bool pending = true;
    while (pending) {
      pending = false;
      for (int32_t t : result_.full_outputs) {
        const int32_t end = std::min(produced_[t] + options_.stripe_rows, rows_of(graph_.tensors[t]));
        ensure(t, end);
        pending = pending || produced_[t] < rows_of(graph_.tensors[t]);
      }
    }
    insert_shifts();
    for (size_t o = 0; o < overwrite_outputs_.size(); ++o)
      for (size_t r = 0; r < overwrite_inputs_.size(); ++r)
        if (overwrite_ok_[o * overwrite_inputs_.size() + r])
          result_.overwrites.push_back({overwrite_outputs_[o], overwrite_inputs_[r]});
    return std::move(result_);
  }

 private:
  struct Write {  // a production into a ring and the first row still needed then
    size_t step;
    int32_t ring, need_first, end;
  };

  bool is_graph_output(int32_t t) const {
    return std::find(graph_.outputs.begin(), graph_.outputs.end(), t) != graph_.outputs.end();
  }
  bool is_graph_input(int32_t t) const {
    return std::find(graph_.inputs.begin(), graph_.inputs.end(), t) != graph_.inputs.end();
  }
  bool read_only_inside(const graph::Tensor& t) const {
    return !t.consumers.empty() && std::all_of(t.consumers.begin(), t.consumers.end(),
                                               [&](int32_t c) { return in_segment_[c]; });
  }

  void add_ring(int32_t t) {
    ring_[t] = static_cast<int32_t>(result_.rings.size());
    result_.rings.push_back({t, 0, image_row_bytes(graph_.tensors[t])});
  }

  bool streamable_input(const graph::Tensor& t) const {
    return options_.stream_input && is_graph_input(t.index) && !is_graph_output(t.index) && read_only_inside(t);
  }

  // A boundary op on a streamed model input -- a TRANSPOSE from NCHW to NHWC, a QUANTIZE of a float
  // input, or both chained -- runs no kernel: the ring of the chain's last output is loaded from the
  // input (Ring::source). False for a QUANTIZE that streams as an ordinary op.
  bool boundary_load(const Op& op) {
    const bool transpose = facts_.op(op.index).input_transpose;
    if (!transpose && !(op.opcode == op_params::opcode::kQuantize && facts_.op(op.index).float_conversion)) return false;
    const graph::Tensor& in = graph_.tensors[op.inputs[0]];
    const int32_t out = op.outputs[0];
    const int32_t chained = ring_[in.index] >= 0 && result_.rings[ring_[in.index]].source >= 0 &&
                                    in.consumers.size() == 1 && !is_graph_output(in.index)
                                ? ring_[in.index]
                                : -1;
    if ((chained < 0 && !streamable_input(in)) || is_graph_output(out) || !read_only_inside(graph_.tensors[out])) {
      if (transpose) throw std::invalid_argument(label(op) + " streams only as the load of a streamed model input");
      return false;
    }
    streamed_[out] = true;
    if (chained < 0) {
      add_ring(out);
      result_.rings.back().source = in.index;
      return true;
    }
    streamed_[in.index] = false;  // the chain's ring now holds this op's output
    ring_[in.index] = -1;
    ring_[out] = chained;
    result_.rings[chained].tensor = out;
    result_.rings[chained].row_bytes = image_row_bytes(graph_.tensors[out]);
    return true;
  }

  void classify_tensors() {
    std::vector<bool> seen(graph_.tensors.size(), false);
    for (int32_t index : result_.ops) {
      const Op& op = graph_.ops[index];
      if (boundary_load(op)) continue;
      for (int32_t t : op.inputs) {
        if (t < 0 || seen[t] || graph_.tensors[t].is_constant()) continue;
        seen[t] = true;
        const graph::Tensor& tensor = graph_.tensors[t];
        if (tensor.producer >= 0 && in_segment_[tensor.producer]) continue;
        if (streamable_input(tensor)) {
          streamed_[t] = true;
          add_ring(t);
        } else {
          result_.full_inputs.push_back(t);
        }
      }
      for (int32_t t : op.outputs) {
        seen[t] = true;
        const graph::Tensor& tensor = graph_.tensors[t];
        if (!is_graph_output(t) && read_only_inside(tensor)) add_ring(t);
        else result_.full_outputs.push_back(t);
      }
    }
    for (int32_t index : result_.ops)
      for (int32_t t : graph_.ops[index].inputs)
        if (t >= 0 && graph_.tensors[t].producer >= 0 && in_segment_[graph_.tensors[t].producer] &&
            position_[graph_.tensors[t].producer] > position_[index])
          throw std::invalid_argument(label(graph_.ops[index]) + " reads a tensor the segment produces after it");
    // Overwrite candidates: whole outputs, and the tensors the segment reads (whether a reader
    // outside it runs later is the plan's question: see segment_overwrites).
    for (int32_t t : result_.full_outputs)
      if (!is_graph_output(t) && graph_.tensors[t].byte_size) overwrite_outputs_.push_back(t);
    std::vector<bool> candidate(graph_.tensors.size(), false);
    for (int32_t index : result_.ops)
      for (int32_t t : graph_.ops[index].inputs) {
        if (t < 0 || candidate[t]) continue;
        const graph::Tensor& tensor = graph_.tensors[t];
        candidate[t] = !tensor.is_constant() && !is_graph_input(t) && !is_graph_output(t) && !streamed_[t] &&
                       tensor.byte_size;
        if (candidate[t]) overwrite_inputs_.push_back(t);
      }
    overwrite_ok_.assign(overwrite_outputs_.size() * overwrite_inputs_.size(), true);
  }

  // An elementwise op writing `out` may write the elements of input `t` it reads (same shape and type).
  bool writes_in_place(const Op& op, int32_t t) const {
    const graph::Tensor &in = graph_.tensors[t], &out = graph_.tensors[op.outputs[0]];
    return liveness::is_inplace_elementwise_op(op.opcode) && in.shape == out.shape && in.dtype == out.dtype &&
           std::find(op.inputs.begin(), op.inputs.end(), t) != op.inputs.end();
  }

  // Rows `rows` of whole output `tensor` are about to be written by `op` (produced_ not yet
  // advanced): the pairs whose input bytes they reach while still needed are struck out.
  void check_overwrites(int32_t tensor, Range rows, int32_t op) {
    const auto o = std::find(overwrite_outputs_.begin(), overwrite_outputs_.end(), tensor) - overwrite_outputs_.begin();
    if (o == static_cast<std::ptrdiff_t>(overwrite_outputs_.size())) return;
    const int64_t written_end = int64_t{rows.end} * image_row_bytes(graph_.tensors[tensor]);
    for (size_t r = 0; r < overwrite_inputs_.size(); ++r) {
      const size_t k = static_cast<size_t>(o) * overwrite_inputs_.size() + r;
      const int32_t t = overwrite_inputs_[r];
      if (!overwrite_ok_[k] || t == tensor) continue;
      int32_t first = first_needed(t);  // rows this write must not reach: those still to be read
      if (op >= 0 && writes_in_place(graph_.ops[op], t)) {  // except the ones this very call reads
        const int32_t before = produced_[tensor];
        produced_[tensor] = rows.end;
        first = first_needed(t);
        produced_[tensor] = before;
      }
      if (first != std::numeric_limits<int32_t>::max() &&
          written_end > int64_t{first} * image_row_bytes(graph_.tensors[t]))
        overwrite_ok_[k] = false;
    }
  }

  // The first row of `t` any consumer in the segment still needs (its rows below can go).
  int32_t first_needed(int32_t t) const {
    int32_t first = std::numeric_limits<int32_t>::max();
    for (int32_t c : graph_.tensors[t].consumers) {
      if (!in_segment_[c]) continue;
      const Op& op = graph_.ops[c];
      const int32_t out = op.outputs[0];
      const int32_t height = rows_of(graph_.tensors[out]);
      if (produced_[out] >= height) continue;
      if (facts_.op(c).reduces_rows) {  // it has summed the rows below summed_
        first = std::min(first, summed_[c]);
        continue;
      }
      for (size_t position = 0; position < op.inputs.size(); ++position) {
        if (op.inputs[position] != t) continue;
        const Range need = map_range(facts_.op(c).rows[position], {produced_[out], height});
        if (!need.empty()) first = std::min(first, need.begin);
      }
    }
    return first;
  }

  void record(StepKind kind, int32_t target, int32_t tensor, Range rows) {
    if (options_.record_steps) result_.steps.push_back({kind, target, rows.begin, rows.end});
    if (kind == StepKind::Run) check_overwrites(tensor, rows, target);
    wrote(tensor, rows);
  }

  // Rows `rows` of `tensor` are written by the last recorded step.
  void wrote(int32_t tensor, Range rows) {
    if (ring_[tensor] >= 0) {
      const int32_t need = std::min(first_needed(tensor), rows.begin);
      Ring& ring = result_.rings[ring_[tensor]];
      ring.rows = std::max(ring.rows, rows.end - need);  // the capacity: the most rows held at once
      if (options_.record_steps) writes_.push_back({result_.steps.size() - 1, ring_[tensor], need, rows.end});
    }
    produced_[tensor] = rows.end;
  }

  // Produces rows of `t` up to `end`, at most stripe_rows per call, each
  // call pulling just the input rows it reads (so rings stay short).
  void ensure(int32_t t, int32_t end) {
    while (produced_[t] < end) produce(t, {produced_[t], std::min(end, produced_[t] + options_.stripe_rows)});
  }

  void produce(int32_t t, Range rows) {
    if (streamed_[t]) {
      record(StepKind::Load, ring_[t], t, rows);
      return;
    }
    const Op& op = graph_.ops[graph_.tensors[t].producer];
    if (facts_.op(op.index).reduces_rows) {
      reduce(op, t);
      return;
    }
    for (size_t position = 0; position < op.inputs.size(); ++position) {
      const int32_t u = op.inputs[position];
      if (u < 0 || graph_.tensors[u].is_constant()) continue;
      const bool inside = streamed_[u] || (graph_.tensors[u].producer >= 0 && in_segment_[graph_.tensors[u].producer]);
      const Range need = map_range(facts_.op(op.index).rows[position], rows);
      if (inside && !need.empty()) ensure(u, need.end);
    }
    record(StepKind::Run, op.index, t, rows);
    const OpFacts& f = facts_.op(op.index);
    const int64_t macs = f.macs_per_pixel * rows.size() * graph_.tensors[t].shape[2];
    result_.macs += macs;
    result_.op_macs[position_[op.index]] += macs;
    if (rows.size() != last_rows_[op.index]) {  // scratch depends on the rows per call only
      last_rows_[op.index] = rows.size();
      int64_t& scratch = result_.op_scratch[position_[op.index]];
      scratch = std::max(scratch, f.scratch.bytes(rows.size()));
      result_.scratch_bytes = std::max(result_.scratch_bytes, scratch);
    }
  }

  // A row reduction: one Run step per stripe of input rows [begin, end) (summed as they
  // come); the step with end == the input height also writes the one output row.
  void reduce(const Op& op, int32_t t) {
    const int32_t u = op.inputs[0];
    const int32_t height = rows_of(graph_.tensors[u]);
    const bool inside = streamed_[u] || (graph_.tensors[u].producer >= 0 && in_segment_[graph_.tensors[u].producer]);
    while (summed_[op.index] < height) {
      const Range rows{summed_[op.index], std::min(height, summed_[op.index] + options_.stripe_rows)};
      if (inside) ensure(u, rows.end);
      summed_[op.index] = rows.end;
      if (options_.record_steps) result_.steps.push_back({StepKind::Run, op.index, rows.begin, rows.end});
    }
    check_overwrites(t, {0, 1}, op.index);
    wrote(t, {0, 1});
    const size_t i = static_cast<size_t>(position_[op.index]);
    result_.op_macs[i] = facts_.op(op.index).macs_per_pixel;
    result_.macs += result_.op_macs[i];
    result_.op_state[i] = facts_.op(op.index).state_bytes;
  }

  // A Shift before each write that would overflow its ring.
  void insert_shifts() {
    std::vector<int32_t> first_row(result_.rings.size(), 0);
    std::vector<StreamStep> steps;
    size_t next = 0;
    for (size_t s = 0; s < result_.steps.size(); ++s) {
      for (; next < writes_.size() && writes_[next].step == s; ++next) {
        const Write& w = writes_[next];
        if (w.end - first_row[w.ring] <= result_.rings[w.ring].rows) continue;
        steps.push_back({StepKind::Shift, w.ring, w.need_first, w.need_first});
        first_row[w.ring] = w.need_first;
      }
      steps.push_back(result_.steps[s]);
    }
    result_.steps = std::move(steps);
  }

  const Graph& graph_;
  const GraphFacts& facts_;
  StreamOptions options_;
  std::vector<bool> in_segment_;
  std::vector<int32_t> ring_, produced_;
  std::vector<bool> streamed_;
  std::vector<Write> writes_;
  std::vector<int32_t> last_rows_;  // per op: rows of its last call
  std::vector<int32_t> position_;   // per op: its position in the segment, -1 outside
  std::vector<int32_t> summed_;     // per row reduction: input rows summed so far
  std::vector<int32_t> overwrite_outputs_, overwrite_inputs_;  // the candidates of RowStream::overwrites
  std::vector<bool> overwrite_ok_;  // per (output, input) pair: no write has reached a needed byte
  RowStream result_;
};

}  // namespace

const char* step_kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::Run: return "run";
    case StepKind::Load: return "load";
    case StepKind::Shift: return "shift";
  }
  return "?";
}

int64_t RowStream::ring_bytes() const {
  int64_t total = 0;
  for (const Ring& r : rings) total += r.bytes();
  return total;
}

int32_t RowStream::ring_of(int32_t tensor) const {
  for (size_t i = 0; i < rings.size(); ++i)
    if (rings[i].tensor == tensor) return static_cast<int32_t>(i);
  return -1;
}

std::vector<int32_t> load_ops(const Graph& graph, const Ring& ring) {
  std::vector<int32_t> ops;
  for (int32_t t = ring.source; ring.source >= 0 && t != ring.tensor; t = graph.ops[ops.back()].outputs[0])
    ops.push_back(graph.tensors[t].consumers.at(0));
  return ops;
}

std::vector<int32_t> load_tensors(const Graph& graph, const Ring& ring) {
  std::vector<int32_t> tensors = {ring.tensor};
  if (ring.source < 0) return tensors;
  tensors = {ring.source};
  for (int32_t op : load_ops(graph, ring)) tensors.push_back(graph.ops[op].outputs[0]);
  std::sort(tensors.begin(), tensors.end());
  return tensors;
}

int32_t ColumnSplit::entry(int32_t tensor) const {
  const auto it = std::lower_bound(by_tensor.begin(), by_tensor.end(), std::make_pair(tensor, INT32_MIN));
  return it != by_tensor.end() && it->first == tensor ? it->second : -1;
}

int64_t ColumnSplit::row_bytes(const Graph& graph, int32_t tensor) const {
  const graph::Tensor& t = graph.tensors[tensor];
  const int32_t i = entry(tensor);
  if (i < 0 || t.shape.size() != 4 || t.shape[2] == 0) return image_row_bytes(t);
  return image_row_bytes(t) / t.shape[2] * widest[i];
}

int64_t ColumnSplit::macs(const Graph& graph, int32_t op, int64_t whole_row_macs) const {
  const int32_t out = graph.ops[op].outputs[0];
  const graph::Tensor& t = graph.tensors[out];
  const int32_t i = entry(out);
  if (i < 0 || t.shape.size() != 4 || t.shape[2] == 0) return whole_row_macs;
  return whole_row_macs / t.shape[2] * total[i];  // whole-row MACs are a multiple of the width
}

int64_t ColumnSplit::scratch(const Graph& graph, const GraphFacts& facts, int32_t op, int32_t stripe_rows,
                             int64_t whole_row_scratch) const {
  const int32_t i = entry(graph.ops[op].outputs[0]);
  if (i < 0 || whole_row_scratch == 0) return whole_row_scratch;
  int64_t bytes = 0;
  for (int32_t strip = 0; strip < strips; ++strip) {
    const int32_t* cols = &columns[(static_cast<size_t>(strip) * tensors.size() + i) * 2];
    for (int32_t rows = 1; rows <= stripe_rows && cols[1] > cols[0]; ++rows)
      bytes = std::max(bytes, facts.op(op).scratch.bytes(rows, cols[1] - cols[0]));
  }
  return bytes;
}

std::vector<int32_t> loaded_ops(const Graph& graph, const RowStream& stream) {
  std::vector<int32_t> ops;
  for (const Ring& ring : stream.rings)
    for (int32_t op : load_ops(graph, ring)) ops.push_back(op);
  std::sort(ops.begin(), ops.end());
  return ops;
}

ColumnSplit split_columns(const Graph& graph, const GraphFacts& facts, const std::vector<int32_t>& ops,
                          int32_t strips, bool stream_input, const std::vector<int32_t>& load_ops) {
  std::vector<int32_t> computed;  // the ops that run kernels
  for (int32_t op : ops)
    if (!std::binary_search(load_ops.begin(), load_ops.end(), op)) computed.push_back(op);
  const PatchRun run = run_patches(graph, facts, computed, 1, strips, stream_input, true);
  ColumnSplit split;
  split.strips = strips;
  split.tensors = run.tensors;
  const size_t count = run.tensors.size();
  split.widest.assign(count, 0);
  split.total.assign(count, 0);
  for (size_t strip = 0; strip < static_cast<size_t>(strips); ++strip)
    for (size_t i = 0; i < count; ++i) {
      const int32_t* region = &run.regions[(strip * count + i) * 4];
      split.columns.insert(split.columns.end(), {region[2], region[3]});
      split.widest[i] = std::max(split.widest[i], region[3] - region[2]);
      split.total[i] += region[3] - region[2];
    }
  for (size_t i = 0; i < count; ++i) split.by_tensor.emplace_back(split.tensors[i], static_cast<int32_t>(i));
  std::sort(split.by_tensor.begin(), split.by_tensor.end());
  return split;
}

RowStream stream_rows(const Graph& graph, const std::vector<int32_t>& ops, const StreamOptions& options) {
  return stream_rows(graph, GraphFacts(graph), ops, options);
}

RowStream stream_rows(const Graph& graph, const GraphFacts& facts, const std::vector<int32_t>& ops,
                      const StreamOptions& options) {
  if (options.column_strips < 1) throw std::invalid_argument("column strips must be at least 1");
  RowStream stream = Streamer(graph, facts, ops, options).run();
  if (options.column_strips == 1) return stream;
  const ColumnSplit split =
      split_columns(graph, facts, ops, options.column_strips, options.stream_input, loaded_ops(graph, stream));
  stream.overwrites.clear();  // the next strip reads every input again
  stream.column_strips = split.strips;
  stream.strip_tensors = split.tensors;
  stream.strip_columns = split.columns;
  for (Ring& ring : stream.rings) ring.row_bytes = split.row_bytes(graph, ring.tensor);
  stream.macs = 0;
  stream.scratch_bytes = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    stream.op_macs[i] = split.macs(graph, ops[i], stream.op_macs[i]);
    stream.macs += stream.op_macs[i];
    stream.op_scratch[i] = split.scratch(graph, facts, ops[i], options.stripe_rows, stream.op_scratch[i]);
    stream.scratch_bytes = std::max(stream.scratch_bytes, stream.op_scratch[i]);
  }
  return stream;
}

}  // namespace tinyarena::tiling
