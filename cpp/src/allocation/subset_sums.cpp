#include "tinyarena/allocation/subset_sums.h"

#include <algorithm>
#include <cstddef>
#include <functional>

namespace tinyarena::allocation {

void SubsetSums::reset(int64_t limit) {
  limit_ = limit;
  sums_.assign(1, 0);
}

bool SubsetSums::add(int64_t size) {
  // One pass merges the sums with themselves shifted by `size` (those within the limit), dropping repeats.
  const size_t kept_end = sums_.size();  // sums_[i] kept as they are, sums_[j] + size moved (j < moved_end)
  const size_t moved_end = static_cast<size_t>(std::upper_bound(sums_.begin(), sums_.end(), limit_ - size) - sums_.begin());
  merged_.clear();
  size_t i = 0, j = 0;
  while (i < kept_end && j < moved_end) {
    const int64_t kept = sums_[i], moved = sums_[j] + size;
    merged_.push_back(std::min(kept, moved));
    i += kept <= moved;
    j += moved <= kept;
  }
  merged_.insert(merged_.end(), sums_.begin() + static_cast<std::ptrdiff_t>(i), sums_.end());
  for (; j < moved_end; ++j) merged_.push_back(sums_[j] + size);
  sums_.swap(merged_);
  return sums_.size() <= max_sums_;
}

std::optional<bool> sums_to(const std::vector<int64_t>& sizes, int64_t target, int64_t& nodes) {
  std::vector<int64_t> left(sizes.size() + 1, 0);  // left[i]: the bytes of sizes[i..]
  for (size_t i = sizes.size(); i-- > 0;) left[i] = left[i + 1] + sizes[i];
  bool gave_up = false;
  const auto search = [&](auto& self, size_t i, int64_t need) -> bool {
    if (need == 0) return true;
    if (need > left[i]) return false;
    if (nodes-- <= 0) return gave_up = true, false;
    return (sizes[i] <= need && self(self, i + 1, need - sizes[i])) || (!gave_up && self(self, i + 1, need));
  };
  const bool found = search(search, 0, target);
  if (found) return true;
  if (gave_up) return std::nullopt;
  return false;
}

bool may_fill_room(std::vector<int64_t>& sizes, int64_t room, int64_t& nodes_used) {
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  int64_t nodes = kRoomNodes;
  const std::optional<bool> found = sums_to(sizes, room, nodes);
  nodes_used = kRoomNodes - std::max<int64_t>(nodes, 0);
  return found.value_or(true);
}

bool SubsetSums::reaches(int64_t lo, int64_t hi) const {
  const auto it = std::lower_bound(sums_.begin(), sums_.end(), lo);
  return it != sums_.end() && *it <= hi;
}

}  // namespace tinyarena::allocation
