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
    for (size_t j = i + 1; j < buffers.size(); ++j)
      if (pins_collide(a, buffers[j]))
        throw std::invalid_argument("pinned buffers " + std::to_string(i) + " and " + std::to_string(j) +
                                    " overlap in time and address");
  }
}

bool mirrorable(const Problem& problem, int64_t height) {
  for (const Buffer& b : problem.buffers) {
    if (b.alignment > 1 && (b.size % b.alignment != 0 || height % b.alignment != 0)) return false;
    if (b.fixed_offset && *b.fixed_offset + b.size > height) return false;
  }
  return true;
}

Problem mirrored(const Problem& problem, int64_t height) {
  Problem upside_down = problem;
  for (Buffer& b : upside_down.buffers)
    if (b.fixed_offset) b.fixed_offset = height - *b.fixed_offset - b.size;
  return upside_down;
}

Solution mirror_plan(const Problem& problem, const Solution& plan, int64_t height) {
  Solution back = plan;
  for (size_t i = 0; i < back.offsets.size(); ++i) back.offsets[i] = height - plan.offsets[i] - problem.buffers[i].size;
  back.height = solution_height(problem, back.offsets);
  return back;
}

}  // namespace tinyarena::allocation
