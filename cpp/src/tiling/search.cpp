#include "tinyarena/tiling/search.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <stdexcept>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/graph/op_metrics.h"
#include "tinyarena/op_params/cost_model.h"
#include "tinyarena/schedule/schedule.h"
#include "tinyarena/common/stopwatch.h"

namespace tinyarena::tiling {
namespace {

using allocation::align_up;
using liveness::BufferKind;

// One way to cover schedule steps [begin, end): a plain op (no segment) or a segment.
struct Choice {
  int32_t begin = 0;
  int64_t peak = 0;        // bytes live during it
  int64_t peak_inplace = 0;  // likewise, a plain op written over its input where that is lower, a row
                             // segment's outputs written over its dying inputs when smaller too
  int64_t extra_macs = 0;  // over the untiled ops
  int64_t extra_instructions = 0;  // predicted, over the untiled ops (Objective::Speed only; else 0)
  int64_t own_bytes = 0;   // the segment's own buffers (rings or per-patch buffers, scratch)
  bool segment = false;
  Segment seg;
};

// A row stream of the last steps before a position, [from, position), and its column splits.
struct Tail {
  int32_t from = -1;  // -1: not streamed yet
  std::optional<RowStream> stream;  // nullopt: those steps cannot stream as one segment
  std::vector<std::optional<ColumnSplit>> splits;  // per SearchOptions::column_strips entry, made when
  std::vector<bool> split_tried;                   // first asked; nullopt: the steps cannot split so
};

// Steps a tail first streams. A segment's rings, MACs and scratch read off any
// stream that covers it and ends where it ends are the same (they depend only
// on the ops after each op), so streams cover only the segments tried, doubling
// as needed: the search's work grows with ops times the longest segment tried.
constexpr int64_t kFirstSpan = 16;

// A Pareto point of the schedule up to a position, with the way back.
struct State {
  int64_t peak = 0, extra_macs = 0;
  int64_t extra_instructions = 0;  // Objective::Speed only
  int64_t tiled_ops = 0;    // ops inside segments (fewer is simpler code: the tie-break)
  int32_t prev_index = -1;  // state in the front at `choice.begin`
  int32_t choice = -1;      // index into the choices ending here
};

class Evaluator {
 public:
  Evaluator(const graph::Graph& graph, const SearchOptions& options)
      : graph_(graph), options_(options), facts_(graph) {
    liveness::LivenessOptions lo = options.tiling.plan.liveness;
    for (const graph::Op& op : graph.ops)  // a tileable op's buffers are costed without in-place
      if (facts_.op(op.index).tileable) lo.not_inplace_ops.push_back(op.index);
    base_ = liveness::analyze_liveness(graph, lo, options.tiling.plan.order);
    align_ = options.tiling.plan.alignment;
    owned_.assign(graph.tensors.size(), false);
    counted_.assign(base_.buffers.size(), false);
    const size_t steps = base_.order.size();
    step_of_.assign(graph.ops.size(), -1);
    for (size_t s = 0; s < steps; ++s) step_of_[base_.order[s]] = static_cast<int32_t>(s);
    // Per step: the bytes of the buffers (scratch aside) starting at or before it and ending
    // before it, for crossing_bytes.
    born_by_.assign(steps + 1, 0);
    dead_by_.assign(steps + 1, 0);
    for (const auto& b : base_.buffers) {
      if (b.kind == BufferKind::Scratch) continue;
      if (b.first < 0 || b.last < b.first) {
        odd_.push_back(static_cast<int32_t>(&b - base_.buffers.data()));
        continue;
      }
      born_by_[std::min<size_t>(b.first, steps)] += aligned(b.size);
      dead_by_[std::min<size_t>(b.last + 1, steps)] += aligned(b.size);
    }
    step_live_ = live_per_step(base_);
    if (options.objective == Objective::Speed) {  // each op's untiled prediction, for extra_instructions
      build_ = op_params::target_build(options.tiling.plan.target);
      untiled_instructions_.resize(graph.ops.size());
      for (const graph::Op& op : graph.ops)
        untiled_instructions_[op.index] = op_params::predicted_instructions(graph, op, build_);
    }
    // A plain op may write over its input (make_plan keeps that where it does not raise the
    // peak). Its steps are costed both ways: without in-place ops, and at each step the lower
    // of the two (optimistic: in place, the input's buffer lives on to the output's end).
    step_live_inplace_ =
        live_per_step(liveness::analyze_liveness(graph, options.tiling.plan.liveness, options.tiling.plan.order));
    for (size_t s = 0; s < steps; ++s)
      step_live_inplace_[s] = std::min(step_live_[s], s < step_live_inplace_.size() ? step_live_inplace_[s] : INT64_MAX);
    for (size_t s = 1; s <= steps; ++s) {
      born_by_[s] += born_by_[s - 1];
      dead_by_[s] += dead_by_[s - 1];
    }
  }

