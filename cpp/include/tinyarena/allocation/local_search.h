// Fast improvement search for large instances: hill climbing over placement
// orders, each decoded by first fit. Seeded by the greedy orders (size,
// area, lifetime, urgency); a move takes a buffer that reaches the top and
// moves it earlier in the order (Vela's HillClimb idea), kept when the plan
// gets no higher. Two-sided (with a target): a buffer marked high goes to
// the highest offset where it fits below the target instead, and half the
// moves turn a buffer live with the culprit and placed before it the other
// way up. Deterministic for a seed (own portable RNG); it stops at
// the lower bound (or the target height), after `iterations` moves or when the work budget is spent
// (a move costs about the buffers its first-fit decoding touches).
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::allocation {

struct LocalSearchOptions {
  int64_t iterations = 3000;  // moves tried (0: no limit)
  static constexpr double kDefaultSeconds = 0.1;
  WorkBudget budget{kDefaultSeconds};  // deterministic work (WorkBudget(0): none)
  uint64_t seed = 1;
  // Stop once a plan this low is found (0: the live-bytes lower bound). With
  // a target, a plan is judged by its bytes above it (summed over the
  // buffers reaching past it) and a move takes a buffer reaching past it.
  int64_t target_height = 0;
  // With a target: a buffer may also be placed from the target down (the
  // highest offset where it fits below it), and a move may turn a buffer live
  // with one above the target the other way up.
  bool two_sided = false;
  // The order the climb starts from: 0, the best of the four seed orders; k,
  // the k-th of them (size, area, lifetime, urgency; counted round).
  int start_order = 0;
};

struct LocalSearchResult {
  Solution solution;
  std::vector<int> order;  // the order whose first-fit decoding is `solution`
  int64_t iterations = 0;  // moves tried
  int64_t work = 0;        // work units spent
  double seconds = 0;      // wall-clock time spent (for reports)
};

LocalSearchResult local_search(const Problem& problem, LocalSearchOptions options = {});

}  // namespace tinyarena::allocation
