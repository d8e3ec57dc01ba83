// The two searches behind find_schedule, on the memory model: both return
// an order and its model peak; neither consults the liveness stage.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/schedule/memory_model.h"

namespace tinyarena::schedule {

struct Found {
  std::vector<int32_t> order;  // empty when nothing better than the bound was found
  int64_t peak = 0;
};

// Ready op with the least bytes left after it (`step_first`: least bytes while
// it runs), ties by the other figure, then by op index.
Found greedy_order(const MemoryModel& model, bool step_first);

struct SearchBudget {
  int64_t max_states = 0;
  double seconds = 0;  // deterministic work worth about this many seconds (WorkBudget; 0 = no limit)
  int32_t beam = 0;    // > 0: keep only this many states per level (a heuristic)
};

struct SearchResult {
  Found best;             // an order with peak below `bound`, the lowest one, or empty
  bool completed = false; // the whole space was searched: `best` (or the bound) is optimal
  int64_t states = 0;
};

// Dynamic program over the sets of ops already run (plus the oversized
// in-place buffers still live), level by level, keeping the lowest peak per
// state and dropping states that cannot beat `bound`. With a beam, each level
// keeps its lowest states only; it is still exact if no level overflowed.
SearchResult search_order(const MemoryModel& model, int64_t bound, const SearchBudget& budget);

// Peak no order can avoid: the most any single op needs while it runs.
int64_t op_floor_bytes(const MemoryModel& model, int32_t op);

}  // namespace tinyarena::schedule
