// Pins dropped, then put back: a search for plans without waste where some
// buffers are pinned. With its pins dropped a problem is often easy for the
// nested-cut search (guillotine.h), and a nested plan is a tree of cuts --
// stacks of layers, parts side by side in time -- whose layers can be stacked
// in any order without waste. So the relaxed plan's tree is rearranged until
// every pin lands on its offset: in a stack the layers holding pins go in the
// order of their lowest pins, each at a base that puts its own pins in place
// (arranged the same way inside), and the layers without pins fill the gaps
// between them exactly (a subset per gap, largest first); alignments are kept
// or the arrangement is refused. It finds the plan when the relaxed plan's
// layers are the pinned plan's up to their order (the generator's pinned
// instances: their cuts are the same with and without the pins).
#pragma once

#include <cstdint>
#include <optional>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::allocation {

struct PinRepairResult {
  std::optional<Solution> solution;  // a plan of the height asked for that honours every pin, if found
  int64_t work = 0;                  // work units spent (the relaxed nested-cut search's included)
};

// The budget of a pin repair on its own, in seconds of deterministic work (the race gives it a share of its own).
constexpr double kPinRepairDefaultSeconds = 0.05;

// A plan of `height` honouring the pins, from a nested-cut plan of the
// problem without them; none if that is not found or cannot be rearranged.
PinRepairResult pin_repair_search(const Problem& problem, int64_t height, WorkBudget budget);

}  // namespace tinyarena::allocation
