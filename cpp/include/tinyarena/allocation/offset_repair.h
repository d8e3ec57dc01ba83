// Repair of a plan that reaches past a target height, move by move on the
// offsets themselves (not on a placement order, whose first-fit decoding
// re-places every later buffer after a move): a buffer reaching past the
// target (drawn with odds by its bytes past it) goes to a slot below the
// target clear of every pin -- at the floor, on top of a buffer live with it
// or just under one, the fewer bytes it displaces the likelier -- the free
// buffers it lands on are lifted out and put back by first fit around the
// rest, and the move is kept while the bytes past the target (summed over
// the buffers) stay within 1/64 of the target of the fewest seen; the plan
// with the fewest is returned. Made for the pinned slack instances, where
// pins cut the room into gaps that a long-lived buffer fits only one of.
// Deterministic for a seed; stops at the target or when the budget is spent.
#pragma once

#include <cstdint>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::allocation {

struct OffsetRepairResult {
  Solution solution;  // the plan with the fewest bytes past the target seen
  int64_t work = 0;   // work units spent
};

// Repairs `start` (a valid plan honouring every pin) towards `target` (> 0).
OffsetRepairResult repair_offsets(const Problem& problem, const Solution& start, int64_t target, WorkBudget budget,
                                  uint64_t seed = 1);

}  // namespace tinyarena::allocation
