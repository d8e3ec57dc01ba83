// Skyline best-fit construction (after Burke et al.'s best-fit strip packing,
// as used for tensor allocation by Sekiyama et al. 2018 and TelaMalloc 2022):
// keep the floor of the placed buffers per time step; repeatedly take the
// lowest (then leftmost) run of equal floor and put on it the unplaced buffer
// whose lifetime fits the run best, or, if none fits, raise the run to its
// lower neighbour (that space is wasted). Pinned buffers are obstacles the
// floor jumps over when it reaches them; offsets are rounded up to alignment.
// A search repeats the construction under several candidate rankings and
// seeded random perturbations of them, keeping the lowest plan.
#pragma once

#include <cstdint>

#include "tinyarena/allocation/problem.h"

namespace tinyarena::allocation {

// How a run's candidates are ranked (the first rule that differs decides).
enum class SkylineRule {
  kFillsRun,   // fills the run to both ends, touches an end, no alignment waste, longest lifetime, largest
  kLongest,    // longest lifetime, then largest (Sekiyama et al.)
  kLargest,    // largest, then longest lifetime
};

// One skyline construction. `noise` > 0 (with `seed`) picks, at each run,
// a random candidate among the best with probability `noise`.
Solution place_skyline(const Problem& problem, SkylineRule rule, double noise = 0, uint64_t seed = 0);

struct SkylineOptions {
  int64_t constructions = 1000;  // randomized constructions after the deterministic ones (0: none)
  int64_t backtracks = 400;      // per construction: branch points of the waste-free search (0: greedy only)
  double seconds = 0.05;         // wall-clock cap (<= 0: none); on large instances it binds before
                                 // `constructions`, and then the plan depends on the machine's speed
  uint64_t seed = 1;
};

struct SkylineResult {
  Solution solution;          // the lowest plan constructed
  int64_t constructions = 0;  // constructions run
  double seconds = 0;
};

// The lowest of the deterministic constructions and of up to
// `constructions` randomized ones; stops early at the lower bound.
SkylineResult skyline_search(const Problem& problem, const SkylineOptions& options = {});

}  // namespace tinyarena::allocation
