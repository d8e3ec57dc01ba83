#include "tinyarena/tiling/search.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <stdexcept>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/graph/op_metrics.h"
#include "tinyarena/common/stopwatch.h"

namespace tinyarena::tiling {
namespace {

using allocation::align_up;
using liveness::BufferKind;

// One way to cover schedule steps [begin, end): a plain op (no segment) or a segment.
struct Choice {
  int32_t begin = 0;
  int64_t peak = 0;        // bytes live during it
  int64_t extra_macs = 0;  // over the untiled ops
  int64_t own_bytes = 0;   // the segment's own buffers (rings or per-patch buffers, scratch)
  bool segment = false;
  Segment seg;
};

// A Pareto point of the schedule up to a position, with the way back.
struct State {
  int64_t peak = 0, extra_macs = 0;
  int64_t tiled_ops = 0;    // ops inside segments (fewer is simpler code: the tie-break)
  int32_t prev_index = -1;  // state in the front at `choice.begin`
  int32_t choice = -1;      // index into the choices ending here
};

class Evaluator {
 public:
  Evaluator(const graph::Graph& graph, const SearchOptions& options)
      : graph_(graph), options_(options), facts_(graph) {
    liveness::LivenessOptions lo = options.tiling.plan.liveness;
    for (const graph::Op& op : graph.ops)  // a plain tileable op is costed without in-place
      if (facts_.op(op.index).tileable) lo.not_inplace_ops.push_back(op.index);
    base_ = liveness::analyze_liveness(graph, lo, options.tiling.plan.order);
    align_ = options.tiling.plan.alignment;
    owned_.assign(graph.tensors.size(), false);
    const size_t steps = base_.order.size();
    step_of_.assign(graph.ops.size(), -1);
    for (size_t s = 0; s < steps; ++s) step_of_[base_.order[s]] = static_cast<int32_t>(s);
    step_live_.assign(steps, 0);
    for (const auto& b : base_.buffers)
      for (int32_t s = b.first; s <= b.last && s < static_cast<int32_t>(steps); ++s) step_live_[s] += aligned(b.size);
  }

  size_t steps() const { return base_.order.size(); }
  bool scratch_planned() const { return options_.tiling.plan.liveness.scratch; }  // else no op's scratch counts
  bool tileable_step(size_t s) const { return facts_.op(base_.order[s]).tileable; }
  int64_t plain_peak(size_t s) const { return step_live_[s]; }
  int32_t op_at(size_t s) const { return base_.order[s]; }

