#include "tinyarena/allocation/greedy.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <numeric>
#include <utility>

#include "tinyarena/allocation/lower_bound.h"

namespace tinyarena::allocation {
namespace {

// A placed buffer as the greedy scan reads it: its bytes, steps and when it was placed.
struct Placed {
  int64_t offset, end;
  int32_t first, last, order;
};

// The placed buffers by offset, and indexed by blocks of steps so the
// buffers live with a new one are listed without scanning them all (each
// is listed in every block its lifetime touches, the blocks as narrow as
// keeps that within kListingsPerBuffer listings per buffer on average).
// Where the blocks list so many that sorting them would cost more, the
// buffers by offset are scanned instead.
class PlacedIndex {
 public:
  static constexpr int64_t kListingsPerBuffer = 8;
  static constexpr int32_t kMaxBlocks = 4096;

  explicit PlacedIndex(const Problem& problem) {
    int32_t t0 = std::numeric_limits<int32_t>::max(), t1 = std::numeric_limits<int32_t>::min();
    for (const Buffer& b : problem.buffers)
      if (b.size > 0) t0 = std::min(t0, b.first), t1 = std::max(t1, b.last);
    if (t0 > t1) t0 = t1 = 0;  // nothing takes space
    const int64_t span = static_cast<int64_t>(t1) - t0 + 1;
    first_step_ = t0;
    width_ = std::max<int64_t>(1, (span + kMaxBlocks - 1) / kMaxBlocks);
    while (width_ < span && listings(problem) > kListingsPerBuffer * static_cast<int64_t>(problem.buffers.size()))
      width_ *= 2;
    blocks_.resize(static_cast<size_t>((span + width_ - 1) / width_));
  }

  void add(const Buffer& b, int64_t offset) {
    const auto id = static_cast<int32_t>(placed_.size());
    placed_.push_back(Placed{offset, offset + b.size, b.first, b.last, id});
    const auto at = std::upper_bound(by_offset_.begin(), by_offset_.end(), offset,
                                     [](int64_t o, const Placed& x) { return o < x.offset; });
    by_offset_.insert(at, placed_.back());
    seen_.push_back(0);
    for (int64_t k = block(b.first); k <= block(b.last); ++k) blocks_[k].push_back(id);
  }

  // The placed buffers live with `b`, by offset (ties in placement order).
  const std::vector<Placed>& live_with(const Buffer& b) {
    ++stamp_;
    live_.clear();
    int64_t listed = 0;
    for (int64_t k = block(b.first); k <= block(b.last); ++k) listed += static_cast<int64_t>(blocks_[k].size());
    if (listed * std::max(1, std::ilogb(static_cast<double>(listed + 1))) > static_cast<int64_t>(placed_.size())) {
      for (const Placed& other : by_offset_)
        if (other.first <= b.last && b.first <= other.last) live_.push_back(other);
      return live_;
    }
    for (int64_t k = block(b.first); k <= block(b.last); ++k)
      for (int32_t id : blocks_[k]) {
        const Placed& other = placed_[id];
        if (std::exchange(seen_[id], stamp_) == stamp_ || other.first > b.last || b.first > other.last) continue;
        live_.push_back(other);
      }
    std::sort(live_.begin(), live_.end(), [](const Placed& x, const Placed& y) {
      return x.offset != y.offset ? x.offset < y.offset : x.order < y.order;
    });
    return live_;
  }

 private:
  int64_t block(int32_t step) const {
    return std::clamp<int64_t>((static_cast<int64_t>(step) - first_step_) / width_, 0, static_cast<int64_t>(blocks_.size()) - 1);
  }
  int64_t listings(const Problem& problem) const {
    int64_t total = 0;
    for (const Buffer& b : problem.buffers)
      if (b.size > 0) total += (static_cast<int64_t>(b.last) - first_step_) / width_ - (static_cast<int64_t>(b.first) - first_step_) / width_ + 1;
    return total;
  }

