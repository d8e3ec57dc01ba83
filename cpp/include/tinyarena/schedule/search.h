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

// Each op as late as its consumers allow: a depth-first walk back from the ops
// nobody reads, running an op once its predecessors ran, the deepest
// predecessor's ancestors first (so a long chain runs before the short
// branches that join it, which then run just before they are read).
Found demand_order(const MemoryModel& model);

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

// The same program over `ops` only (each ready once the ops before them ran),
// from `start`: the order of a window of a longer order. `best.peak` is the
// window's own peak.
SearchResult search_window(const MemoryModel& model, const MemoryState& start, std::vector<int32_t> ops, int64_t bound,
                           const SearchBudget& budget);

// Local improvement of a full order (op indices, each once, topological)
// within `seconds` of deterministic work (0 = none): producers moved just
// before their first consumer and ops just after their last predecessor when
// that shrinks the bytes live over the ops passed (area) without raising the
// peak, then exact search in windows of `window` consecutive ops around the
// peak, kept when the window's peak drops below the order's. Never worse
// than `start`.
Found improve_order(const MemoryModel& model, Found start, int32_t window, double seconds);

// Peak no order can avoid: the most any single op needs while it runs.
int64_t op_floor_bytes(const MemoryModel& model, int32_t op);

}  // namespace tinyarena::schedule
