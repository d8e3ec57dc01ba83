// The allocators by name, so callers (plan, CLI, Python) pick one with a string.
#pragma once

#include <string>
#include <vector>

#include "tinyarena/allocation/problem.h"

namespace tinyarena::allocation {

// Names accepted by allocate(), in a stable order.
std::vector<std::string> allocator_names();

// Runs the named allocator; throws std::invalid_argument for an unknown name.
Solution allocate(const Problem& problem, const std::string& allocator);

}  // namespace tinyarena::allocation
