#include "tinyarena/allocation/exact.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include "tinyarena/allocation/canonical_search.h"
#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/guillotine.h"
#include "tinyarena/allocation/heuristic_race.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/search_result.h"
#include "tinyarena/allocation/skyline.h"
#include "tinyarena/allocation/time_sweep.h"
#include "tinyarena/allocation/validator.h"
#include "tinyarena/common/deep_stack.h"
#include "tinyarena/common/stopwatch.h"

namespace tinyarena::allocation {
namespace {

// Share of the budget left after the first probe that the skyline search
// gets: on hard instances its constructions often meet the bound first.
constexpr double kSkylineShare = 2.0 / 3.0;
// Share of the budget the nested-cut search gets before any probe: where it
// applies (no byte to waste at the bound) it often meets the bound within
// milliseconds; elsewhere it gives up at once.
constexpr double kGuillotineShare = 0.8;
// Share of what is left then that the time-sweep tiling search gets where
// the nested-cut search refuted every nested plan (the plans are not nested:
// brick patterns), and where it ran out of budget (a nested plan it did not
// find, whose many buffers starting at once the sweep rarely untangles).
constexpr double kTimeSweepShare = 0.5;
constexpr double kTimeSweepShareAfterAbort = 0.1;

// Past this many buffers and with at least this much work the skyline search
// (after pin repair, where a buffer is pinned) races the other stages on a
// second thread (heuristic_race.h) instead of taking its turn: real models (at
// most 119 buffers) end within a millisecond, where a thread would cost more
// than it saves.
constexpr size_t kRaceBuffers = 128;
constexpr int64_t kRaceWork = 1'000'000;

// Share of what is left that each step down from the best plan gets (on
// instances where a plan at the bound must waste bytes).
constexpr double kDescentShare = 0.1;

// The probes in turn, each with its share of the remaining budget. First the
// user's capacity if the plan misses it (does it fit? is the question asked),
// else the lower bound: briefly, with 2 % of what is left (real models end
// here). Where a plan at the bound must waste bytes (`descend`: the bound is
// likely out of reach), steps down from the best plan next, each an eighth
// of the way to the lowest capacity not given up on, while they find plans.
// Then -- after the skyline search -- the first probe resumed with most of
// what is left, the lower bound with most of the rest (resumed if it was the
// first), quick bisection above the probes given up on, and the lower bound
// afresh with everything left.
struct Probe {
  int64_t capacity;
  double share;
};
class ProbeSchedule {
 public:
  ProbeSchedule(int64_t user_capacity, bool descend) : user_capacity_(user_capacity), descending_(descend) {}
  std::optional<Probe> next(int64_t lo, int64_t open, int64_t hi) {
    if (count_ > 0 && descending_ && open < hi && (descent_hi_ == 0 || hi < descent_hi_)) {
      descent_hi_ = hi;
      return Probe{hi - std::max<int64_t>(1, (hi - open) / 8), kDescentShare};
    }
    if (count_ > 0) descending_ = false;  // the last step down found nothing (the first probe comes first)
    ++count_;
    const bool user_open = user_capacity_ >= open && user_capacity_ < hi;
    if (count_ <= 2) return Probe{user_open ? user_capacity_ : lo, count_ == 1 ? 0.02 : 0.8};
    if (count_ == 3 && lo < hi) return Probe{lo, 0.8};
    if (open < hi) return Probe{open + (hi - open) / 2, 0.25};
    if (!retried_ && lo < hi) {
      retried_ = true;
      return Probe{lo, 1.0};
    }
    return std::nullopt;
  }
  bool first_done() const { return count_ == 1 && !descending_; }

