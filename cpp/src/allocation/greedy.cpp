#include "tinyarena/allocation/greedy.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

#include "tinyarena/allocation/lower_bound.h"

namespace tinyarena::allocation {
namespace {

// Placed buffers whose lifetimes overlap `buffer`, sorted by offset.
std::vector<int> placed_neighbours(const Problem& problem, const std::vector<int>& placed,
                                   const std::vector<int64_t>& offsets, const Buffer& buffer) {
  std::vector<int> neighbours;
  for (int other : placed) {
    const Buffer& b = problem.buffers[other];
    if (b.size > 0 && lifetimes_overlap(b, buffer)) neighbours.push_back(other);
  }
  std::stable_sort(neighbours.begin(), neighbours.end(),
                   [&](int a, int b) { return offsets[a] < offsets[b]; });
  return neighbours;
}

// Lowest aligned offset with room for `buffer` below the next neighbour.
int64_t first_fit_offset(const Problem& problem, const std::vector<int>& neighbours,
                         const std::vector<int64_t>& offsets, const Buffer& buffer) {
  int64_t candidate = 0;
  for (int other : neighbours) {
    if (offsets[other] >= candidate + buffer.size) break;
    candidate = std::max(candidate,
                         align_up(offsets[other] + problem.buffers[other].size, buffer.alignment));
  }
  return candidate;
}

// Aligned start of the smallest gap that holds `buffer`, else the top.
int64_t best_fit_offset(const Problem& problem, const std::vector<int>& neighbours,
                        const std::vector<int64_t>& offsets, const Buffer& buffer) {
  int64_t gap_start = 0;
  int64_t best_offset = -1;
  int64_t best_gap = std::numeric_limits<int64_t>::max();
  for (int other : neighbours) {
    const int64_t start = align_up(gap_start, buffer.alignment);
    const int64_t gap = offsets[other] - gap_start;
    if (offsets[other] - start >= buffer.size && gap < best_gap) {
      best_gap = gap;
      best_offset = start;
    }
    gap_start = std::max(gap_start, offsets[other] + problem.buffers[other].size);
  }
  return best_offset >= 0 ? best_offset : align_up(gap_start, buffer.alignment);
}

template <typename OffsetRule>
Solution place_in_order(const Problem& problem, const std::vector<int>& order, OffsetRule rule) {
  Solution solution;
  solution.offsets.assign(problem.buffers.size(), 0);
  std::vector<int> placed;
  placed.reserve(problem.buffers.size());
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    if (problem.buffers[i].fixed_offset) {
      solution.offsets[i] = *problem.buffers[i].fixed_offset;
      placed.push_back(static_cast<int>(i));
    }
  }
  for (int index : order) {
    const Buffer& buffer = problem.buffers[index];
    if (buffer.fixed_offset) continue;
    if (buffer.size > 0) {
      const auto neighbours = placed_neighbours(problem, placed, solution.offsets, buffer);
      solution.offsets[index] = rule(problem, neighbours, solution.offsets, buffer);
    }
    placed.push_back(index);
  }
  solution.height = solution_height(problem, solution.offsets);
  return solution;
}

}  // namespace

Solution place_first_fit(const Problem& problem, const std::vector<int>& order) {
  return place_in_order(problem, order, first_fit_offset);
}

Solution place_best_fit(const Problem& problem, const std::vector<int>& order) {
  return place_in_order(problem, order, best_fit_offset);
}

std::vector<int> size_descending_order(const Problem& problem) {
  std::vector<int> order(problem.buffers.size());
  std::iota(order.rbegin(), order.rend(), 0);  // last-first, as TFLM inserts them
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return problem.buffers[a].size > problem.buffers[b].size;
  });
  return order;
}

namespace {

// Indices sorted by `key` descending, ties in index order.
template <typename Key>
std::vector<int> descending_by(const Problem& problem, Key key) {
  std::vector<int> order(problem.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) > key(b); });
  return order;
}

int64_t lifetime(const Buffer& b) { return static_cast<int64_t>(b.last) - b.first + 1; }

}  // namespace

std::vector<int> area_descending_order(const Problem& problem) {
  return descending_by(problem, [&](int i) { return problem.buffers[i].size * lifetime(problem.buffers[i]); });
}

std::vector<int> lifetime_descending_order(const Problem& problem) {
  return descending_by(problem, [&](int i) { return std::make_pair(lifetime(problem.buffers[i]), problem.buffers[i].size); });
}

std::vector<int> urgency_order(const Problem& problem) {
  const std::vector<int64_t> live = live_bytes_per_step(problem);
  return descending_by(problem, [&](int i) {
    const Buffer& b = problem.buffers[i];
    int64_t peak = 0;
    for (int32_t t = std::max(b.first, 0); t <= b.last && t < static_cast<int32_t>(live.size()); ++t)
      peak = std::max(peak, live[t]);
    return std::make_pair(peak, b.size);
  });
}

Solution greedy_size_first_fit(const Problem& problem) {
  check_pins(problem);
  return place_first_fit(problem, size_descending_order(problem));
}

Solution greedy_size_best_fit(const Problem& problem) {
  check_pins(problem);
  return place_best_fit(problem, size_descending_order(problem));
}

}  // namespace tinyarena::allocation
