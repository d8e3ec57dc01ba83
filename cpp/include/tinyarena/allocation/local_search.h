// Fast improvement search for large instances: hill climbing over placement
// orders, each decoded by first fit. Seeded by the greedy orders (size,
// area, lifetime, urgency); a move takes a buffer that reaches the top and
// moves it earlier in the order (Vela's HillClimb idea), kept when the plan
// gets no higher. Deterministic for a seed (own portable RNG); it stops at
// the lower bound, after `iterations` moves or after `seconds`.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/allocation/problem.h"

namespace tinyarena::allocation {

struct LocalSearchOptions {
  int64_t iterations = 3000;  // moves tried (0: no limit)
  double seconds = 0.1;       // wall-clock limit (<= 0: none); the iteration limit keeps runs reproducible
  uint64_t seed = 1;
};

struct LocalSearchResult {
  Solution solution;
  std::vector<int> order;  // the order whose first-fit decoding is `solution`
  int64_t iterations = 0;  // moves tried
  double seconds = 0;
};

LocalSearchResult local_search(const Problem& problem, const LocalSearchOptions& options = {});

}  // namespace tinyarena::allocation
