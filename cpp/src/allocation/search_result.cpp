#include "tinyarena/allocation/search_result.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/validator.h"

namespace tinyarena::allocation {

ExactResult starting_result(const Problem& problem, const Solution* start, const char* search) {
  check_pins(problem);
  ExactResult result;
  result.method = "start";
  result.solution = start ? *start : best_greedy_plan(problem, result.method);
  if (!validate(Problem{problem.buffers, 0}, result.solution).empty())
    throw std::invalid_argument(std::string("the starting plan given to the ") + search + " is not valid");
  return result;
}

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
