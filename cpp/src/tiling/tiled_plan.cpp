#include "tinyarena/tiling/tiled_plan.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <stdexcept>
#include <string>

#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/graph/op_metrics.h"
#include "tinyarena/op_params/cost_model.h"
#include "tinyarena/op_params/targets.h"
#include "tinyarena/liveness/problem.h"

namespace tinyarena::tiling {
namespace {

using liveness::BufferKind;
using liveness::LiveBuffer;
using liveness::Liveness;

// What a segment changes in the untiled liveness: the tensors it keeps in
// its own buffers (rings or per-patch regions), the whole tensors it reads
// or writes for its entire span, its own buffers, and the outputs it writes
// over a dying input.
struct SegmentBuffers {
  int32_t first_step = 0, last_step = 0;
  std::vector<int32_t> full_inputs, full_outputs;
  std::vector<LiveBuffer> own;  // lifetimes filled in; `tensors` set for activation buffers
  std::vector<Overwrite> overwrites;
};

std::string tensor_label(const graph::Graph& graph, int32_t t) {
  const std::string& name = graph.tensors[t].name;
  return name.empty() ? "tensor " + std::to_string(t) : name;
}

LiveBuffer own_buffer(std::string name, BufferKind kind, int64_t size, int32_t first, int32_t last,
                      std::vector<int32_t> tensors, int32_t op) {
  LiveBuffer b;
  b.name = std::move(name);
  b.kind = kind;
  b.size = size;
  b.first = first;
  b.last = last;
  b.tensors = std::move(tensors);
  b.op = op;
  return b;
}

// Kernel scratch is planned only when the liveness plans it (`scratch`), as for untiled ops.
SegmentBuffers stream_buffers(const graph::Graph& graph, const RowStream& stream, int32_t s0, int32_t s1, bool scratch) {
  SegmentBuffers sb{s0, s1, stream.full_inputs, stream.full_outputs, {}, {}};
  for (const Ring& ring : stream.rings)  // a loaded input and its boundary ops' outputs live in the ring only
    sb.own.push_back(own_buffer(tensor_label(graph, ring.tensor) + " [ring " + std::to_string(ring.rows) + " rows]",
                                BufferKind::Activation, ring.bytes(), s0, s1, load_tensors(graph, ring), -1));
  for (size_t i = 0; i < stream.ops.size(); ++i)  // state kept across calls: activation bytes, not kernel scratch
    if (stream.op_state[i] > 0)
      sb.own.push_back(own_buffer("sums@" + std::to_string(stream.ops[i]) + " " + graph.ops[stream.ops[i]].type +
                                      " row stream",
                                  BufferKind::Activation, stream.op_state[i], s0, s1, {}, stream.ops[i]));
  if (scratch && stream.scratch_bytes > 0)
    sb.own.push_back(own_buffer("scratch@" + std::to_string(stream.ops.front()) + " row stream", BufferKind::Scratch,
                                stream.scratch_bytes, s0, s1, {}, stream.ops.front()));
  return sb;
}

// `buffer` moved into `into` from byte `offset` on: one buffer holding both.
void merge_into(LiveBuffer& into, const LiveBuffer& buffer, int64_t offset, std::vector<int64_t>& tensor_offset) {
  for (int32_t t : buffer.tensors) tensor_offset[t] += offset;
  into.tensors.insert(into.tensors.end(), buffer.tensors.begin(), buffer.tensors.end());
  std::sort(into.tensors.begin(), into.tensors.end());
  into.first = std::min(into.first, buffer.first);
  into.last = std::max(into.last, buffer.last);
  into.size = std::max(into.size, offset + buffer.size);
}

// Per-patch buffers live from their producer's step to their last reader's
// step inside the segment (every patch runs the segment's ops in order).
SegmentBuffers patch_buffers(const graph::Graph& graph, const PatchRun& run, const std::vector<int32_t>& step_of,
                             int32_t s0, int32_t s1, bool scratch) {
  SegmentBuffers sb{s0, s1, run.full_inputs, {run.full_output}, {}, {}};
  for (const PatchBuffer& pb : run.buffers) {
    const graph::Tensor& t = graph.tensors[pb.tensor];
    const int32_t first = t.producer >= 0 ? step_of[t.producer] : s0;
    int32_t last = first;
    for (int32_t c : t.consumers) last = std::max(last, step_of[c]);
    sb.own.push_back(own_buffer(tensor_label(graph, pb.tensor) + " [patch " + std::to_string(pb.rows) + "x" +
                                    std::to_string(pb.cols) + "]",
                                BufferKind::Activation, pb.bytes, first, last, {pb.tensor}, -1));
  }
  for (size_t i = 0; i < run.ops.size(); ++i)
    if (scratch && run.op_scratch[i] > 0) {
      const graph::Op& op = graph.ops[run.ops[i]];
      sb.own.push_back(own_buffer("scratch@" + std::to_string(op.index) + " " + op.type + " patch", BufferKind::Scratch,
                                  run.op_scratch[i], step_of[op.index], step_of[op.index], {}, op.index));
    }
  return sb;
}

// The untiled liveness with each segment's tensors moved to its own buffers.
Liveness tiled_liveness(const graph::Graph& graph, const Liveness& base, const std::vector<SegmentBuffers>& segments,
                        const std::vector<int32_t>& segment_of_op) {
  std::vector<int32_t> own_tensor(graph.tensors.size(), -1);  // segment holding the tensor in its own buffer
  for (size_t s = 0; s < segments.size(); ++s)
    for (const LiveBuffer& b : segments[s].own)
      for (int32_t t : b.tensors) own_tensor[t] = static_cast<int32_t>(s);
  // Per tensor: the last step of a segment reading it whole, the first of one writing it whole.
  std::vector<int32_t> read_until(graph.tensors.size(), -1), written_from(graph.tensors.size(), INT32_MAX);
  for (const SegmentBuffers& sb : segments) {
    for (int32_t t : sb.full_inputs) read_until[t] = std::max(read_until[t], sb.last_step);
    for (int32_t t : sb.full_outputs) written_from[t] = std::min(written_from[t], sb.first_step);
  }
  Liveness result;
  result.order = base.order;
  for (int32_t t : base.caller_tensors)  // a streamed input is the segment's, pulled into its own buffer
    if (own_tensor[t] < 0) result.caller_tensors.push_back(t);
  for (int32_t op : base.inplace_ops)
    if (segment_of_op[op] < 0) result.inplace_ops.push_back(op);
  for (const LiveBuffer& buffer : base.buffers) {
    if (buffer.kind == BufferKind::Scratch && segment_of_op[buffer.op] >= 0) continue;
    const bool owned = !buffer.tensors.empty() && std::all_of(buffer.tensors.begin(), buffer.tensors.end(),
                                                              [&](int32_t t) { return own_tensor[t] >= 0; });
    if (owned) continue;
    LiveBuffer b = buffer;
    for (int32_t t : buffer.tensors) {
      b.last = std::max(b.last, read_until[t]);      // read during the whole segment
      b.first = std::min(b.first, written_from[t]);  // written from its start
    }
    result.buffers.push_back(b);
  }
  for (const SegmentBuffers& sb : segments) result.buffers.insert(result.buffers.end(), sb.own.begin(), sb.own.end());
  // Segment tensors are never placed: their own buffers start them.
  result.tensor_offset.assign(graph.tensors.size(), 0);
  for (size_t t = 0; t < graph.tensors.size(); ++t)
    if (own_tensor[t] < 0) result.tensor_offset[t] = base.tensor_offset[t];
  // Each overwrite moves the output's buffer into the input's; buffers are found through the
  // activation buffer holding each tensor, and the moved ones dropped together at the end.
  std::vector<int32_t> holder(graph.tensors.size(), -1);
  for (size_t b = result.buffers.size(); b-- > 0;)  // the first buffer holding a tensor
    if (result.buffers[b].kind == BufferKind::Activation)
      for (int32_t t : result.buffers[b].tensors) holder[t] = static_cast<int32_t>(b);
  std::vector<bool> moved_away(result.buffers.size(), false);
  for (const SegmentBuffers& sb : segments)
    for (const Overwrite& o : sb.overwrites) {
      const int32_t from = holder[o.output], into = holder[o.input];
      const LiveBuffer moved = result.buffers[from];
      moved_away[from] = true;
      merge_into(result.buffers[into], moved, result.tensor_offset[o.input], result.tensor_offset);
      for (int32_t t : moved.tensors) holder[t] = into;
    }
  size_t kept = 0;
  for (size_t b = 0; b < result.buffers.size(); ++b)
    if (!moved_away[b]) {
      if (kept != b) result.buffers[kept] = std::move(result.buffers[b]);
      ++kept;
    }
  result.buffers.resize(kept);
  result.tensor_buffer.assign(graph.tensors.size(), -1);
  for (size_t b = 0; b < result.buffers.size(); ++b)
    if (result.buffers[b].kind == BufferKind::Activation)
      for (int32_t t : result.buffers[b].tensors) result.tensor_buffer[t] = static_cast<int32_t>(b);
  return result;
}


// Predicted instructions of op `i` of segment `s`: its kernel calls (a row segment: its run
// steps, replayed per column strip; patches: one per patch) doing its tiled MACs.
int64_t segment_instructions(const graph::Graph& graph, const TiledPlan& tiled, size_t s, size_t i,
                             const std::string& target) {
  const Segment& seg = tiled.segments[s];
  const bool rows = seg.mode == Mode::Rows;
  const int32_t op = seg.ops[i];
  const double calls = rows ? stream_calls(tiled.streams[s], op, tiled.streams[s].column_strips)
                            : static_cast<double>(tiled.patch_runs[s].grid_h) * tiled.patch_runs[s].grid_w;
  const double width_share = 1.0 / std::max(1, rows ? tiled.streams[s].column_strips : tiled.patch_runs[s].grid_w);
  const int64_t macs = rows ? tiled.streams[s].op_macs[i] : tiled.patch_runs[s].op_macs[i];
  return segment_op_instructions(graph, op, calls, macs, width_share, op_params::target_build(target));
}

}  // namespace

double stream_calls(const RowStream& stream, int32_t op, int32_t column_strips) {
  double calls = 0;
  for (const StreamStep& step : stream.steps) calls += step.kind == StepKind::Run && step.target == op;
  return std::max(1.0, calls) * std::max(1, column_strips);
}

int64_t segment_op_instructions(const graph::Graph& graph, int32_t op, double calls, int64_t tiled_macs,
                                double width_share, op_params::Build build) {
  const int64_t untiled = graph::op_macs(graph, graph.ops[op]);
  const double work_scale = untiled > 0 ? static_cast<double>(tiled_macs) / untiled : 1.0;
  return op_params::predicted_instructions(graph, graph.ops[op], build, calls, work_scale, width_share);
}

Mode parse_mode(const std::string& name) {
  if (name == "rows") return Mode::Rows;
  if (name == "patches") return Mode::Patches;
  throw std::invalid_argument("mode must be 'rows' or 'patches', got '" + name + "'");
}

std::vector<Overwrite> segment_overwrites(const Liveness& base, const RowStream& stream, int32_t first, int32_t last,
                                          bool smaller_outputs, bool* took_smaller) {
  const auto buffer_of = [&](int32_t t) -> const LiveBuffer* {
    const int32_t b = base.tensor_buffer[t];
    return b < 0 ? nullptr : &base.buffers[b];
  };
  const auto dies_here = [&](int32_t t) {
    const LiveBuffer* b = buffer_of(t);
    return b && b->first < first && first <= b->last && b->last <= last;
  };
  const auto own_buffer = [&](int32_t t) {
    const LiveBuffer* b = buffer_of(t);
    return b && base.tensor_offset[t] == 0 && b->first >= first;  // starts with `t` (later ops may write over it)
  };
  // A smaller output would keep the input's larger buffer alive after the segment.
  const auto at_least_as_large = [&](const Overwrite& o) {
    return buffer_of(o.output)->size >= base.tensor_offset[o.input] + buffer_of(o.input)->size;
  };
  if (took_smaller) *took_smaller = false;
  std::vector<Overwrite> usable;
  for (const Overwrite& o : stream.overwrites)
    if (dies_here(o.input) && own_buffer(o.output) && (smaller_outputs || at_least_as_large(o))) usable.push_back(o);
  const auto saving = [&](const Overwrite& o) {
    return std::min(buffer_of(o.input)->size, buffer_of(o.output)->size);
  };
  std::stable_sort(usable.begin(), usable.end(),
                   [&](const Overwrite& a, const Overwrite& b) { return saving(a) > saving(b); });
  std::vector<Overwrite> chosen;
  std::vector<int32_t> used_outputs, used_buffers;  // each output and each input buffer in one pair
  const auto in = [](const std::vector<int32_t>& list, int32_t x) {
    return std::find(list.begin(), list.end(), x) != list.end();
  };
  for (const Overwrite& o : usable) {
    const int32_t input_buffer = base.tensor_buffer[o.input];
    if (in(used_outputs, o.output) || in(used_buffers, input_buffer)) continue;
    used_outputs.push_back(o.output);
    used_buffers.push_back(input_buffer);
    chosen.push_back(o);
    if (took_smaller && !at_least_as_large(o)) *took_smaller = true;
  }
  return chosen;
}

TiledPlan make_tiled_plan(const graph::Graph& graph, const std::vector<Segment>& segments, const TilingOptions& options) {
  TiledPlan tiled;
  tiled.segments = segments;
  std::vector<int32_t> segment_of_op(graph.ops.size(), -1);
  plan::PlanOptions plan_options = options.plan;
  for (size_t s = 0; s < segments.size(); ++s)
    for (int32_t op : segments[s].ops) {
      if (op < 0 || op >= static_cast<int32_t>(graph.ops.size()))
        throw std::invalid_argument("segment " + std::to_string(s) + " names op " + std::to_string(op) + ", which does not exist");
      if (segment_of_op[op] >= 0) throw std::invalid_argument("op " + std::to_string(op) + " is in two segments");
      segment_of_op[op] = static_cast<int32_t>(s);
      plan_options.liveness.not_inplace_ops.push_back(op);
    }
  const Liveness base = liveness::analyze_liveness(graph, plan_options.liveness, plan_options.order);
  std::vector<int32_t> step_of(graph.ops.size());
  for (size_t s = 0; s < base.order.size(); ++s) step_of[base.order[s]] = static_cast<int32_t>(s);

  std::optional<GraphFacts> graph_facts;  // built once, for the first segment
  const auto facts = [&]() -> const GraphFacts& {
    if (!graph_facts) graph_facts.emplace(graph);
    return *graph_facts;
  };
  std::vector<SegmentBuffers> buffers;
  std::vector<std::vector<Overwrite>> smaller_overwrites;  // per segment: with smaller outputs allowed
  bool any_smaller = false;  // they differ from the plain overwrites somewhere
  for (size_t s = 0; s < segments.size(); ++s) {
    const Segment& seg = segments[s];
    if (seg.ops.empty()) throw std::invalid_argument("segment " + std::to_string(s) + " has no ops");
    const int32_t s0 = step_of[seg.ops.front()], s1 = step_of[seg.ops.back()];
    for (size_t i = 0; i < seg.ops.size(); ++i)
      if (step_of[seg.ops[i]] != s0 + static_cast<int32_t>(i))
        throw std::invalid_argument("segment " + std::to_string(s) + " is not a run of consecutive ops of the schedule");
    if (seg.mode == Mode::Rows) {
      tiled.streams.push_back(stream_rows(graph, facts(), seg.ops, {seg.stripe_rows, options.stream_input, true, seg.column_strips}));
      tiled.patch_runs.emplace_back();
      buffers.push_back(stream_buffers(graph, tiled.streams.back(), s0, s1, plan_options.liveness.scratch));
      if (plan_options.liveness.inplace_elementwise) {
        bool took_smaller = false;
        smaller_overwrites.push_back(segment_overwrites(base, tiled.streams.back(), s0, s1, true, &took_smaller));
        buffers.back().overwrites = took_smaller ? segment_overwrites(base, tiled.streams.back(), s0, s1)
                                                 : smaller_overwrites.back();
        any_smaller = any_smaller || took_smaller;
      } else {
        smaller_overwrites.emplace_back();
      }
      tiled.macs += tiled.streams.back().macs;
    } else {
      tiled.patch_runs.push_back(
          run_patches(graph, facts(), seg.ops, seg.patches_h, seg.patches_w, options.stream_input, true));
      tiled.streams.emplace_back();
      buffers.push_back(patch_buffers(graph, tiled.patch_runs.back(), step_of, s0, s1, plan_options.liveness.scratch));
      smaller_overwrites.emplace_back();
      tiled.macs += tiled.patch_runs.back().macs;
    }
  }
  for (const graph::Op& op : graph.ops) {
    const int64_t macs = graph::op_macs(graph, op);
    tiled.untiled_macs += macs;
    if (segment_of_op[op.index] < 0) tiled.macs += macs;
  }
  tiled.plan = plan::plan_buffers(graph, plan_options, tiled_liveness(graph, base, buffers, segment_of_op));
  if (any_smaller) {  // planned only when its live bytes' bound is below the plan's peak
    for (size_t s = 0; s < segments.size(); ++s) buffers[s].overwrites = smaller_overwrites[s];
    Liveness live = tiled_liveness(graph, base, buffers, segment_of_op);
    const int64_t bound = allocation::lower_bound_bytes(liveness::make_problem(live, plan_options.alignment));
    if (bound < tiled.plan.peak_bytes) {
      plan::Plan smaller = plan::plan_buffers(graph, plan_options, std::move(live));
      if (smaller.peak_bytes < tiled.plan.peak_bytes) tiled.plan = std::move(smaller);
    }
  }
  tiled.plan.macs = tiled.macs;
  for (plan::OpReport& report : tiled.plan.ops) {  // what each segment op really computes
    const int32_t s = segment_of_op[report.index];
    if (s < 0) continue;
    const bool rows = segments[s].mode == Mode::Rows;
    const std::vector<int32_t>& ops = segments[s].ops;
    const size_t i = static_cast<size_t>(std::find(ops.begin(), ops.end(), report.index) - ops.begin());
    report.metrics.macs = rows ? tiled.streams[s].op_macs[i] : tiled.patch_runs[s].op_macs[i];
    report.predicted_instructions = segment_instructions(graph, tiled, s, i, plan_options.target);
  }
  tiled.untiled_predicted_instructions = tiled.plan.predicted_instructions;
  tiled.plan.predicted_instructions = 0;
  for (const plan::OpReport& report : tiled.plan.ops) tiled.plan.predicted_instructions += report.predicted_instructions;
  return tiled;
}

}  // namespace tinyarena::tiling
