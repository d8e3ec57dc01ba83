#include "tinyarena/allocation/fixed_capacity.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "tinyarena/allocation/canonical_search.h"
#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/heuristic_race.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/search_result.h"
#include "tinyarena/allocation/validator.h"
#include "tinyarena/common/deep_stack.h"
#include "tinyarena/common/stopwatch.h"

namespace tinyarena::allocation {
namespace {

// Below this much work no second thread starts (it would cost more than it
// can find): the depth-first search runs alone.
constexpr int64_t kRaceWork = 1'000'000;
// The first round's work of each direction of the depth-first search; each
// round doubles it.
constexpr int64_t kFirstRoundWork = 1 << 20;

// The depth-first search at the capacity, bottom-up and (where alignments
// allow) top-down on the mirrored problem in turn, in rounds of doubling work
// (pins high up are ceilings the bottom-up search packs under blindly, floors
// to the top-down one). Found: `plan` holds the plan.
Outcome search_both_ways(const Problem& problem, const Problem* upside_down, ProbeBudget& budget, Solution& plan) {
  if (!budget.afford(prober_setup_work(problem))) return Outcome::Aborted;
  CapacityProber up(problem, budget);
  if (!upside_down || !budget.afford(prober_setup_work(*upside_down))) return up.probe(problem.capacity, 1.0, plan);
  CapacityProber down(*upside_down, budget);
  std::string method;
  Solution down_plan = best_greedy_plan(*upside_down, method);
  for (int64_t units = kFirstRoundWork; !budget.spent(); units = units > WorkBudget::kUnlimited / 2 ? units : 2 * units) {
    const Outcome outcome = up.probe(problem.capacity, 1.0, plan, units);
    if (outcome != Outcome::Aborted) return outcome;
    if (budget.spent()) break;
    const Outcome turned = down.probe(problem.capacity, 1.0, down_plan, units);
    if (turned == Outcome::Found) plan = mirror_plan(problem, down_plan, problem.capacity);
    if (turned != Outcome::Aborted) return turned;
  }
  return Outcome::Aborted;
}

// Step 3: the depth-first search at the capacity with all of the budget,
// the heuristics racing it where the budget allows. `result` holds the
// starting plan; on return the winner's. True if the capacity was refuted.
bool race_at_capacity(const Problem& problem, SearchBudget& search_budget, ProbeBudget& budget, ExactResult& result) {
  std::optional<Problem> upside_down;  // mirrored in the capacity, where alignments allow
  if (mirrorable(problem, problem.capacity)) upside_down = mirrored(problem, problem.capacity);
  const Problem* turned = upside_down ? &*upside_down : nullptr;
  std::optional<HeuristicRace> race;
  constexpr bool kClimbAroundPins = true;  // where a buffer is pinned (heuristic_race.h)
  if (search_budget.work.remaining() >= kRaceWork)
    race.emplace(problem, search_budget.work, problem.capacity, turned, kClimbAroundPins);
  Solution plan = result.solution;
  const Outcome outcome = search_both_ways(problem, turned, budget, plan);
  if (outcome == Outcome::Found) result.solution = plan, result.method = "exact", result.work_to_plan = budget.work();
  if (!race) return outcome == Outcome::NotFound;
  // Past a plan that fits, or a refutation (nothing fits), the heuristics can
  // no longer win; under an unlimited budget they get as much as the search had.
  if (outcome != Outcome::Aborted) race->stop_heuristics_past(budget.work());
  else if (search_budget.work.remaining() == WorkBudget::kUnlimited) race->stop_heuristics_past(budget.work());
  take_race_plan(*race, result);
  return outcome == Outcome::NotFound;
}

ExactResult search_fixed_capacity(const Problem& problem, SearchBudget search_budget, const Solution* start) {
  if (problem.capacity <= 0) throw std::invalid_argument("the fixed-capacity search needs a capacity above 0");
  const Stopwatch clock;
  ProbeBudget budget(search_budget);
  ExactResult result = starting_result(problem, start, "fixed-capacity search");
  const int64_t bound = lower_bound_with_pins(problem);
  bool refuted = bound > problem.capacity;
  if (!refuted && result.solution.height > problem.capacity)
    refuted = race_at_capacity(problem, search_budget, budget, result);
  finish_result(problem, refuted ? std::max(bound, problem.capacity + 1) : bound, budget, clock, result);
  return result;
}

}  // namespace

ExactResult solve_fixed_capacity(const Problem& problem, SearchBudget search_budget, const Solution* start) {
  return on_deep_stack(problem.buffers.size(), [&] { return search_fixed_capacity(problem, search_budget, start); });
}

}  // namespace tinyarena::allocation
