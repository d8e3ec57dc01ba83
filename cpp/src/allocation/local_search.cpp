#include "tinyarena/allocation/local_search.h"

#include <algorithm>

#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/sections.h"
#include "tinyarena/common/random.h"
#include "tinyarena/common/stopwatch.h"

namespace tinyarena::allocation {
namespace {

// First fit of an order, re-decoding only from the first position that changed.
// With a ceiling (> 0), a buffer marked `high` goes to the highest aligned
// offset clear of the placed buffers that ends within the ceiling (else, like
// the rest, to the lowest).
class FirstFit {
 public:
  FirstFit(const Problem& p, int64_t ceiling) : p_(p), overlaps_(make_sections(p).overlaps), ceiling_(ceiling) {}

  struct State {
    std::vector<int> order;
    std::vector<int32_t> position;  // per buffer: its index in order
    std::vector<uint8_t> high;      // per buffer: placed from the ceiling down
    std::vector<int64_t> offsets;
    std::vector<int64_t> reach;     // per position: height of the plan of order[0..i]
    int64_t height() const { return reach.empty() ? 0 : reach.back(); }
  };

  State start(std::vector<int> order, WorkBudget& budget) const {
    State s;
    s.order = std::move(order);
    s.position.assign(p_.buffers.size(), 0);
    s.high.assign(p_.buffers.size(), 0);
    s.offsets.assign(p_.buffers.size(), 0);
    s.reach.assign(s.order.size(), 0);
    decode(s, 0, budget);
    return s;
  }

  const std::vector<int32_t>& overlaps(int b) const { return overlaps_[b]; }

  // Offsets of order[from..] (the earlier ones stay); pinned buffers sit at
  // their pins. Charges the work: each buffer once (positions, the copy of
  // the state, the choice of a move: three passes), and each fit.
  void decode(State& s, size_t from, WorkBudget& budget) const {
    int64_t work = 3 * static_cast<int64_t>(s.order.size());
    for (size_t i = 0; i < s.order.size(); ++i) s.position[s.order[i]] = static_cast<int32_t>(i);
    int64_t reach = from > 0 ? s.reach[from - 1] : 0;
    for (size_t i = from; i < s.order.size(); ++i) {
      const int b = s.order[i];
      const Buffer& buffer = p_.buffers[b];
      s.offsets[b] = buffer.fixed_offset ? *buffer.fixed_offset : buffer.size > 0 ? fit(s, b, i, work) : 0;
      if (buffer.size > 0) reach = std::max(reach, s.offsets[b] + buffer.size);
      s.reach[i] = reach;
      ++work;
    }
    budget.charge(work);
  }

 private:
  // Lowest aligned offset clear of the overlapping buffers placed before
  // position i and of every overlapping pinned buffer. Adds its work: the
  // overlapping buffers scanned and the sort of the k busy ones (measured to
  // grow like k * k / 4 on zero-slack instances: they come nearly sorted).
  int64_t fit(const State& s, int b, size_t i, int64_t& work) const {
    busy_.clear();
    for (int32_t o : overlaps_[b])
      if (static_cast<size_t>(s.position[o]) < i || p_.buffers[o].fixed_offset)
        busy_.emplace_back(start_of(s, o), start_of(s, o) + p_.buffers[o].size);
    std::sort(busy_.begin(), busy_.end());
    const auto busy = static_cast<int64_t>(busy_.size());
    work += static_cast<int64_t>(overlaps_[b].size()) + busy * busy / 4;
    const Buffer& buffer = p_.buffers[b];
    if (ceiling_ > 0 && s.high[b]) {
      const int64_t highest = highest_fit(buffer);
      if (highest >= 0) return highest;
    }
    return lowest_fit(busy_, buffer.size, buffer.alignment);
  }

  int64_t start_of(const State& s, int32_t o) const {
    return p_.buffers[o].fixed_offset ? *p_.buffers[o].fixed_offset : s.offsets[o];
  }

  // Highest aligned offset clear of the busy ranges ([start, end), by start)
  // that ends within the ceiling, or -1.
  int64_t highest_fit(const Buffer& buffer) const {
    int64_t gap_start = 0, highest = -1;
    const auto try_gap = [&](int64_t gap_end) {
      const int64_t end = std::min(gap_end, ceiling_) - buffer.size;
      if (end < 0) return;
      const int64_t top = align_down(end, buffer.alignment);
      if (top >= align_up(gap_start, buffer.alignment)) highest = std::max(highest, top);
    };
    for (const auto& [start, end] : busy_) {
      if (gap_start >= ceiling_) break;
      try_gap(start);
      gap_start = std::max(gap_start, end);
    }
    if (gap_start < ceiling_) try_gap(ceiling_);
    return highest;
  }