  // Bytes of the untiled buffers that cross steps [begin, end), except those `owned` by the segment.
  int64_t crossing_bytes(int32_t begin, int32_t end, const std::vector<int32_t>& owned) const {
    for (int32_t t : owned) owned_[t] = true;
    int64_t total = 0;
    for (const auto& b : base_.buffers) {
      if (b.first > end - 1 || b.last < begin) continue;
      if (b.kind == BufferKind::Scratch) continue;  // the segment plans its own scratch
      const bool is_owned = !b.tensors.empty() &&
                            std::all_of(b.tensors.begin(), b.tensors.end(), [&](int32_t t) { return owned_[t]; });
      if (!is_owned) total += aligned(b.size);
    }
    for (int32_t t : owned) owned_[t] = false;
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
  void rows(int32_t begin, int32_t end, const std::vector<int32_t>& ops, int32_t stripe, const RowStream& run,
            Choice& choice) const {
    int64_t scratch = 0, macs = 0;
    for (size_t i = run.ops.size() - ops.size(); i < run.ops.size(); ++i) {
      scratch = std::max(scratch, run.op_scratch[i]);
      macs += run.op_macs[i];
    }
    std::vector<int32_t> owned;
    int64_t bytes = scratch_planned() ? aligned(scratch) : 0;
    for (size_t i = run.ops.size() - ops.size(); i < run.ops.size(); ++i) bytes += aligned(run.op_state[i]);
    for (const Ring& r : run.rings) {
      if (!inside(r.tensor, begin, end)) continue;
      for (int32_t t : load_tensors(graph_, r)) owned.push_back(t);  // a loaded input lives in its ring only
      bytes += aligned(r.bytes());
    }
    choice.own_bytes = bytes;
    choice.peak = crossing_bytes(begin, end, owned) + bytes;
    choice.extra_macs = macs - untiled_macs(ops);
    choice.seg = Segment{ops, Mode::Rows, stripe, 1, 1};
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
    choice.extra_macs = run.macs - untiled_macs(ops);
    choice.seg = Segment{ops, Mode::Patches, 1, grid, grid};
    return true;
  }

 private:
  int64_t aligned(int64_t bytes) const { return align_up(bytes, align_); }
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
  std::vector<int64_t> step_live_;
  std::vector<int32_t> step_of_;  // per op: its step
  mutable std::vector<bool> owned_;  // scratch flags of crossing_bytes, all false between calls
};

// Keeps the Pareto-optimal states (MACs ascending, peak strictly falling), at most `limit` spread over them.
std::vector<State> pareto(std::vector<State> states, int32_t limit) {
  std::sort(states.begin(), states.end(), [](const State& a, const State& b) {
    if (a.extra_macs != b.extra_macs) return a.extra_macs < b.extra_macs;
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

}  // namespace

TilingSearch search_tiling(const graph::Graph& graph, const SearchOptions& options) {
  const Stopwatch clock;
  if (options.max_mac_overhead < 1.0) throw std::invalid_argument("the MAC overhead budget must be at least 1.0");
  TilingSearch result;
  const Evaluator eval(graph, options);
  int64_t untiled_macs = 0;
  for (const graph::Op& op : graph.ops) untiled_macs += graph::op_macs(graph, op);
  const double budget_extra = (options.max_mac_overhead - 1.0) * static_cast<double>(untiled_macs);

  const size_t n = eval.steps();
  // No segment whose own buffers exceed the all-plain schedule's peak can help; a segment's
  // rings (per-patch buffers) only grow as it extends backwards, so the extension stops there.
  int64_t plain_bound = 0;
  for (size_t s = 0; s < n; ++s) plain_bound = std::max(plain_bound, eval.plain_peak(s));
  std::vector<std::vector<Choice>> choices(n + 1);  // choices ending at each position
  std::vector<std::vector<State>> fronts(n + 1);
  fronts[0].push_back({0, 0, 0, -1, -1});
  size_t run_begin = 0;  // the first step of the run of tileable steps ending at `end` - 1
  for (size_t end = 1; end <= n; ++end) {
    if (!eval.tileable_step(end - 1)) run_begin = end;
    // Per stripe height: one stream of the whole run, read off for each segment ending here.
    std::vector<std::optional<RowStream>> runs;
    for (int32_t stripe : options.rows && run_begin < end ? options.stripe_rows : std::vector<int32_t>{})
      runs.push_back(eval.stream(static_cast<int32_t>(run_begin), static_cast<int32_t>(end), stripe));
    Choice plain;
    plain.begin = static_cast<int32_t>(end - 1);
    plain.peak = eval.plain_peak(end - 1);
    choices[end].push_back(plain);
    std::vector<int32_t> ops;
    bool rows_open = options.rows, patches_open = options.patches;
    for (size_t begin = end; begin-- > 0 && eval.tileable_step(begin) && (rows_open || patches_open);) {
      ops.insert(ops.begin(), eval.op_at(begin));
      Choice c;
      c.begin = static_cast<int32_t>(begin);
      c.segment = true;
      int64_t least_own = INT64_MAX;  // the smallest own buffers of this extension, over its parameters
      for (size_t k = 0; rows_open && k < runs.size(); ++k) {
        ++result.candidates;
        const int32_t stripe = options.stripe_rows[k];
        // A run that cannot stream as a whole: this segment on its own.
        const std::optional<RowStream> own = runs[k] ? std::nullopt : eval.stream(c.begin, static_cast<int32_t>(end), stripe);
        if (!runs[k] && !own) continue;
        eval.rows(c.begin, static_cast<int32_t>(end), ops, stripe, runs[k] ? *runs[k] : *own, c);
        choices[end].push_back(c);
        least_own = std::min(least_own, c.own_bytes);
      }
      rows_open = rows_open && least_own < plain_bound;
      least_own = INT64_MAX;
      for (int32_t grid : patches_open ? options.patch_grids : std::vector<int32_t>{}) {
        ++result.candidates;
        if (!eval.patches(c.begin, static_cast<int32_t>(end), ops, grid, c)) continue;
        choices[end].push_back(c);
        least_own = std::min(least_own, c.own_bytes);
      }
      patches_open = patches_open && (least_own == INT64_MAX || least_own < plain_bound);
    }
    std::vector<State> states;
    for (size_t ci = 0; ci < choices[end].size(); ++ci) {
      const Choice& c = choices[end][ci];
      const auto& before = fronts[c.begin];
      for (size_t si = 0; si < before.size(); ++si) {
        const int64_t extra = before[si].extra_macs + c.extra_macs;
        if (static_cast<double>(extra) > budget_extra + 0.5) continue;
        const int64_t tiled_ops = before[si].tiled_ops + static_cast<int64_t>(c.seg.ops.size());
        states.push_back({std::max(before[si].peak, c.peak), extra, tiled_ops, static_cast<int32_t>(si),
                          static_cast<int32_t>(ci)});
      }
    }
    fronts[end] = pareto(std::move(states), options.max_front);
  }

  plan::Plan untiled = plan::make_plan(graph, options.tiling.plan);
  result.untiled_peak_bytes = untiled.peak_bytes;
  std::vector<ParetoPoint> planned;
  std::vector<TiledPlan> plans;
  for (const State& final_state : fronts[n]) {
    std::vector<Segment> segments;
    size_t end = n;
    int32_t index = static_cast<int32_t>(&final_state - fronts[n].data());
    while (end > 0) {
      const State& s = fronts[end][index];
      const Choice& c = choices[end][s.choice];
      if (c.segment) segments.insert(segments.begin(), c.seg);
      index = s.prev_index;
      end = static_cast<size_t>(c.begin);
    }
    TiledPlan tiled = make_tiled_plan(graph, segments, options.tiling);
    planned.push_back({tiled.plan.peak_bytes, tiled.macs, tiled.mac_overhead(), segments});
    plans.push_back(std::move(tiled));
  }
  // The untiled schedule (with every in-place op the estimate leaves out) is always a candidate.
  plans.push_back(make_tiled_plan(graph, {}, options.tiling));
  planned.push_back({plans.back().plan.peak_bytes, plans.back().macs, plans.back().mac_overhead(), {}});
  // Exact peaks may reorder the estimate's points: keep the exact Pareto set, MACs ascending.
  std::vector<size_t> order(planned.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (planned[a].macs != planned[b].macs) return planned[a].macs < planned[b].macs;
    if (planned[a].peak_bytes != planned[b].peak_bytes) return planned[a].peak_bytes < planned[b].peak_bytes;
    return planned[a].segments.size() < planned[b].segments.size();
  });
  int32_t best_plan = -1;
  for (size_t i : order) {
    if (!result.front.empty() && planned[i].peak_bytes >= result.front.back().peak_bytes) continue;
    result.front.push_back(planned[i]);
    if (planned[i].mac_overhead <= options.max_mac_overhead + 1e-12 &&
        (best_plan < 0 || planned[i].peak_bytes < plans[best_plan].plan.peak_bytes))
      best_plan = static_cast<int32_t>(i);
  }
  result.best = std::move(plans[best_plan]);
  result.seconds = clock.seconds();
  return result;
}

}  // namespace tinyarena::tiling