  int64_t first_step_ = 0, width_ = 1;
  std::vector<Placed> placed_;                // in placement order
  std::vector<Placed> by_offset_;             // by offset (ties in placement order)
  std::vector<std::vector<int32_t>> blocks_;  // per block of steps: the placed buffers live there
  std::vector<int32_t> seen_;                 // per placed buffer: the query that listed it last
  int32_t stamp_ = 0;
  std::vector<Placed> live_;                  // live_with's answer
};

// Lowest aligned offset with room for `buffer` below the next neighbour.
int64_t first_fit_offset(const std::vector<Placed>& neighbours, const Buffer& buffer) {
  int64_t candidate = 0;
  for (const Placed& other : neighbours) {
    if (other.offset >= candidate + buffer.size) break;
    candidate = std::max(candidate, align_up(other.end, buffer.alignment));
  }
  return candidate;
}

// Aligned start of the smallest gap that holds `buffer`, else the top.
int64_t best_fit_offset(const std::vector<Placed>& neighbours, const Buffer& buffer) {
  int64_t gap_start = 0;
  int64_t best_offset = -1;
  int64_t best_gap = std::numeric_limits<int64_t>::max();
  for (const Placed& other : neighbours) {
    const int64_t start = align_up(gap_start, buffer.alignment);
    const int64_t gap = other.offset - gap_start;
    if (other.offset - start >= buffer.size && gap < best_gap) {
      best_gap = gap;
      best_offset = start;
    }
    gap_start = std::max(gap_start, other.end);
  }
  return best_offset >= 0 ? best_offset : align_up(gap_start, buffer.alignment);
}

// Places the buffers in `order` (pins first, where pinned), each where
// `rule` puts it among the placed buffers live with it (by offset).
template <typename OffsetRule>
Solution place_in_order(const Problem& problem, const std::vector<int>& order, OffsetRule rule) {
  Solution solution;
  solution.offsets.assign(problem.buffers.size(), 0);
  PlacedIndex placed(problem);
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    if (!b.fixed_offset) continue;
    solution.offsets[i] = *b.fixed_offset;
    if (b.size > 0) placed.add(b, *b.fixed_offset);
  }
  for (int index : order) {
    const Buffer& buffer = problem.buffers[index];
    if (buffer.fixed_offset || buffer.size == 0) continue;  // a zero-size buffer stays at 0
    solution.offsets[index] = rule(placed.live_with(buffer), buffer);
    placed.add(buffer, solution.offsets[index]);
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

// Each buffer's peak is read from the steps where the live bytes change (the
// one in effect at its first step, then those up to its last), not step by
// step: trace time stamps spread lifetimes over millions of steps.
std::vector<int> urgency_order(const Problem& problem) {
  const std::vector<LiveChange> changes = live_bytes_changes(problem);
  std::vector<int64_t> peak(problem.buffers.size(), 0);
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    const int32_t first = std::max(b.first, 0);
    if (b.last < first) continue;
    auto it = std::upper_bound(changes.begin(), changes.end(), first,
                               [](int32_t step, const LiveChange& c) { return step < c.step; });
    if (it != changes.begin()) peak[i] = std::prev(it)->live;
    for (; it != changes.end() && it->step <= b.last; ++it) peak[i] = std::max(peak[i], it->live);
  }
  return descending_by(problem, [&](int i) { return std::make_pair(peak[i], problem.buffers[i].size); });
}

Solution greedy_size_first_fit(const Problem& problem) {
  check_pins(problem);
  return place_first_fit(problem, size_descending_order(problem));
}

Solution greedy_size_best_fit(const Problem& problem) {
  check_pins(problem);
  return place_best_fit(problem, size_descending_order(problem));
}

Solution best_greedy_plan(const Problem& problem, std::string& method) {
  Solution first_fit = greedy_size_first_fit(problem), best_fit = greedy_size_best_fit(problem);
  const bool best_fit_lower = best_fit.height < first_fit.height;
  method = best_fit_lower ? "greedy_size_best_fit" : "greedy_size_first_fit";
  return best_fit_lower ? best_fit : first_fit;
}

}  // namespace tinyarena::allocation
