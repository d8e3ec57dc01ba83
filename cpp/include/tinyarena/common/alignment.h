// Alignments the planner accepts: an arena is an array declared
// __attribute__((aligned(N))), and N can only be a power of two, so offsets
// aligned to anything else would not be aligned in memory.
#pragma once

#include <cstdint>

namespace tinyarena {

// 1, 2, 4, ...: what an arena can be aligned to.
inline bool is_power_of_two(int64_t value) { return value >= 1 && (value & (value - 1)) == 0; }

// Throws std::invalid_argument unless `alignment` is a power of two.
void check_alignment(int64_t alignment);

}  // namespace tinyarena