 private:
  int64_t user_capacity_;
  int count_ = 0;
  bool retried_ = false;
  bool descending_;
  int64_t descent_hi_ = 0;  // the best plan's height when the last step down was asked for
};

// True where some step with a buffer live has fewer live bytes than `bound`:
// a plan at the bound wastes bytes there (unlike the zero-slack instances the
// bound probes are tuned for, where every step is full).
bool bound_leaves_waste(const Problem& problem, int64_t bound) {
  for (const LiveChange& change : live_bytes_changes(problem))
    if (change.live > 0 && change.live < bound) return true;
  return false;
}

// A heuristic's plan replaces the result's when it is lower.
void keep_lower(const Solution& plan, const char* method, const ProbeBudget& budget, ExactResult& result) {
  if (plan.height >= result.solution.height) return;
  result.solution = plan;
  result.method = method;
  result.work_to_plan = budget.work();
}

// The nested-cut search for a plan at the lower bound with `share` of the
// budget (it gives up at once unless the live bytes are the same at every
// step of each span no buffer crosses); its plan if lower. True if it
// refuted every nested plan.
bool try_guillotine(const Problem& problem, ProbeBudget& budget, double share, int64_t lower_bound, ExactResult& result) {
  GuillotineOptions options;
  options.budget = budget.share(share);
  const GuillotineResult nested = guillotine_search(problem, lower_bound, options);
  if (nested.solution) keep_lower(*nested.solution, "guillotine", budget, result);
  return nested.complete;
}

// The time-sweep tiling search for a plan at the lower bound with `share`
// of the budget (it gives up at once unless the bound leaves no byte to
// waste); its plan if lower.
void try_time_sweep(const Problem& problem, ProbeBudget& budget, double share, int64_t lower_bound, ExactResult& result) {
  TimeSweepOptions options;
  options.budget = budget.share(share);
  const TimeSweepResult tiled = time_sweep_search(problem, lower_bound, options);
  if (tiled.solution) keep_lower(*tiled.solution, "time_sweep", budget, result);
}

// The skyline search with `share` of the budget; its plan if lower.
void try_skyline(const Problem& problem, ProbeBudget& budget, double share, ExactResult& result) {
  SkylineOptions options;
  options.budget = budget.share(share);
  keep_lower(skyline_search(problem, options).solution, "skyline", budget, result);
}

ExactResult search_exact(const Problem& problem, SearchBudget search_budget, const Solution* start) {
  const Stopwatch clock;
  ProbeBudget budget(search_budget);
  ExactResult result = starting_result(problem, start, "exact solver");
  std::optional<CapacityProber> prober;              // built at the first probe (the nested-cut search often ends it first)
  int64_t lo = lower_bound_with_pins(problem);  // proven: nothing lower fits
  int64_t open = lo;                        // lowest capacity not given up on
  ProbeSchedule schedule(problem.capacity, bound_leaves_waste(problem, lo));
  std::optional<HeuristicRace> race;  // past kRaceBuffers pin repair and the skyline run on a second thread
  if (problem.buffers.size() > kRaceBuffers && search_budget.work.remaining() >= kRaceWork && lo < result.solution.height)
    race.emplace(problem, search_budget.work, lo);
  bool skyline_done = race.has_value();
  const bool nested_refuted = lo < result.solution.height && try_guillotine(problem, budget, kGuillotineShare, lo, result);
  if (lo < result.solution.height)
    try_time_sweep(problem, budget, nested_refuted ? kTimeSweepShare : kTimeSweepShareAfterAbort, lo, result);
  while (lo < result.solution.height && !budget.spent()) {
    if (schedule.first_done() && !std::exchange(skyline_done, true)) {
      try_skyline(problem, budget, kSkylineShare, result);
      continue;
    }
    const auto next = schedule.next(lo, open, result.solution.height);
    if (!next) break;
    if (!prober && !budget.afford(prober_setup_work(problem))) {  // no depth-first search fits what is left
      if (!skyline_done) try_skyline(problem, budget, 1.0, result);
      break;
    }
    if (!prober) prober.emplace(problem, budget);
    const Outcome outcome = prober->probe(next->capacity, next->share, result.solution);
    if (outcome == Outcome::Found) {
      result.method = "exact";
      result.work_to_plan = budget.work();
    }
    if (outcome == Outcome::NotFound) lo = std::max(lo, next->capacity + 1);
    if (outcome != Outcome::Found) open = std::max(open, next->capacity + 1);
  }
  if (race) {
    if (result.solution.height <= lo) race->stop_heuristics_past(result.work_to_plan);
    else if (search_budget.work.remaining() == WorkBudget::kUnlimited) race->stop_heuristics_past(budget.work());
    take_race_plan(*race, result);
  }
  finish_result(problem, lo, budget, clock, result);
  return result;
}

}  // namespace

ExactResult solve_exact(const Problem& problem, SearchBudget search_budget, const Solution* start) {
  return on_deep_stack(problem.buffers.size(), [&] { return search_exact(problem, search_budget, start); });
}

std::string describe_capacity(const Problem& problem, const ExactResult& r) {
  const std::string head = "height " + std::to_string(r.solution.height) + " B, lower bound " +
                           std::to_string(r.lower_bound) + " B" + (r.proven_optimal ? " (proven optimal)" : "");
  if (problem.capacity <= 0) return head;
  const std::string cap = std::to_string(problem.capacity);
  if (r.capacity_met) return head + "; fits the capacity of " + cap + " B";
  if (r.capacity_refuted)
    return head + "; does not fit: needs at least " + std::to_string(r.lower_bound) + " B, capacity " + cap + " B";
  return head + "; no plan within the capacity of " + cap + " B found within the search budget (not refuted)";
}

}  // namespace tinyarena::allocation
