// Alignments the planner accepts: an arena is an array declared
// __attribute__((aligned(N))), and N can only be a power of two, so offsets
// aligned to anything else would not be aligned in memory.
#pragma once

#include <cstdint>
#include <string>

namespace tinyarena {

// 1, 2, 4, ...: what an arena can be aligned to.
inline bool is_power_of_two(int64_t value) { return value >= 1 && (value & (value - 1)) == 0; }

// The largest alignment accepted: sizes rounded up to it stay far from 2^63.
constexpr int64_t kMaxAlignment = int64_t{1} << 40;

// Throws std::invalid_argument ("<what> must be a power of two (1, 2, 4, ... up to 2^40), got N")
// unless `alignment` is a power of two no larger than kMaxAlignment.
void check_alignment(int64_t alignment, const std::string& what = "alignment");

}  // namespace tinyarena
