// What the exact (exact.h) and fixed-capacity (fixed_capacity.h) searches do
// alike: start from a checked plan; once their search ends, take the racing
// heuristics' plan if it won, and fill the result's bound, flags and counters.
#pragma once

#include <cstdint>

#include "tinyarena/allocation/canonical_search.h"
#include "tinyarena/allocation/exact.h"
#include "tinyarena/allocation/heuristic_race.h"
#include "tinyarena/common/stopwatch.h"

namespace tinyarena::allocation {

// A result holding `start` (checked: std::invalid_argument naming `search` when it is not a
// valid plan), or the best greedy plan when `start` is null; the pins checked first.
ExactResult starting_result(const Problem& problem, const Solution* start, const char* search);

// `result` takes the race's plan, method and work when the race says it wins.
void take_race_plan(HeuristicRace& race, ExactResult& result);

// Bound (`lower_bound`, at most the plan's height), optimality, capacity flags,
// nodes, work and seconds of `result`, whose solution is final.
void finish_result(const Problem& problem, int64_t lower_bound, const ProbeBudget& budget, const Stopwatch& clock,
                   ExactResult& result);

}  // namespace tinyarena::allocation
