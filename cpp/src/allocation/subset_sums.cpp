#include "tinyarena/allocation/subset_sums.h"

#include <algorithm>
#include <iterator>

namespace tinyarena::allocation {

void SubsetSums::reset(int64_t limit) {
  limit_ = limit;
  sums_.assign(1, 0);
}

bool SubsetSums::add(int64_t size) {
  shifted_.clear();
  for (int64_t s : sums_) {
    if (s + size > limit_) break;  // sums_ ascending
    shifted_.push_back(s + size);
  }
  merged_.clear();
  std::merge(sums_.begin(), sums_.end(), shifted_.begin(), shifted_.end(), std::back_inserter(merged_));
  merged_.erase(std::unique(merged_.begin(), merged_.end()), merged_.end());
  sums_.swap(merged_);
  return sums_.size() <= max_sums_;
}

bool SubsetSums::reaches(int64_t lo, int64_t hi) const {
  const auto it = std::lower_bound(sums_.begin(), sums_.end(), lo);
  return it != sums_.end() && *it <= hi;
}

}  // namespace tinyarena::allocation
