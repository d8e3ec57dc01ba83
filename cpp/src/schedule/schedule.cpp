#include "tinyarena/schedule/schedule.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/common/alignment.h"
#include "tinyarena/common/stopwatch.h"
#include "tinyarena/liveness/problem.h"
#include "tinyarena/schedule/memory_model.h"
#include "tinyarena/schedule/search.h"

namespace tinyarena::schedule {
namespace {

constexpr int32_t kWindowOps = 12;  // ops per window of the local search's exact search

}  // namespace

const char* method_name(Method method) {
  switch (method) {
    case Method::Auto: return "auto";
    case Method::Exact: return "exact";
    case Method::Beam: return "beam";
    case Method::Greedy: return "greedy";
    case Method::Local: return "local";
    case Method::File: return "file";
  }
  return "?";
}

Method parse_method(const std::string& name) {
  for (Method m : {Method::Auto, Method::Exact, Method::Beam, Method::Local, Method::Greedy, Method::File})
    if (name == method_name(m)) return m;
  throw std::invalid_argument("unknown schedule method '" + name + "' (auto, exact, beam, local, greedy, file)");
}

int64_t order_peak_bytes(const graph::Graph& graph, const std::vector<int32_t>& order,
                         const liveness::LivenessOptions& liveness, int64_t alignment) {
  const liveness::Liveness live = liveness::analyze_liveness(graph, liveness, order);
  return allocation::lower_bound_bytes(liveness::make_problem(live, alignment));
}

ScheduleResult find_schedule(const graph::Graph& graph, const ScheduleOptions& options) {
  check_alignment(options.alignment);
  const Stopwatch clock;
  const int32_t n = static_cast<int32_t>(graph.ops.size());
  ScheduleResult result;
  result.order.resize(n);
  std::iota(result.order.begin(), result.order.end(), 0);
  result.peak_bytes = result.file_peak_bytes = order_peak_bytes(graph, {}, options.liveness, options.alignment);
  result.proven_optimal = n <= 1;  // one order only
  const auto finish = [&]() -> ScheduleResult& {
    result.seconds = clock.seconds();
    return result;
  };
  if (options.method == Method::File || n <= 1) return finish();

  // Candidates on the model, lowest peak wins, earlier on ties: file, greedy, demand, searches.
  const MemoryModel model = build_memory_model(graph, options.liveness, options.alignment);
  std::vector<Found> starts{{result.order, model_peak(model, result.order)}};
  // The model predicts the liveness stage (checked on the file order).
  const bool faithful = model.exact && starts[0].peak == result.file_peak_bytes;
  for (bool step_first : {false, true}) starts.push_back(greedy_order(model, step_first));
  starts.push_back(demand_order(model));
  Found best = starts[0];
  for (const Found& start : starts)
    if (start.peak < best.peak) best = start;
  result.method = Method::Greedy;
  bool completed = false;
  // Exact search, then (if it is not allowed or gives up) beam search; each only keeps an order it strictly improves.
  const auto search = [&](Method method, SearchBudget budget) {
    const SearchResult found = search_order(model, best.peak, budget);
    result.states += found.states;
    completed = found.completed;
    result.method = completed ? Method::Exact : method;
    if (!found.best.order.empty()) best = found.best;
  };
  const bool exact = options.method == Method::Exact || (options.method == Method::Auto && n <= options.exact_max_ops);
  if (exact) search(Method::Exact, {options.max_states, options.time_limit_seconds, 0});
  const bool beam = options.method == Method::Beam || (options.method == Method::Auto && n <= options.beam_max_ops);
  if (!completed && beam) search(Method::Beam, {options.max_states, options.time_limit_seconds, options.beam_width});
  // Local improvement of each start (a greedy order can bury what a move from the file order
  // fixes, and the other way round) and of the search's order, on shares of the time limit.
  if (!completed && (options.method == Method::Auto || options.method == Method::Local)) {
    if (std::none_of(starts.begin(), starts.end(), [&](const Found& f) { return f.order == best.order; }))
      starts.push_back(best);
    const double seconds = options.time_limit_seconds / static_cast<double>(starts.size());
    for (Found& start : starts) {
      Found local = improve_order(model, std::move(start), kWindowOps, seconds);
      if (local.peak >= best.peak) continue;
      best = std::move(local);
      result.method = Method::Local;
    }
  }

  // Judged by the liveness stage; the file order stays unless strictly beaten.
  const int64_t measured = order_peak_bytes(graph, best.order, options.liveness, options.alignment);
  if (measured < result.file_peak_bytes) {
    result.order = best.order;
    result.peak_bytes = measured;
  }
  result.proven_optimal = completed && faithful && best.peak == measured;
  return finish();
}

}  // namespace tinyarena::schedule
