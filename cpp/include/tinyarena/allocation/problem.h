// The allocation problem shared by every allocator: buffers with a size, an
// inclusive lifetime [first, last] in schedule steps and an alignment; a
// solution gives each buffer an offset. Two buffers whose lifetimes intersect
// must occupy disjoint address ranges.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinyarena::allocation {

struct Buffer {
  std::string name;
  int64_t size = 0;       // bytes, > 0 for anything that takes space
  int32_t first = 0;      // first step the buffer is live (inclusive)
  int32_t last = 0;       // last step the buffer is live (inclusive)
  int64_t alignment = 1;  // offset must be a multiple of this (>= 1)
  std::optional<int64_t> fixed_offset;  // pinned offset, honoured by every allocator
};

struct Problem {
  std::vector<Buffer> buffers;
  // 0 means unlimited; allocators that search report infeasibility against it.
  int64_t capacity = 0;
};

struct Solution {
  std::vector<int64_t> offsets;  // one per buffer, in problem order
  int64_t height = 0;            // max over buffers of offset + size (0 if empty)
};

// True when the two inclusive lifetimes share at least one step.
inline bool lifetimes_overlap(const Buffer& a, const Buffer& b) {
  return a.first <= b.last && b.first <= a.last;
}

// True when both buffers are pinned, take bytes, share a step and their
// pinned bytes overlap: no plan can honour both pins.
inline bool pins_collide(const Buffer& a, const Buffer& b) {
  return a.fixed_offset && b.fixed_offset && a.size > 0 && b.size > 0 && lifetimes_overlap(a, b) &&
         *a.fixed_offset < *b.fixed_offset + b.size && *b.fixed_offset < *a.fixed_offset + a.size;
}

inline int64_t align_up(int64_t value, int64_t alignment) {
  if (alignment <= 1) return value;
  if (value >= 0 && (alignment & (alignment - 1)) == 0) return (value + alignment - 1) & -alignment;  // no division
  return (value + alignment - 1) / alignment * alignment;
}

inline int64_t align_down(int64_t value, int64_t alignment) {
  return alignment <= 1 ? value : value / alignment * alignment;
}

// Lowest aligned offset where `size` bytes fit clear of `busy`, address
// ranges [start, end) sorted by start.
inline int64_t lowest_fit(const std::vector<std::pair<int64_t, int64_t>>& busy, int64_t size, int64_t alignment) {
  int64_t candidate = 0;
  for (const auto& [start, end] : busy) {
    if (start >= candidate + size) break;
    candidate = std::max(candidate, align_up(end, alignment));
  }
  return candidate;
}

// max over buffers of offset + size.
int64_t solution_height(const Problem& problem, const std::vector<int64_t>& offsets);

// The problem upside down within `height`: offset -> height - offset - size,
// pins moved so. A plan of it within `height`, mirrored back (mirror_plan), is
// one of the problem where it is mirrorable: every alignment divides its
// buffer's size and `height`, and no pinned top is above `height`.
bool mirrorable(const Problem& problem, int64_t height);
Problem mirrored(const Problem& problem, int64_t height);
Solution mirror_plan(const Problem& problem, const Solution& plan, int64_t height);

// Throws std::invalid_argument when a pinned offset is negative or misaligned, or
// two pinned buffers overlap in time and address (no plan could honour both).
// Every allocator's entry point calls it, so bad pins are an error, never an invalid plan.
void check_pins(const Problem& problem);

}  // namespace tinyarena::allocation