  size_t steps() const { return base_.order.size(); }
  bool scratch_planned() const { return options_.tiling.plan.liveness.scratch; }  // else no op's scratch counts
  bool tileable_step(size_t s) const { return facts_.op(base_.order[s]).tileable; }
  int64_t plain_peak(size_t s) const { return step_live_[s]; }
  int64_t plain_peak_inplace(size_t s) const { return step_live_inplace_[s]; }
  int32_t op_at(size_t s) const { return base_.order[s]; }
  // Step s is an input TRANSPOSE after the model input's QUANTIZE: it streams only as part of the
  // input's load (the QUANTIZE in the segment too), never as a segment's first op.
  bool cuts_input_load(size_t s) const {
    const graph::Op& op = graph_.ops[op_at(s)];
    return facts_.op(op.index).input_transpose && graph_.tensors[op.inputs[0]].producer >= 0;
  }

  // Bytes of the untiled buffers (scratch aside) that cross steps [begin, end), except those
  // `owned` by the segment: those born by step end - 1, less those dead before begin, less
  // the owned ones (each checked once).
  int64_t crossing_bytes(int32_t begin, int32_t end, const std::vector<int32_t>& owned) const {
    int64_t total = born_by_[end - 1] - dead_by_[begin];
    for (int32_t index : odd_) total += crosses(base_.buffers[index], begin, end) ? aligned(base_.buffers[index].size) : 0;
    for (int32_t t : owned) owned_[t] = true;
    for (int32_t t : owned) {
      const int32_t index = base_.tensor_buffer[t];
      if (index < 0 || counted_[index]) continue;
      counted_[index] = true;
      const auto& b = base_.buffers[index];
      if (b.kind == BufferKind::Scratch || !crosses(b, begin, end)) continue;
      if (std::all_of(b.tensors.begin(), b.tensors.end(), [&](int32_t x) { return owned_[x]; })) total -= aligned(b.size);
    }
    for (int32_t t : owned) {
      owned_[t] = false;
      if (base_.tensor_buffer[t] >= 0) counted_[base_.tensor_buffer[t]] = false;
    }
    return total;
  }

  int64_t untiled_macs(const std::vector<int32_t>& ops) const {
    int64_t total = 0;
    for (int32_t op : ops) {
      total += facts_.op(op).macs_per_pixel * output_pixels(*graph_.output(graph_.ops[op], 0));
    }
    return total;
  }

