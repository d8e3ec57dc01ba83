#include "tinyarena/allocation/lower_bound.h"

#include <algorithm>
#include <utility>

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

std::vector<LiveChange> live_bytes_changes(const Problem& problem) {
  std::vector<std::pair<int32_t, int64_t>> events;  // (step, bytes starting or, negative, ending there)
  for (const Buffer& b : problem.buffers) {
    if (b.size <= 0 || b.last < b.first) continue;
    events.emplace_back(std::max(b.first, 0), b.size);
    events.emplace_back(b.last + 1, -b.size);
  }
  std::sort(events.begin(), events.end());
  std::vector<LiveChange> changes;
  int64_t live = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    live += events[i].second;
    if (i + 1 == events.size() || events[i + 1].first != events[i].first) changes.push_back({events[i].first, live});
  }
  return changes;
}

int64_t lower_bound_bytes(const Problem& problem) {
  int64_t bound = 0;
  for (const LiveChange& change : live_bytes_changes(problem)) bound = std::max(bound, change.live);
  return bound;
}

int64_t lower_bound_with_pins(const Problem& problem) {
  int64_t bound = lower_bound_bytes(problem);
  for (const Buffer& b : problem.buffers)
    if (b.fixed_offset && b.size > 0) bound = std::max(bound, *b.fixed_offset + b.size);
  return bound;
}

}  // namespace tinyarena::allocation
