// Skyline best-fit search (the skyline of best-fit strip packing, as used
// for tensor allocation by Sekiyama et al. 2018 and TelaMalloc 2022): keep the
// floor of the placed buffers per time step and grow it without holes.
// A valley of the floor (a run of equal floor with higher neighbours) can
// only be filled by buffers whose lifetimes lie inside it, so a plan with no
// waste there covers each of its steps with exactly one "exact tile": a
// buffer inside the valley that sits on its floor aligned and clear of pins
// and belongs to a tiling of the valley. Each construction branches on the
// valley step covered by the fewest exact tiles (MiniMalloc's fewest-
// candidates rule), ranked by a rule and by a one-move look-ahead (no valley
// left unfillable); it searches depth-first for a plan without waste (a
// state fails when a valley cannot be tiled, or when at a step of the latest
// placement no subset of the unplaced buffers that fit under the lowest pin
// above sums exactly to the room below it) for a
// few hundred branch points, then completes the deepest waste-free partial
// plan greedily: exact tiles where some valley has them, else the best fit
// on the lowest run, else that run rises to its lower neighbour (waste).
// Pinned buffers are obstacles the floor jumps over when it reaches them.
// The search repeats the construction under three rankings and seeded
// random perturbations of them and keeps the lowest plan.
#pragma once

#include <cstdint>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::allocation {

struct SkylineOptions {
  int64_t constructions = 1000;  // randomized constructions after the three deterministic ones (0: none)
  int64_t backtracks = 400;      // per construction: branch points of the waste-free search (0: greedy only)
  static constexpr double kDefaultSeconds = 0.05;
  WorkBudget budget{kDefaultSeconds};  // deterministic work (WorkBudget(0): none); no construction starts
                                       // that would overrun it (judged by the costliest one so far), and
                                       // one that reaches it stops searching and completes greedily
  uint64_t seed = 1;
  int64_t target_height = 0;  // stop once a plan this low is found (0: the live-bytes lower bound)
};

struct SkylineResult {
  Solution solution;          // the lowest plan constructed
  int64_t constructions = 0;  // constructions run
  int64_t work = 0;           // work units spent
  int64_t work_to_best = 0;   // work units spent when the lowest plan was complete
  double seconds = 0;         // wall-clock time spent (for reports)
};

// The lowest plan of the constructions; stops early at the target height.
SkylineResult skyline_search(const Problem& problem, SkylineOptions options = {});

}  // namespace tinyarena::allocation
