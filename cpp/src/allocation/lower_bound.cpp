#include "tinyarena/allocation/lower_bound.h"

#include <algorithm>

namespace tinyarena::allocation {

std::vector<int64_t> live_bytes_per_step(const Problem& problem) {
  int32_t steps = 0;
  for (const Buffer& b : problem.buffers) steps = std::max(steps, b.last + 1);
  std::vector<int64_t> delta(static_cast<size_t>(steps) + 1, 0);
  for (const Buffer& b : problem.buffers) {
    if (b.size <= 0 || b.last < b.first) continue;
    delta[std::max(b.first, 0)] += b.size;
    delta[b.last + 1] -= b.size;
  }
  std::vector<int64_t> live(steps, 0);
  int64_t running = 0;
  for (int32_t t = 0; t < steps; ++t) live[t] = running += delta[t];
  return live;
}

int64_t lower_bound_bytes(const Problem& problem) {
  const auto live = live_bytes_per_step(problem);
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

int64_t lower_bound_with_pins(const Problem& problem) {
  int64_t bound = lower_bound_bytes(problem);
  for (const Buffer& b : problem.buffers)
    if (b.fixed_offset && b.size > 0) bound = std::max(bound, *b.fixed_offset + b.size);
  return bound;
}

}  // namespace tinyarena::allocation
