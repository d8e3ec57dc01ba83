#include "tinyarena/allocation/problem.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tinyarena::allocation {

int64_t solution_height(const Problem& problem, const std::vector<int64_t>& offsets) {
  int64_t height = 0;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    if (problem.buffers[i].size > 0) height = std::max(height, offsets[i] + problem.buffers[i].size);
  }
  return height;
}

void check_pins(const Problem& problem) {
  const auto& buffers = problem.buffers;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& a = buffers[i];
    if (!a.fixed_offset || a.size <= 0) continue;
    if (*a.fixed_offset < 0 || *a.fixed_offset % std::max<int64_t>(a.alignment, 1) != 0)
      throw std::invalid_argument("buffer " + std::to_string(i) + " is pinned at a negative or misaligned offset");
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const Buffer& b = buffers[j];
      if (!b.fixed_offset || b.size <= 0 || !lifetimes_overlap(a, b)) continue;
      if (*a.fixed_offset < *b.fixed_offset + b.size && *b.fixed_offset < *a.fixed_offset + a.size)
        throw std::invalid_argument("pinned buffers " + std::to_string(i) + " and " + std::to_string(j) +
                                    " overlap in time and address");
    }
  }
}

}  // namespace tinyarena::allocation
