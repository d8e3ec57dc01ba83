#include "tinyarena/allocation/sections.h"

#include <algorithm>

namespace tinyarena::allocation {

Sections make_sections(const Problem& problem) {
  const size_t n = problem.buffers.size();
  // Section boundaries: every step where some buffer starts or has just ended.
  std::vector<int64_t> points;
  for (const Buffer& b : problem.buffers) {
    if (b.size <= 0) continue;
    points.push_back(b.first);
    points.push_back(static_cast<int64_t>(b.last) + 1);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  const auto index_of = [&](int64_t step) {
    return static_cast<int32_t>(std::lower_bound(points.begin(), points.end(), step) - points.begin());
  };
  Sections s;
  s.lo.assign(n, 0);
  s.hi.assign(n, 0);
  const size_t count = points.empty() ? 0 : points.size() - 1;
  s.members.assign(count, {});
  s.crossings.assign(count, 0);
  for (size_t i = 0; i < n; ++i) {
    const Buffer& b = problem.buffers[i];
    if (b.size <= 0) continue;
    s.lo[i] = index_of(b.first);
    s.hi[i] = index_of(static_cast<int64_t>(b.last) + 1);
    for (int32_t k = s.lo[i]; k < s.hi[i]; ++k) s.members[k].push_back(static_cast<int32_t>(i));
    for (int32_t k = s.lo[i]; k + 1 < s.hi[i]; ++k) ++s.crossings[k];
  }
  // Two buffers overlap in time iff they share a section; each pair found at
  // the later of their first sections, so it is listed once per side.
  s.overlaps.assign(n, {});
  for (size_t k = 0; k < count; ++k) {
    for (int32_t a : s.members[k]) {
      if (s.lo[a] != static_cast<int32_t>(k)) continue;
      for (int32_t b : s.members[k]) {
        if (b == a || (s.lo[b] == static_cast<int32_t>(k) && b < a)) continue;
        s.overlaps[a].push_back(b);
        s.overlaps[b].push_back(a);
      }
    }
  }
  for (auto& o : s.overlaps) std::sort(o.begin(), o.end());
  s.pins.assign(count, {});
  for (size_t k = 0; k < count; ++k) {
    for (int32_t b : s.members[k])
      if (problem.buffers[b].fixed_offset) s.pins[k].push_back(b);
    std::sort(s.pins[k].begin(), s.pins[k].end(), [&](int32_t a, int32_t b) {
      return *problem.buffers[a].fixed_offset < *problem.buffers[b].fixed_offset;
    });
  }
  return s;
}

int64_t overlapping_pairs(const Problem& problem) {
  std::vector<int32_t> firsts, lasts;
  for (const Buffer& b : problem.buffers)
    if (b.size > 0) firsts.push_back(b.first), lasts.push_back(b.last);
  std::sort(firsts.begin(), firsts.end());
  std::sort(lasts.begin(), lasts.end());
  // Each pair counted at the later first step (ties: the later in sort
  // order): the buffers sorted before it, less those ended by then.
  int64_t pairs = 0;
  for (size_t i = 0; i < firsts.size(); ++i)
    pairs += static_cast<int64_t>(i) - (std::lower_bound(lasts.begin(), lasts.end(), firsts[i]) - lasts.begin());
  return pairs;
}

std::vector<std::vector<int32_t>> partitions(const Problem& problem, const Sections& s) {
  std::vector<std::vector<int32_t>> groups;
  std::vector<int32_t> group_of_section(s.members.size(), -1);
  for (size_t k = 0; k < s.members.size(); ++k) {
    if (s.members[k].empty()) continue;
    const bool joins_previous = k > 0 && s.crossings[k - 1] > 0;
    if (!joins_previous) groups.emplace_back();
    group_of_section[k] = static_cast<int32_t>(groups.size()) - 1;
  }
  for (size_t i = 0; i < problem.buffers.size(); ++i)
    if (problem.buffers[i].size > 0) groups[group_of_section[s.lo[i]]].push_back(static_cast<int32_t>(i));
  return groups;
}

}  // namespace tinyarena::allocation
