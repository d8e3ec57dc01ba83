// Exact allocation, MiniMalloc-class: a decision procedure "does everything
// fit in `capacity` bytes?" searching only canonical placements
// (canonical_search.h), wrapped in a search for the smallest capacity from the
// lower bound up (and, where a plan at the bound must waste bytes, down from
// the best plan first). For any plan within a given capacity, see
// fixed_capacity.h.
//
// Canonical placement: buffers are placed in non-decreasing offset order,
// each at the lowest aligned offset above every placed buffer it overlaps in
// time (any plan can be pushed down into such a form without growing). At
// the lowest open offset, the timeline section with the fewest candidates is
// decided: which buffer starts there, or none (they are banned from that
// offset) -- so no placement order is searched twice.
// Pruning: a section's floor plus its unplaced bytes must fit the capacity,
// and so must the waste forced below each level where unplaced buffers can
// start or a pin sits (checked where a placement makes the skyline step),
// and below a section's lowest unplaced pin some subset of the buffers that
// fit under it must fill the room to within the section's slack;
// a placement that leaves room below it for a whole unplaced buffer is
// dominated; a free buffer live over all the unplaced ones goes straight onto
// a flat floor; identical buffers keep one order; when no unplaced buffer
// crosses a cut, the two sides are solved independently; states refuted
// once at a capacity are remembered (fingerprints) and skipped.
// Ties for the fewest candidates go to the first such section; each order is
// also searched with them going to the section nearest the last placement.
// Search strategy: several buffer orders in turn with doubling node limits,
// early rounds limited to a few discrepancies from the value order (buffers
// whose top meets a neighbouring floor first; a choice refuted at once costs
// none, and states an order's earlier round failed from with as many
// discrepancies left are not searched again), later rounds complete.
// First the nested-cut search (guillotine.h) for a plan at the lower bound with
// 80 % of the budget (it gives up at once unless the bound leaves no byte to
// waste), then, if it found nothing, the time-sweep tiling search
// (time_sweep.h) with half of what is left where it refuted every nested plan
// (plans that are not nested), a tenth where its budget ran out. Capacities:
// the user's (if the plan misses it) or the lower bound briefly (2 % of what is
// left); where some step with a buffer live has fewer live bytes than the
// bound (a plan at the bound wastes bytes: slack), steps down from the best
// plan, each an eighth of the way to the lowest capacity not given up on with
// 10 % of what is left, while they find plans; then the skyline search (skyline.h) with two thirds of what is left --
// its constructions often meet the bound of hard instances first -- then the
// lower bound, bisection above it, and the lower bound again. Past 128 buffers
// (and 1 ms of work) the skyline search does not take that turn: it races all
// the other stages on a second thread with a budget of its own, after pin repair
// (pin_repair.h) where a buffer is pinned, and the plan is the one a run of both
// one after the other would pick (heuristic_race.h). The depth-first
// search's set-up (it lists every pair of buffers live together) is charged
// before it is built; where it does not fit what is left (thousands of
// long-lived buffers), the skyline search gets all of it instead.
#pragma once

#include <cstdint>
#include <string>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::allocation {

struct SearchBudget {
  WorkBudget work{1.0};     // deterministic work of the whole search (WorkBudget(0): none)
  int64_t node_limit = 0;   // search nodes over all decisions (0: none)
};

struct ExactResult {
  Solution solution;          // the lowest plan found (may exceed problem.capacity)
  std::string method;         // what found it: "exact" (the search), "guillotine", "time_sweep", "pin_repair",
                              // "skyline", a greedy's name, or "start"
  int64_t lower_bound = 0;    // no plan is lower: live-bytes bound, raised by refuted capacities
  bool proven_optimal = false;  // solution.height == lower_bound
  bool capacity_met = true;   // problem.capacity == 0 or solution.height <= problem.capacity
  bool capacity_refuted = false;  // proven: nothing fits problem.capacity
  int64_t nodes = 0;          // search nodes visited
  int64_t work = 0;           // work units spent (WorkBudget)
  int64_t work_to_plan = 0;   // work units spent when the plan was found (by the search that found it)
  double seconds = 0;         // wall-clock time spent (for reports; the budget is counted in work)

  int64_t gap() const { return solution.height - lower_bound; }
};

// Minimum-height plan within the budget (a share of a caller's WorkBudget
// counts there too). `start`, if given, is a valid plan
// to improve on (else the greedy heuristics provide one). Throws
// std::invalid_argument when pinned buffers overlap each other.
ExactResult solve_exact(const Problem& problem, SearchBudget budget = {}, const Solution* start = nullptr);

// One line explaining a result under problem.capacity: the height, the bound
// and whether the capacity is met, refuted, or undecided within the budget.
std::string describe_capacity(const Problem& problem, const ExactResult& result);

}  // namespace tinyarena::allocation
