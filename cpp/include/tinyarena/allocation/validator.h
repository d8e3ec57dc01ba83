// Checks a solution against its problem: every buffer placed at a
// non-negative, aligned offset (its pinned one if pinned), no two buffers
// overlapping in both time and address, the height right, the capacity kept.
#pragma once

#include <string>
#include <vector>

#include "tinyarena/allocation/problem.h"

namespace tinyarena::allocation {

// Empty when the solution is valid; otherwise one message per violation
// (at most `max_errors`).
std::vector<std::string> validate(const Problem& problem, const Solution& solution,
                                  size_t max_errors = 20);

}  // namespace tinyarena::allocation
