#include "tinyarena/allocation/validator.h"

#include <algorithm>
#include <numeric>

namespace tinyarena::allocation {
namespace {

std::string describe(const Problem& problem, size_t i) {
  const Buffer& b = problem.buffers[i];
  return "buffer " + std::to_string(i) + (b.name.empty() ? "" : " '" + b.name + "'");
}

void check_placement(const Problem& problem, const Solution& solution, size_t i,
                     std::vector<std::string>& errors) {
  const Buffer& b = problem.buffers[i];
  const int64_t offset = solution.offsets[i];
  if (offset < 0) errors.push_back(describe(problem, i) + " has negative offset " + std::to_string(offset));
  if (b.alignment > 1 && offset % b.alignment != 0)
    errors.push_back(describe(problem, i) + " at offset " + std::to_string(offset) +
                     " is not aligned to " + std::to_string(b.alignment));
  if (b.fixed_offset && offset != *b.fixed_offset)
    errors.push_back(describe(problem, i) + " is pinned at " + std::to_string(*b.fixed_offset) +
                     " but placed at " + std::to_string(offset));
}

// Pairs overlapping in address found by a sweep over offsets; each is
// checked for overlapping lifetimes.
void check_overlaps(const Problem& problem, const Solution& solution, size_t max_errors,
                    std::vector<std::string>& errors) {
  std::vector<size_t> by_offset(problem.buffers.size());
  std::iota(by_offset.begin(), by_offset.end(), 0);
  std::sort(by_offset.begin(), by_offset.end(),
            [&](size_t a, size_t b) { return solution.offsets[a] < solution.offsets[b]; });
  for (size_t k = 0; k < by_offset.size() && errors.size() < max_errors; ++k) {
    const size_t i = by_offset[k];
    if (problem.buffers[i].size <= 0) continue;
    const int64_t end = solution.offsets[i] + problem.buffers[i].size;
    for (size_t m = k + 1; m < by_offset.size() && solution.offsets[by_offset[m]] < end; ++m) {
      const size_t j = by_offset[m];
      if (problem.buffers[j].size > 0 && lifetimes_overlap(problem.buffers[i], problem.buffers[j]))
        errors.push_back(describe(problem, i) + " and " + describe(problem, j) +
                         " overlap in time and address");
    }
  }
}

}  // namespace

std::vector<std::string> validate(const Problem& problem, const Solution& solution,
                                  size_t max_errors) {
  std::vector<std::string> errors;
  if (solution.offsets.size() != problem.buffers.size()) {
    errors.push_back("solution has " + std::to_string(solution.offsets.size()) +
                     " offsets for " + std::to_string(problem.buffers.size()) + " buffers");
    return errors;
  }
  for (size_t i = 0; i < problem.buffers.size() && errors.size() < max_errors; ++i)
    check_placement(problem, solution, i, errors);
  check_overlaps(problem, solution, max_errors, errors);
  const int64_t height = solution_height(problem, solution.offsets);
  if (height != solution.height)
    errors.push_back("height is " + std::to_string(solution.height) + " but buffers reach " +
                     std::to_string(height));
  if (problem.capacity > 0 && height > problem.capacity)
    errors.push_back("height " + std::to_string(height) + " exceeds capacity " +
                     std::to_string(problem.capacity));
  if (errors.size() > max_errors) errors.resize(max_errors);
  return errors;
}

}  // namespace tinyarena::allocation