  // The row stream of the ops at steps [begin, end), or nullopt when they cannot be streamed.
  std::optional<RowStream> stream(int32_t begin, int32_t end, int32_t stripe) const {
    const std::vector<int32_t> ops(base_.order.begin() + begin, base_.order.begin() + end);
    try {
      return stream_rows(graph_, facts_, ops, {stripe, options_.tiling.stream_input, false});
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  // Row streaming of steps [begin, end), read off `run`, a stream of steps [b, end) with b <= begin:
  // the rows a tensor's consumers pull, so its ring, and an op's MACs and scratch depend only on
  // the ops after it, the same in both. Owned: the rings of tensors the segment produces, and the
  // streamed input when only the segment reads it.
  // With `split`, the segment runs on its column strips: rings as wide as the widest strip, MACs
  // over all strips.
  void rows(int32_t begin, int32_t end, const std::vector<int32_t>& ops, int32_t stripe, const RowStream& run,
            const ColumnSplit* split, Choice& choice) const {
    int64_t scratch = 0, macs = 0;
    for (size_t i = run.ops.size() - ops.size(); i < run.ops.size(); ++i) {
      scratch = std::max(scratch, split ? split->scratch(graph_, facts_, run.ops[i], stripe, run.op_scratch[i])
                                        : run.op_scratch[i]);
      macs += split ? split->macs(graph_, run.ops[i], run.op_macs[i]) : run.op_macs[i];
    }
    std::vector<int32_t> owned;
    int64_t bytes = scratch_planned() ? aligned(scratch) : 0;
    for (size_t i = run.ops.size() - ops.size(); i < run.ops.size(); ++i) bytes += aligned(run.op_state[i]);
    for (const Ring& r : run.rings) {
      if (!inside(r.tensor, begin, end)) continue;
      for (int32_t t : load_tensors(graph_, r)) owned.push_back(t);  // a loaded input lives in its ring only
      bytes += aligned(split ? r.rows * split->row_bytes(graph_, r.tensor) : r.bytes());
    }
    choice.own_bytes = bytes;
    choice.peak = crossing_bytes(begin, end, owned) + bytes;
    choice.peak_inplace = choice.peak;
    if (!split && options_.tiling.plan.liveness.inplace_elementwise) {  // outputs written over dying inputs
      // Optimistic: a smaller output keeps the input's buffer alive after the segment.
      bool took_smaller = false;
      const int64_t optimistic =
          overwrite_saving(segment_overwrites(base_, run, begin, end - 1, true, &took_smaller));
      choice.peak_inplace -= optimistic;
      choice.peak -= took_smaller ? overwrite_saving(segment_overwrites(base_, run, begin, end - 1)) : optimistic;
    }
    choice.extra_macs = macs - untiled_macs(ops);
    choice.seg = Segment{ops, Mode::Rows, stripe, 1, 1, split ? split->strips : 1};
    choice.extra_instructions = 0;
    const int32_t strips = split ? split->strips : 1;
    for (size_t i = run.ops.size() - ops.size(); i < run.ops.size() && !untiled_instructions_.empty(); ++i) {
      const int64_t op_macs = split ? split->macs(graph_, run.ops[i], run.op_macs[i]) : run.op_macs[i];
      choice.extra_instructions += extra_instructions(run.ops[i], stream_calls(run, run.ops[i], strips), op_macs,
                                                      1.0 / strips);
    }
  }

  // The column strips of steps [begin, end), or nullopt when they cannot be split so.
  std::optional<ColumnSplit> columns(const std::vector<int32_t>& ops, int32_t strips, const RowStream& run) const {
    try {
      return split_columns(graph_, facts_, ops, strips, options_.tiling.stream_input, loaded_ops(graph_, run));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  // Patches over steps [begin, end): the full buffers live throughout, per-patch buffers at their steps.
  bool patches(int32_t begin, int32_t end, const std::vector<int32_t>& ops, int32_t grid, Choice& choice) const {
    PatchRun run;
    try {
      run = run_patches(graph_, facts_, ops, grid, grid, options_.tiling.stream_input, false);
    } catch (const std::exception&) {
      return false;
    }
    std::vector<int32_t> owned;
    std::vector<int64_t> at(end - begin, 0);
    for (size_t i = 0; i < ops.size() && scratch_planned(); ++i) at[i] += aligned(run.op_scratch[i]);
    for (const PatchBuffer& pb : run.buffers) {
      owned.push_back(pb.tensor);
      const graph::Tensor& t = graph_.tensors[pb.tensor];
      int32_t first = t.producer >= 0 ? static_cast<int32_t>(position(ops, t.producer)) : 0, last = first;
      for (int32_t c : t.consumers) last = std::max(last, static_cast<int32_t>(position(ops, c)));
      for (int32_t s = first; s <= last; ++s) at[s] += aligned(pb.bytes);
    }
    choice.own_bytes = *std::max_element(at.begin(), at.end());
    choice.peak = crossing_bytes(begin, end, owned) + choice.own_bytes;
    choice.peak_inplace = choice.peak;
    choice.extra_macs = run.macs - untiled_macs(ops);
    choice.seg = Segment{ops, Mode::Patches, 1, grid, grid};
    choice.extra_instructions = 0;
    for (size_t i = 0; i < ops.size() && !untiled_instructions_.empty(); ++i)
      choice.extra_instructions += extra_instructions(ops[i], static_cast<double>(grid) * grid, run.op_macs[i], 1.0 / grid);
    return true;
  }

 private:
  int64_t aligned(int64_t bytes) const { return align_up(bytes, align_); }
  // Predicted instructions of `op` run in a segment so, less its untiled prediction.
  int64_t extra_instructions(int32_t op, double calls, int64_t macs, double width_share) const {
    return segment_op_instructions(graph_, op, calls, macs, width_share, build_) - untiled_instructions_[op];
  }
  // The aligned bytes of `live`'s buffers (scratch included) at each step (a difference array).
  std::vector<int64_t> live_per_step(const liveness::Liveness& live) const {
    const size_t steps = live.order.size();
    std::vector<int64_t> delta(steps + 1, 0), bytes(steps, 0);
    for (const auto& b : live.buffers) {
      const int32_t first = std::max(b.first, 0), last = std::min(b.last, static_cast<int32_t>(steps) - 1);
      if (first > last) continue;
      delta[first] += aligned(b.size);
      delta[last + 1] -= aligned(b.size);
    }
    for (size_t s = 0; s < steps; ++s) bytes[s] = (s ? bytes[s - 1] : 0) + delta[s];
    return bytes;
  }
  int64_t buffer_bytes(int32_t tensor) const { return base_.buffers[base_.tensor_buffer[tensor]].size; }
  // The bytes `overwrites` save during their segment: the smaller of each pair's buffers.
  int64_t overwrite_saving(const std::vector<Overwrite>& overwrites) const {
    int64_t saved = 0;
    for (const Overwrite& o : overwrites) saved += std::min(aligned(buffer_bytes(o.input)), aligned(buffer_bytes(o.output)));
    return saved;
  }
  static bool crosses(const liveness::LiveBuffer& b, int32_t begin, int32_t end) {
    return b.first <= end - 1 && b.last >= begin;
  }
  // `t` is produced within steps [begin, end), or (a model input) read only there.
  bool inside(int32_t t, int32_t begin, int32_t end) const {
    const graph::Tensor& tensor = graph_.tensors[t];
    auto in = [&](int32_t op) { return step_of_[op] >= begin && step_of_[op] < end; };
    if (tensor.producer >= 0) return in(tensor.producer);
    return std::all_of(tensor.consumers.begin(), tensor.consumers.end(), in);
  }
  static size_t position(const std::vector<int32_t>& ops, int32_t op) {
    return static_cast<size_t>(std::find(ops.begin(), ops.end(), op) - ops.begin());
  }

  const graph::Graph& graph_;
  const SearchOptions& options_;
  GraphFacts facts_;
  liveness::Liveness base_;
  int64_t align_ = 1;
  std::vector<int64_t> step_live_;          // per step, plain ops costed without in-place
  std::vector<int64_t> step_live_inplace_;  // per step, the lower of that and with in-place ops
  std::vector<int64_t> born_by_;  // per step s: bytes of the buffers (scratch aside) with first step <= s
  std::vector<int64_t> dead_by_;  // per step s: bytes of the buffers (scratch aside) with first <= last < s
  std::vector<int32_t> odd_;      // buffers (scratch aside) with a negative first step or last before first
  std::vector<int32_t> step_of_;  // per op: its step
  op_params::Build build_ = op_params::Build::Simd;  // the target's build (Objective::Speed)
  std::vector<int64_t> untiled_instructions_;       // per op, predicted untiled (Objective::Speed only)
  mutable std::vector<bool> owned_;    // scratch flags of crossing_bytes, all false between calls
  mutable std::vector<bool> counted_;  // per buffer: likewise
};

// The ops at steps [begin, end).
std::vector<int32_t> eval_order(const Evaluator& eval, int32_t begin, int32_t end) {
  std::vector<int32_t> ops;
  for (int32_t s = begin; s < end; ++s) ops.push_back(eval.op_at(static_cast<size_t>(s)));
  return ops;
}

// Keeps the Pareto-optimal states (cost ascending, peak strictly falling; the cost is the extra MACs,
// with `speed` the extra predicted instructions), at most `limit` spread over them.
std::vector<State> pareto(std::vector<State> states, int32_t limit, bool speed) {
  std::sort(states.begin(), states.end(), [speed](const State& a, const State& b) {
    const int64_t cost_a = speed ? a.extra_instructions : a.extra_macs, cost_b = speed ? b.extra_instructions : b.extra_macs;
    if (cost_a != cost_b) return cost_a < cost_b;
    return a.peak != b.peak ? a.peak < b.peak : a.tiled_ops < b.tiled_ops;
  });
  std::vector<State> kept;
  for (const State& s : states)
    if (kept.empty() || s.peak < kept.back().peak) kept.push_back(s);
  if (limit < 2 || static_cast<int32_t>(kept.size()) <= limit) return kept;
  std::vector<State> spread;
  for (int32_t i = 0; i < limit; ++i) spread.push_back(kept[static_cast<size_t>(i) * (kept.size() - 1) / (limit - 1)]);
  return spread;
}

// A Pareto point planned exactly: its segments and the plan they make.
// The untiled plan in the file's order, or in the order a quick schedule search finds when that
// is lower (tiled points keep the graph's order: a segment is a run of consecutive ops). An
// unrolled recurrent network, whose converter computes every step's input projection first,
// drops to its per-step working set this way.
plan::Plan untiled_plan(const graph::Graph& graph, const plan::PlanOptions& options) {
  plan::Plan file = plan::make_plan(graph, options);
  if (!options.order.empty()) return file;
  schedule::ScheduleOptions search;
  search.liveness = options.liveness;
  search.alignment = options.alignment;
  search.method = schedule::Method::Local;
  const schedule::ScheduleResult found = schedule::find_schedule(graph, search);
  if (found.peak_bytes >= found.file_peak_bytes) return file;
  plan::PlanOptions reordered_options = options;
  reordered_options.order = found.order;
  plan::Plan reordered = plan::make_plan(graph, reordered_options);
  return reordered.peak_bytes < file.peak_bytes ? reordered : file;
}

// The point's plan with the in-place ops of its untiled part, or with none of them when that is
// lower (an op written over a larger input keeps that input alive: see plan::make_plan).
ParetoPoint planned_point(const graph::Graph& graph, std::vector<Segment> segments, const TilingOptions& options) {
  TiledPlan tiled = make_tiled_plan(graph, segments, options);
  const std::vector<int32_t>& in_place = tiled.plan.liveness.inplace_ops;
  if (!in_place.empty()) {
    TilingOptions out_of_place = options;
    out_of_place.plan.worth_below = tiled.plan.peak_bytes;  // kept only when lower
    auto& declined = out_of_place.plan.liveness.not_inplace_ops;
    declined.insert(declined.end(), in_place.begin(), in_place.end());
    TiledPlan alternative = make_tiled_plan(graph, segments, out_of_place);
    if (alternative.plan.peak_bytes < tiled.plan.peak_bytes) tiled = std::move(alternative);
  }
  const int64_t peak = tiled.plan.peak_bytes, macs = tiled.macs;
  const double overhead = tiled.mac_overhead();
  return {peak, macs, overhead, std::move(segments), std::move(tiled)};
}

}  // namespace

// The estimates a choice is costed by: a plain op without in-place ops, and the lower of with and
// without at each step; a row segment with its overwrites over dying inputs by outputs at least as
// large, and with smaller outputs too (Choice::peak_inplace). Each keeps its own Pareto fronts over
// the same choices; both final fronts are planned.
constexpr size_t kEstimates = 2;
constexpr size_t kInplaceEstimate = 1;

// The Pareto states at a position from the choices ending there and the fronts where they begin.
std::vector<State> front_at(const std::vector<std::vector<State>>& fronts, const std::vector<Choice>& choices,
                            double budget_extra, bool optimistic, int32_t max_front, bool speed) {
  std::vector<State> states;
  for (size_t ci = 0; ci < choices.size(); ++ci) {
    const Choice& c = choices[ci];
    const int64_t peak = optimistic ? c.peak_inplace : c.peak;
    const auto& before = fronts[c.begin];
    for (size_t si = 0; si < before.size(); ++si) {
      const int64_t extra = before[si].extra_macs + c.extra_macs;
      if (static_cast<double>(extra) > budget_extra + 0.5) continue;
      const int64_t tiled_ops = before[si].tiled_ops + static_cast<int64_t>(c.seg.ops.size());
      states.push_back({std::max(before[si].peak, peak), extra, before[si].extra_instructions + c.extra_instructions,
                        tiled_ops, static_cast<int32_t>(si), static_cast<int32_t>(ci)});
    }
  }
  return pareto(std::move(states), max_front, speed);
}

// The segments of the schedule that ends in state `index` of the front at position `n`.
std::vector<Segment> segments_of(const std::vector<std::vector<State>>& fronts,
                                 const std::vector<std::vector<Choice>>& choices, size_t n, int32_t index) {
  std::vector<Segment> segments;
  for (size_t end = n; end > 0;) {
    const State& s = fronts[end][index];
    const Choice& c = choices[end][s.choice];
    if (c.segment) segments.insert(segments.begin(), c.seg);
    index = s.prev_index;
    end = static_cast<size_t>(c.begin);
  }
  return segments;
}

Objective parse_objective(const std::string& name) {
  if (name == "size") return Objective::Size;
  if (name == "speed") return Objective::Speed;
  throw std::invalid_argument("objective must be 'size' or 'speed', got '" + name + "'");
}

const char* objective_name(Objective objective) { return objective == Objective::Speed ? "speed" : "size"; }

int32_t choose_point(const std::vector<ParetoPoint>& front, double max_mac_overhead, int64_t sram_limit,
                     double max_latency_overhead, Objective objective) {
  int32_t lowest = -1, fastest = -1;  // the lowest peak; Speed: the fewest instructions that fit
  const auto instructions = [&](int32_t i) { return front[i].plan.plan.predicted_instructions; };
  for (size_t i = 0; i < front.size(); ++i) {
    if (front[i].mac_overhead > max_mac_overhead + 1e-12) continue;
    if (max_latency_overhead > 0 && !front[i].plan.segments.empty() &&
        front[i].plan.latency_overhead() > max_latency_overhead + 1e-12)
      continue;
    const bool fits = sram_limit <= 0 || front[i].peak_bytes <= sram_limit;
    if (objective == Objective::Speed && fits &&
        (fastest < 0 || instructions(i) < instructions(fastest) ||
         (instructions(i) == instructions(fastest) && front[i].peak_bytes < front[fastest].peak_bytes)))
      fastest = static_cast<int32_t>(i);
    if (objective == Objective::Size && sram_limit > 0 && fits) return static_cast<int32_t>(i);  // fewest MACs that fit
    if (lowest < 0 || front[i].peak_bytes < front[lowest].peak_bytes) lowest = static_cast<int32_t>(i);
  }
  if (lowest < 0) throw std::logic_error("no tiling point within the MAC budget (the untiled one always is)");
  return fastest >= 0 ? fastest : lowest;
}

TilingSearch search_tiling(const graph::Graph& graph, const SearchOptions& options) {
  const Stopwatch clock;
  if (options.max_mac_overhead < 1.0) throw std::invalid_argument("the MAC overhead budget must be at least 1.0");
  if (options.max_latency_overhead != 0 && options.max_latency_overhead < 1.0)
    throw std::invalid_argument("the latency overhead budget must be at least 1.0");
  TilingSearch result;
  const Evaluator eval(graph, options);
  int64_t untiled_macs = 0;
  for (const graph::Op& op : graph.ops) untiled_macs += graph::op_macs(graph, op);
  const double budget_extra = (options.max_mac_overhead - 1.0) * static_cast<double>(untiled_macs);

  const size_t n = eval.steps();
  const bool speed = options.objective == Objective::Speed;
  // No segment whose own buffers exceed the all-plain schedule's peak can help; a segment's
  // rings (per-patch buffers) only grow as it extends backwards, so the extension stops there.
  int64_t plain_bound = 0;
  for (size_t s = 0; s < n; ++s) plain_bound = std::max(plain_bound, eval.plain_peak(s));
  std::vector<std::vector<Choice>> choices(n + 1);  // choices ending at each position
  std::vector<std::vector<State>> fronts[kEstimates];  // per estimate, the Pareto states at each position
  for (auto& front : fronts) {
    front.resize(n + 1);
    front[0].push_back({0, 0, 0, 0, -1, -1});
  }
  size_t run_begin = 0;  // the first step of the run of tileable steps ending at `end` - 1
  std::vector<int64_t> spans(options.stripe_rows.size(), kFirstSpan);  // per stripe height: steps a tail streams
  for (size_t end = 1; end <= n; ++end) {
    if (!eval.tileable_step(end - 1)) run_begin = end;
    // Per stripe height: one stream of the run's last steps, [tail.from, end), read off for each
    // segment ending here that starts within it; restreamed twice as long when one starts before.
    std::vector<Tail> tails(options.stripe_rows.size());
    Choice plain;
    plain.begin = static_cast<int32_t>(end - 1);
    plain.peak = eval.plain_peak(end - 1);
    plain.peak_inplace = eval.plain_peak_inplace(end - 1);
    choices[end].push_back(plain);
    std::vector<int32_t> ops;
    bool rows_open = options.rows, patches_open = options.patches;
    for (size_t begin = end; begin-- > 0 && eval.tileable_step(begin) && (rows_open || patches_open);) {
      ops.insert(ops.begin(), eval.op_at(begin));
      Choice c;
      c.begin = static_cast<int32_t>(begin);
      c.segment = true;
      int64_t least_own = INT64_MAX;  // the smallest own buffers of this extension, over its parameters
      const bool cuts_load = eval.cuts_input_load(c.begin);  // no row segment starts there; earlier ones may
      for (size_t k = 0; rows_open && !cuts_load && k < tails.size(); ++k) {
        ++result.candidates;
        const int32_t stripe = options.stripe_rows[k];
        Tail& tail = tails[k];
        if (tail.from < 0 || tail.from > c.begin) {
          while (static_cast<int64_t>(end) - spans[k] > c.begin) spans[k] *= 2;
          tail.from = static_cast<int32_t>(std::max<int64_t>(run_begin, static_cast<int64_t>(end) - spans[k]));
          tail.stream = eval.stream(tail.from, static_cast<int32_t>(end), stripe);
          tail.splits.assign(options.column_strips.size(), std::nullopt);
          tail.split_tried.assign(options.column_strips.size(), false);
        }
        // A tail that cannot stream as a whole: this segment on its own.
        const std::optional<RowStream> own =
            tail.stream ? std::nullopt : eval.stream(c.begin, static_cast<int32_t>(end), stripe);
        if (!tail.stream && !own) continue;
        const RowStream& run = tail.stream ? *tail.stream : *own;
        eval.rows(c.begin, static_cast<int32_t>(end), ops, stripe, run, nullptr, c);
        choices[end].push_back(c);
        least_own = std::min(least_own, c.own_bytes);
        // Column strips (row reductions, and boundary ops other than a ring's load, run only on whole rows).
        for (size_t j = 0; options.patches && j < options.column_strips.size(); ++j) {
          ++result.candidates;
          const int32_t strips = options.column_strips[j];
          if (tail.stream && !tail.split_tried[j]) {  // the whole tail's split serves every segment in it
            const std::vector<int32_t> tail_ops(eval_order(eval, tail.from, static_cast<int32_t>(end)));
            tail.splits[j] = eval.columns(tail_ops, strips, *tail.stream);
            tail.split_tried[j] = true;
          }
          const std::optional<ColumnSplit> own_split =
              tail.stream && tail.splits[j] ? std::nullopt : eval.columns(ops, strips, run);
          const ColumnSplit* split = tail.stream && tail.splits[j] ? &*tail.splits[j] : own_split ? &*own_split : nullptr;
          if (!split) continue;
          eval.rows(c.begin, static_cast<int32_t>(end), ops, stripe, run, split, c);
          choices[end].push_back(c);
          least_own = std::min(least_own, c.own_bytes);
        }
      }
      rows_open = rows_open && (cuts_load || least_own < plain_bound);
      least_own = INT64_MAX;
      for (int32_t grid : patches_open ? options.patch_grids : std::vector<int32_t>{}) {
        ++result.candidates;
        if (!eval.patches(c.begin, static_cast<int32_t>(end), ops, grid, c)) continue;
        choices[end].push_back(c);
        least_own = std::min(least_own, c.own_bytes);
      }
      patches_open = patches_open && (least_own == INT64_MAX || least_own < plain_bound);
    }
    for (size_t e = 0; e < kEstimates; ++e)
      fronts[e][end] = front_at(fronts[e], choices[end], budget_extra, e == kInplaceEstimate, options.max_front, speed);
  }

  plan::Plan untiled = untiled_plan(graph, options.tiling.plan);
  result.untiled_peak_bytes = untiled.peak_bytes;
  // The untiled point keeps out of place the in-place ops the untiled plan declined (they raise
  // its peak), so it is never above that plan; tiled points decide in place for themselves.
  TilingOptions untiled_options = options.tiling;
  untiled_options.plan.order = untiled.options.order;
  auto& not_inplace = untiled_options.plan.liveness.not_inplace_ops;
  not_inplace.insert(not_inplace.end(), untiled.inplace_declined.begin(), untiled.inplace_declined.end());
  std::vector<ParetoPoint> planned;
  std::vector<std::vector<Segment>> tried;
  for (const auto& front : fronts) {
    for (size_t i = 0; i < front[n].size(); ++i) {
      std::vector<Segment> segments = segments_of(front, choices, n, static_cast<int32_t>(i));
      if (std::find(tried.begin(), tried.end(), segments) != tried.end()) continue;  // both estimates chose it
      tried.push_back(segments);
      planned.push_back(planned_point(graph, std::move(segments), options.tiling));
    }
  }
  // The untiled schedule (with every in-place op the estimate leaves out) is always a candidate.
  planned.push_back(planned_point(graph, {}, untiled_options));
  // Exact peaks may reorder the estimate's points: keep the exact Pareto set, MACs ascending.
  std::vector<size_t> order(planned.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (planned[a].macs != planned[b].macs) return planned[a].macs < planned[b].macs;
    if (planned[a].peak_bytes != planned[b].peak_bytes) return planned[a].peak_bytes < planned[b].peak_bytes;
    return planned[a].segments.size() < planned[b].segments.size();
  });
  // With a latency budget or the speed objective the predicted instructions are a third
  // objective: a point stays unless one with no more MACs has no more peak and no more
  // instructions (so the untiled point, usually the fewest instructions, stays).
  const bool latency = options.max_latency_overhead > 0 || speed;
  for (size_t i : order) {
    const ParetoPoint& point = planned[i];
    const bool dominated = std::any_of(result.front.begin(), result.front.end(), [&](const ParetoPoint& kept) {
      return kept.peak_bytes <= point.peak_bytes &&
             (!latency || kept.plan.plan.predicted_instructions <= point.plan.plan.predicted_instructions);
    });
    if (!dominated) result.front.push_back(std::move(planned[i]));
  }
  result.best_point = choose_point(result.front, options.max_mac_overhead, options.tiling.plan.sram_limit,
                                   options.max_latency_overhead, options.objective);
  result.seconds = clock.seconds();
  return result;
}

}  // namespace tinyarena::tiling