  const Problem& p_;
  std::vector<std::vector<int32_t>> overlaps_;
  int64_t ceiling_;
  mutable std::vector<std::pair<int64_t, int64_t>> busy_;  // [start, end) of the buffers in the way
};

// A buffer that reaches the top of the plan (free to move), or -1.
int top_buffer(const Problem& p, const FirstFit::State& s, SplitMix64& rng) {
  std::vector<int> top;
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (!p.buffers[b].fixed_offset && p.buffers[b].size > 0 && s.offsets[b] + p.buffers[b].size == s.height())
      top.push_back(static_cast<int>(b));
  return top.empty() ? -1 : top[rng.below(top.size())];
}

// Bytes above `line` summed over the buffers that reach past it (0: the
// plan is within it): a measure that falls with every buffer brought down,
// where the height falls only once the last one at the top is.
int64_t bytes_above(const Problem& p, const FirstFit::State& s, int64_t line) {
  int64_t above = 0;
  for (size_t b = 0; b < p.buffers.size(); ++b) above += std::max<int64_t>(0, s.offsets[b] + p.buffers[b].size - line);
  return above;
}

// A free buffer reaching past `line` placed after the first position, or -1.
int buffer_above(const Problem& p, const FirstFit::State& s, int64_t line, SplitMix64& rng) {
  std::vector<int> above;
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (!p.buffers[b].fixed_offset && p.buffers[b].size > 0 && s.offsets[b] + p.buffers[b].size > line &&
        s.position[b] > 0)
      above.push_back(static_cast<int>(b));
  return above.empty() ? -1 : above[rng.below(above.size())];
}

// A free buffer live with `culprit` and placed before it, or -1.
int neighbour_before(const Problem& p, const FirstFit& first_fit, const FirstFit::State& s, int culprit,
                     SplitMix64& rng) {
  std::vector<int> before;
  for (int32_t o : first_fit.overlaps(culprit))
    if (!p.buffers[o].fixed_offset && p.buffers[o].size > 0 && s.position[o] < s.position[culprit])
      before.push_back(o);
  return before.empty() ? -1 : before[rng.below(before.size())];
}

}  // namespace

LocalSearchResult local_search(const Problem& problem, LocalSearchOptions options) {
  check_pins(problem);
  const Stopwatch clock;
  WorkBudget& budget = options.budget;
  const FirstFit first_fit(problem, options.two_sided ? options.target_height : 0);
  const int64_t bound = std::max(options.target_height, lower_bound_bytes(problem));
  const bool targeted = options.target_height > 0;
  const auto n = static_cast<int64_t>(problem.buffers.size());
  // The measure a plan is judged by: its height, or with a target its bytes above it.
  const auto measure = [&](const FirstFit::State& s) {
    if (!targeted) return s.height();
    budget.charge(n);
    return bytes_above(problem, s, bound);
  };
  std::vector<std::vector<int>> orders{size_descending_order(problem), area_descending_order(problem),
                                       lifetime_descending_order(problem), urgency_order(problem)};
  if (options.start_order > 0) orders = {std::move(orders[(options.start_order - 1) % orders.size()])};
  FirstFit::State best = first_fit.start(std::move(orders[0]), budget);
  int64_t best_measure = measure(best);
  for (size_t k = 1; k < orders.size(); ++k) {
    FirstFit::State seeded = first_fit.start(std::move(orders[k]), budget);
    const int64_t seeded_measure = measure(seeded);
    if (seeded_measure < best_measure) best = std::move(seeded), best_measure = seeded_measure;
  }
  SplitMix64 rng{options.seed};
  LocalSearchResult result;
  for (; best.height() > bound && (options.iterations <= 0 || result.iterations < options.iterations) && !budget.spent();
       ++result.iterations) {
    const int culprit = targeted ? buffer_above(problem, best, bound, rng) : top_buffer(problem, best, rng);
    if (targeted) budget.charge(n);
    const size_t from = culprit >= 0 ? static_cast<size_t>(best.position[culprit]) : 0;
    if (from == 0) break;  // the top buffer goes first already: nothing to move
    FirstFit::State trial = best;
    const bool flip = options.two_sided && rng.below(2) == 0;
    const int flipped = flip ? neighbour_before(problem, first_fit, best, culprit, rng) : -1;
    if (flipped >= 0) {
      // Turn a buffer placed before the culprit and live with it the other way up (out of its way).
      trial.high[flipped] ^= 1;
      first_fit.decode(trial, static_cast<size_t>(trial.position[flipped]), budget);
    } else {
      // Move the culprit to an earlier position (it then gets an earlier pick of the gaps).
      const size_t to = rng.below(from);
      std::rotate(trial.order.begin() + to, trial.order.begin() + from, trial.order.begin() + from + 1);
      first_fit.decode(trial, to, budget);
    }
    const int64_t trial_measure = measure(trial);
    if (trial_measure <= best_measure) best = std::move(trial), best_measure = trial_measure;
  }
  result.solution = Solution{best.offsets, best.height()};
  result.order = best.order;
  result.work = budget.used();
  result.seconds = clock.seconds();
  return result;
}

}  // namespace tinyarena::allocation
