// Lists per key (a step, an event) stored flat: one array of entries
// grouped by key and an offset per key, so building them takes two
// allocations, not one per key, and reading list after list walks memory in
// order. The searches that build one per part of a problem spend much of
// their time in the allocator otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tinyarena {

template <class T>
class FlatLists {
 public:
  struct Range {
    const T *first, *last;
    const T* begin() const { return first; }
    const T* end() const { return last; }
    size_t size() const { return static_cast<size_t>(last - first); }
  };

  FlatLists() = default;
  // `entries` (key, value) with keys below `keys`, grouped by key; within a
  // key in the order given (a counting sort).
  FlatLists(size_t keys, const std::vector<std::pair<int32_t, T>>& entries) : start_(keys + 1, 0) {
    for (const auto& entry : entries) ++start_[entry.first + 1];
    for (size_t k = 0; k < keys; ++k) start_[k + 1] += start_[k];
    entries_.resize(entries.size());
    std::vector<size_t> next(start_.begin(), start_.end() - 1);
    for (const auto& entry : entries) entries_[next[entry.first]++] = entry.second;
  }

  Range operator[](int32_t key) const { return span(key, key + 1); }
  // The lists of keys [first_key, last_key) as one (they lie side by side).
  Range span(int32_t first_key, int32_t last_key) const {
    return {entries_.data() + start_[first_key], entries_.data() + start_[last_key]};
  }

 private:
  std::vector<T> entries_;
  std::vector<size_t> start_;  // per key: its first entry; then the end
};

}  // namespace tinyarena
