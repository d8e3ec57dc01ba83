#include "tinyarena/allocation/problem.h"

#include <algorithm>

namespace tinyarena::allocation {

int64_t solution_height(const Problem& problem, const std::vector<int64_t>& offsets) {
  int64_t height = 0;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    if (problem.buffers[i].size > 0) height = std::max(height, offsets[i] + problem.buffers[i].size);
  }
  return height;
}

}  // namespace tinyarena::allocation
