// A part's events and lists (guillotine_part.h): built once per part the
// nested-cut search packs, in time linear in its buffers but for the sorts.
#include "guillotine_part.h"

#include <algorithm>
#include <utility>

namespace tinyarena::allocation::nested_cuts {

FlatLists<int32_t> events_ahead(const Part& part, bool backwards) {
  std::vector<std::pair<int32_t, int32_t>> entries;
  for (int32_t e = 0; e <= part.sections; ++e) {
    const size_t first = entries.size();
    for (int32_t u : backwards ? part.ending[e] : part.starting[e]) {
      const int32_t next = backwards ? part.start[u] : part.end[u];
      const bool seen = std::any_of(entries.begin() + static_cast<std::ptrdiff_t>(first), entries.end(),
                                    [&](const auto& entry) { return entry.second == next; });
      if (next > 0 && next < part.sections && !seen) entries.emplace_back(e, next);
    }
  }
  return FlatLists<int32_t>(part.sections + 1, entries);
}

Part make_part(const Problem& p, std::vector<int32_t> buffers) {
  Part part;
  std::vector<int32_t> times;
  times.reserve(2 * buffers.size());
  for (int32_t b : buffers) times.insert(times.end(), {p.buffers[b].first, p.buffers[b].last + 1});
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  const auto event = [&](int32_t t) {
    return static_cast<int32_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  part.sections = static_cast<int32_t>(times.size()) - 1;
  for (auto* per_buffer : {&part.start, &part.end}) per_buffer->reserve(buffers.size());
  part.size.reserve(buffers.size());
  for (int32_t b : buffers) {
    part.size.push_back(p.buffers[b].size);
    part.start.push_back(event(p.buffers[b].first));
    part.end.push_back(event(p.buffers[b].last + 1));
  }
  std::vector<int32_t> order(buffers.size());  // largest first: every list keeps this order
  for (size_t u = 0; u < order.size(); ++u) order[u] = static_cast<int32_t>(u);
  std::sort(order.begin(), order.end(), [&](int32_t u, int32_t v) { return larger_first(part.size[u], u, part.size[v], v); });
  std::vector<std::pair<int32_t, int32_t>> starts, ends;
  std::vector<std::pair<int32_t, Item>> touches;
  starts.reserve(order.size());
  ends.reserve(order.size());
  touches.reserve(2 * order.size());
  for (int32_t u : order) {
    starts.emplace_back(part.start[u], u);
    ends.emplace_back(part.end[u], u);
    touches.push_back({part.end[u], Item{u, part.size[u]}});
    touches.push_back({part.start[u], Item{u, -part.size[u]}});
  }
  part.starting = FlatLists<int32_t>(times.size(), starts);
  part.ending = FlatLists<int32_t>(times.size(), ends);
  part.touching = FlatLists<Item>(times.size(), touches);
  for (const bool backwards : {false, true}) part.ahead[backwards] = events_ahead(part, backwards);
  part.buffers = std::move(buffers);
  return part;
}

std::vector<std::vector<int32_t>> time_components(const Problem& p, std::vector<int32_t> buffers) {
  std::sort(buffers.begin(), buffers.end(), [&](int32_t a, int32_t b) {
    return std::pair(p.buffers[a].first, a) < std::pair(p.buffers[b].first, b);
  });
  std::vector<std::vector<int32_t>> components;
  size_t begin = 0;   // the current component's first buffer in `buffers`
  int32_t reach = 0;  // its last step
  for (size_t i = 0; i <= buffers.size(); ++i) {
    if (i == buffers.size() || (i > begin && p.buffers[buffers[i]].first > reach)) {
      components.emplace_back(buffers.begin() + static_cast<std::ptrdiff_t>(begin),
                              buffers.begin() + static_cast<std::ptrdiff_t>(i));
      std::sort(components.back().begin(), components.back().end());
      begin = i;
    }
    if (i < buffers.size()) reach = i == begin ? p.buffers[buffers[i]].last : std::max(reach, p.buffers[buffers[i]].last);
  }
  return components;
}

int64_t flat_bytes(const Problem& p, const Part& part) {
  std::vector<int64_t> live(part.sections + 1, 0);
  for (size_t i = 0; i < part.buffers.size(); ++i) {
    const int64_t size = p.buffers[part.buffers[i]].size;
    live[part.start[i]] += size;
    live[part.end[i]] -= size;
  }
  for (int32_t j = 1; j < part.sections; ++j)
    if ((live[j] += live[j - 1]) != live[0]) return -1;
  return live[0];
}

std::vector<std::vector<int32_t>> event_components(const Part& part) {
  std::vector<int32_t> parent(part.buffers.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int32_t>(i);
  const auto root = [&](int32_t u) {
    while (parent[u] != u) u = parent[u] = parent[parent[u]];
    return u;
  };
  for (int32_t e = 1; e < part.sections; ++e) {
    int32_t first = -1;
    for (const auto& side : {part.ending[e], part.starting[e]})
      for (int32_t u : side) {
        if (first < 0) first = root(u);
        parent[root(u)] = first;
      }
  }
  std::vector<std::vector<int32_t>> components;
  std::vector<int32_t> index(parent.size(), -1);
  for (size_t i = 0; i < parent.size(); ++i) {
    int32_t& k = index[root(static_cast<int32_t>(i))];
    if (k < 0) {
      k = static_cast<int32_t>(components.size());
      components.emplace_back();
    }
    components[k].push_back(static_cast<int32_t>(i));
  }
  return components;
}

}  // namespace tinyarena::allocation::nested_cuts
