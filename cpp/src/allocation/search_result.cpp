#include "tinyarena/allocation/search_result.h"

#include <algorithm>

namespace tinyarena::allocation {

void take_race_plan(HeuristicRace& race, ExactResult& result) {
  if (!race.heuristic_wins(result.solution.height, result.work_to_plan)) return;
  result.solution = race.heuristic_plan().solution;
  result.method = race.heuristic_plan().method;
  result.work_to_plan = race.heuristic_plan().work_to_plan;
}

void finish_result(const Problem& problem, int64_t lower_bound, const ProbeBudget& budget, const Stopwatch& clock,
                   ExactResult& result) {
  result.lower_bound = std::min(lower_bound, result.solution.height);
  result.proven_optimal = result.solution.height == result.lower_bound;
  result.capacity_met = problem.capacity <= 0 || result.solution.height <= problem.capacity;
  result.capacity_refuted = problem.capacity > 0 && result.lower_bound > problem.capacity;
  result.nodes = budget.nodes();
  result.work = budget.work();
  result.seconds = clock.seconds();
}

}  // namespace tinyarena::allocation
