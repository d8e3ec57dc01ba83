// The lower bound every allocation must meet: the largest total of sizes
// that are live at one step.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/allocation/problem.h"

namespace tinyarena::allocation {

// Sum of live buffer sizes at each step 0..max(last).
std::vector<int64_t> live_bytes_per_step(const Problem& problem);

// The live bytes from each step where they change on (ascending steps; 0
// after the last buffer ends): O(n log n) however long the time line.
struct LiveChange {
  int32_t step;
  int64_t live;
};
std::vector<LiveChange> live_bytes_changes(const Problem& problem);

// max over steps of live_bytes_per_step (0 for an empty problem).
int64_t lower_bound_bytes(const Problem& problem);

// lower_bound_bytes, and no lower than any pinned buffer's top.
int64_t lower_bound_with_pins(const Problem& problem);

}  // namespace tinyarena::allocation
