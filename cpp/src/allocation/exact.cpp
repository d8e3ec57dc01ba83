#include "tinyarena/allocation/exact.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <functional>

#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/sections.h"
#include "tinyarena/allocation/validator.h"

namespace tinyarena::allocation {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kUnplaced = -1;

enum class Outcome { Found, NotFound, Aborted };

// Nodes and wall clock shared by every decision of one solve; once spent, stays spent.
class Budget {
 public:
  explicit Budget(const SearchBudget& b)
      : start_(Clock::now()), seconds_(b.seconds), node_limit_(b.node_limit) {}

  bool tick() {
    if (spent_) return false;
    ++nodes_;
    if (node_limit_ > 0 && nodes_ > node_limit_) spent_ = true;
    if (seconds_ > 0 && (nodes_ & 63) == 0 && elapsed() > seconds_) spent_ = true;
    return !spent_;
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  int64_t nodes() const { return nodes_; }
  bool spent() const { return spent_; }

 private:
  Clock::time_point start_;
  double seconds_;
  int64_t node_limit_;
  int64_t nodes_ = 0;
  bool spent_ = false;
};

// Buffer orders the search tries in turn (the tie-break of the canonical
// order, so the first dive of each is a different greedy packing): most
// crowded sections first, largest first, longest first, largest area first.
std::vector<std::vector<int32_t>> preorder_ranks(const Problem& p, const Sections& s) {
  std::vector<int64_t> load(s.members.size(), 0);
  for (size_t k = 0; k < s.members.size(); ++k)
    for (int32_t b : s.members[k]) load[k] += p.buffers[b].size;
  const size_t n = p.buffers.size();
  std::vector<int64_t> crowd(n, 0), size(n), length(n), width(n);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t k = s.lo[i]; k < s.hi[i]; ++k) crowd[i] = std::max(crowd[i], load[k]);
    size[i] = p.buffers[i].size;
    length[i] = static_cast<int64_t>(p.buffers[i].last) - p.buffers[i].first + 1;
    width[i] = s.hi[i] - s.lo[i];
  }
  using Key = std::tuple<int64_t, int64_t, int64_t>;
  const std::vector<std::function<Key(size_t)>> keys = {
      [&](size_t i) { return Key{crowd[i], width[i], size[i]}; },
      [&](size_t i) { return Key{size[i], length[i], crowd[i]}; },
      [&](size_t i) { return Key{length[i], size[i], crowd[i]}; },
      [&](size_t i) { return Key{size[i] * length[i], crowd[i], size[i]}; },
  };
  std::vector<std::vector<int32_t>> ranks;
  for (const auto& key : keys) {
    std::vector<int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return key(a) > key(b); });
    std::vector<int32_t> rank(n);
    for (size_t r = 0; r < n; ++r) rank[order[r]] = static_cast<int32_t>(r);
    ranks.push_back(std::move(rank));
  }
  return ranks;
}

// "Does this partition fit in `capacity`?" by depth-first search over
// canonical placements. State changes go on a trail, so a failed branch is
// undone exactly; a found branch leaves its offsets in place.
class Decision {
 public:
  Decision(const Problem& p, const Sections& s, const std::vector<int32_t>& rank, int64_t capacity, Budget& budget,
           int64_t node_limit)
      : p_(p), s_(s), rank_(rank), capacity_(capacity), budget_(budget), nodes_left_(node_limit) {
    offset_.assign(p.buffers.size(), kUnplaced);
    min_offset_.assign(p.buffers.size(), 0);
    floor_.assign(s.members.size(), 0);
    remaining_.assign(s.members.size(), 0);
    crossings_.assign(s.crossings.begin(), s.crossings.end());
    seen_.assign(s.members.size(), 0);
    for (size_t k = 0; k < s.members.size(); ++k)
      for (int32_t b : s.members[k]) remaining_[k] += p.buffers[b].size;
  }

  // The buffers of one partition; on Found, offset(b) holds their placement.
  Outcome run(std::vector<int32_t> part) {
    std::sort(part.begin(), part.end(), [&](int32_t a, int32_t b) { return rank_[a] < rank_[b]; });
    for (int32_t b : part)
      if (p_.buffers[b].size > capacity_) return Outcome::NotFound;
    return search(part, span_of(part), 0, -1);
  }

  int64_t offset(int32_t b) const { return offset_[b]; }

 private:
  struct Span {
    int32_t lo, hi;  // sections [lo, hi)
  };
  struct Candidate {
    int64_t at;
    int32_t rank, buffer;
  };

  Span span_of(const std::vector<int32_t>& part) const {
    Span span{std::numeric_limits<int32_t>::max(), 0};
    for (int32_t b : part) span = {std::min(span.lo, s_.lo[b]), std::max(span.hi, s_.hi[b])};
    return span;
  }

  void set(int64_t& slot, int64_t value) {
    trail_.emplace_back(&slot, slot);
    slot = value;
  }
  void undo(size_t mark) {
    for (; trail_.size() > mark; trail_.pop_back()) *trail_.back().first = trail_.back().second;
  }

  bool pinned(int32_t b) const { return p_.buffers[b].fixed_offset.has_value(); }
  // Where b goes if it is placed next: its pin, else the lowest aligned offset above its placed neighbours.
  int64_t next_offset(int32_t b) const { return pinned(b) ? *p_.buffers[b].fixed_offset : min_offset_[b]; }

  // Canonical order: offsets non-decreasing, ties by rank.
  Outcome search(const std::vector<int32_t>& part, Span span, int64_t at_least, int32_t after_rank) {
    if (--nodes_left_ < 0 || !budget_.tick()) return Outcome::Aborted;
    // A placement at or above `lowest_top` leaves room for a whole unplaced buffer below it: dominated.
    int64_t lowest_top = std::numeric_limits<int64_t>::max();
    bool done = true;
    for (int32_t b : part) {
      if (offset_[b] != kUnplaced) continue;
      done = false;
      if (pinned(b) && next_offset(b) < at_least) return Outcome::NotFound;  // passed its pin
      if (!pinned(b)) lowest_top = std::min(lowest_top, min_offset_[b] + p_.buffers[b].size);
    }
    if (done) return Outcome::Found;
    if (!sections_can_fill(span, at_least, after_rank)) return Outcome::NotFound;
    std::vector<Candidate> candidates;
    for (int32_t b : part) {
      if (offset_[b] != kUnplaced) continue;
      const int64_t at = next_offset(b);
      if (at < at_least || (at == at_least && rank_[b] < after_rank)) continue;
      if (at >= lowest_top || at + p_.buffers[b].size > capacity_) continue;
      candidates.push_back({at, rank_[b], b});
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.at != b.at ? a.at < b.at : a.rank < b.rank;
    });
    for (const Candidate& c : candidates) {
      const size_t mark = trail_.size();
      if (place(c.buffer, c.at, span)) {
        const Outcome outcome = descend(part, span, c);
        if (outcome != Outcome::NotFound) return outcome;
      }
      undo(mark);
    }
    return Outcome::NotFound;
  }

  // Each section's unplaced bytes must fit above the lowest start the
  // canonical order still allows there: a buffer whose next offset is
  // `at_least` but ranks before `after_rank` can only start higher.
  bool sections_can_fill(Span span, int64_t at_least, int32_t after_rank) const {
    for (int32_t k = span.lo; k < span.hi; ++k) {
      if (remaining_[k] == 0) continue;
      int64_t lowest = std::numeric_limits<int64_t>::max();
      for (int32_t u : s_.members[k]) {
        if (offset_[u] != kUnplaced) continue;
        const int64_t at = std::max(next_offset(u), at_least);
        lowest = std::min(lowest, at == at_least && rank_[u] < after_rank ? at + 1 : at);
        if (lowest == at_least) break;
      }
      if (lowest + remaining_[k] > capacity_) return false;
    }
    return true;
  }

  // Places b at `at`; false when a pin is passed or some section's floor
  // plus its unplaced bytes exceeds the capacity.
  bool place(int32_t b, int64_t at, Span span) {
    const Buffer& buffer = p_.buffers[b];
    const int64_t top = at + buffer.size;
    set(offset_[b], at);
    for (int32_t k = s_.lo[b]; k < s_.hi[b]; ++k) {
      set(floor_[k], top);
      set(remaining_[k], remaining_[k] - buffer.size);
    }
    for (int32_t k = s_.lo[b]; k + 1 < s_.hi[b]; ++k) set(crossings_[k], crossings_[k] - 1);
    ++stamp_;
    for (int32_t k = s_.lo[b]; k < s_.hi[b]; ++k) raise_floor(k);
    for (int32_t o : s_.overlaps[b]) {
      if (offset_[o] != kUnplaced) continue;
      const int64_t need = align_up(top, p_.buffers[o].alignment);
      if (min_offset_[o] >= need) continue;
      set(min_offset_[o], need);
      if (need + p_.buffers[o].size > capacity_ || (pinned(o) && need > *p_.buffers[o].fixed_offset)) return false;
      for (int32_t k = s_.lo[o]; k < s_.hi[o]; ++k) raise_floor(k);
    }
    for (int32_t k = span.lo; k < span.hi; ++k)
      if (std::max(at, floor_[k]) + remaining_[k] > capacity_) return false;
    return true;
  }

  // Nothing unplaced in section k can start below the lowest next offset of
  // its unplaced buffers: the floor rises to it (once per placement).
  void raise_floor(int32_t k) {
    if (seen_[k] == stamp_) return;
    seen_[k] = stamp_;
    int64_t lowest = std::numeric_limits<int64_t>::max();
    for (int32_t u : s_.members[k])
      if (offset_[u] == kUnplaced) lowest = std::min(lowest, min_offset_[u]);
    if (lowest != std::numeric_limits<int64_t>::max() && lowest > floor_[k]) set(floor_[k], lowest);
  }

  // After placing c: cuts inside its span that no unplaced buffer crosses
  // any more split the part into independent sub-parts.
  Outcome descend(const std::vector<int32_t>& part, Span span, const Candidate& c) {
    std::vector<int32_t> cuts;
    for (int32_t k = s_.lo[c.buffer]; k + 1 < s_.hi[c.buffer]; ++k)
      if (crossings_[k] == 0) cuts.push_back(k + 1);
    if (cuts.empty()) return search(part, span, c.at, c.rank);
    cuts.insert(cuts.begin(), span.lo);
    cuts.push_back(span.hi);
    std::vector<std::vector<int32_t>> pieces(cuts.size() - 1);
    for (int32_t b : part) {
      if (offset_[b] != kUnplaced) continue;
      const auto piece = std::upper_bound(cuts.begin(), cuts.end(), s_.lo[b]) - cuts.begin() - 1;
      pieces[piece].push_back(b);
    }
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (pieces[i].empty()) continue;
      const Outcome outcome = search(pieces[i], Span{cuts[i], cuts[i + 1]}, c.at, c.rank);
      if (outcome != Outcome::Found) return outcome;
    }
    return Outcome::Found;
  }

  const Problem& p_;
  const Sections& s_;
  const std::vector<int32_t>& rank_;
  const int64_t capacity_;
  Budget& budget_;
  int64_t nodes_left_;  // this attempt's own node limit
  std::vector<int64_t> offset_, min_offset_, floor_, remaining_, crossings_;
  std::vector<std::pair<int64_t*, int64_t>> trail_;
  std::vector<uint64_t> seen_;  // per section: the placement that last raised its floor
  uint64_t stamp_ = 0;
};

void check_pins(const Problem& p) {
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const Buffer& a = p.buffers[i];
    if (!a.fixed_offset || a.size <= 0) continue;
    if (*a.fixed_offset < 0 || *a.fixed_offset % std::max<int64_t>(a.alignment, 1) != 0)
      throw std::invalid_argument("buffer " + std::to_string(i) + " is pinned at a negative or misaligned offset");
    for (size_t j = i + 1; j < p.buffers.size(); ++j) {
      const Buffer& b = p.buffers[j];
      if (!b.fixed_offset || b.size <= 0 || !lifetimes_overlap(a, b)) continue;
      if (*a.fixed_offset < *b.fixed_offset + b.size && *b.fixed_offset < *a.fixed_offset + a.size)
        throw std::invalid_argument("pinned buffers " + std::to_string(i) + " and " + std::to_string(j) +
                                    " overlap in time and address");
    }
  }
}

// The live-bytes bound, and no lower than any pinned buffer's top.
int64_t exact_lower_bound(const Problem& p) {
  int64_t bound = lower_bound_bytes(p);
  for (const Buffer& b : p.buffers)
    if (b.fixed_offset && b.size > 0) bound = std::max(bound, *b.fixed_offset + b.size);
  return bound;
}

Solution best_heuristic(const Problem& p) {
  Solution best = greedy_size_first_fit(p);
  const Solution other = greedy_size_best_fit(p);
  return other.height < best.height ? other : best;
}

int64_t part_height(const Problem& p, const std::vector<int32_t>& part, const std::vector<int64_t>& offsets) {
  int64_t height = 0;
  for (int32_t b : part) height = std::max(height, offsets[b] + p.buffers[b].size);
  return height;
}

// One partition at one capacity: the buffer orders in turn, each with a node
// limit that doubles every round (a search stuck in one order often flies
// in another); a complete search in any order decides. Found: `offsets` updated.
Outcome decide(const Problem& p, const Sections& s, const std::vector<std::vector<int32_t>>& ranks,
               const std::vector<int32_t>& part, int64_t capacity, Budget& budget, std::vector<int64_t>& offsets) {
  for (int64_t limit = 4 * static_cast<int64_t>(part.size()) + 64;; limit *= 2) {
    for (const auto& rank : ranks) {
      Decision decision(p, s, rank, capacity, budget, limit);
      const Outcome outcome = decision.run(part);
      if (outcome == Outcome::Found)
        for (int32_t b : part) offsets[b] = decision.offset(b);
      if (outcome != Outcome::Aborted || budget.spent()) return outcome;
    }
  }
}

// Capacities to probe: the lower bound first (real models usually meet it),
// then the user's capacity if it is still open, then bisection.
int64_t next_probe(int64_t lo, int64_t hi, int64_t capacity, int probe) {
  if (probe == 0) return lo;
  if (probe == 1 && capacity > lo && capacity < hi) return capacity;
  return lo + (hi - lo) / 2;
}

}  // namespace

ExactResult solve_exact(const Problem& problem, const SearchBudget& search_budget, const Solution* start) {
  check_pins(problem);
  Budget budget(search_budget);
  ExactResult result;
  result.solution = start ? *start : best_heuristic(problem);
  if (!validate(Problem{problem.buffers, 0}, result.solution).empty())
    throw std::invalid_argument("the starting plan given to the exact solver is not valid");
  const Sections sections = make_sections(problem);
  const auto parts = partitions(problem, sections);
  const auto ranks = preorder_ranks(problem, sections);
  int64_t lo = exact_lower_bound(problem);
  int64_t hi = result.solution.height;
  for (int probe = 0; lo < hi; ++probe) {
    const int64_t capacity = next_probe(lo, hi, problem.capacity, probe);
    std::vector<int64_t> offsets = result.solution.offsets;
    Outcome outcome = Outcome::Found;
    for (size_t i = 0; i < parts.size() && outcome == Outcome::Found; ++i)
      if (part_height(problem, parts[i], offsets) > capacity)
        outcome = decide(problem, sections, ranks, parts[i], capacity, budget, offsets);
    if (outcome == Outcome::Aborted) break;
    if (outcome == Outcome::NotFound) {
      lo = capacity + 1;
      continue;
    }
    result.solution.offsets = offsets;
    result.solution.height = solution_height(problem, offsets);
    hi = result.solution.height;
  }
  result.lower_bound = std::min(lo, hi);
  result.proven_optimal = result.solution.height == result.lower_bound;
  result.capacity_met = problem.capacity <= 0 || result.solution.height <= problem.capacity;
  result.capacity_refuted = problem.capacity > 0 && result.lower_bound > problem.capacity;
  result.nodes = budget.nodes();
  result.seconds = budget.elapsed();
  return result;
}

std::string describe_capacity(const Problem& problem, const ExactResult& r) {
  const std::string head = "height " + std::to_string(r.solution.height) + " B, lower bound " +
                           std::to_string(r.lower_bound) + " B" + (r.proven_optimal ? " (proven optimal)" : "");
  if (problem.capacity <= 0) return head;
  const std::string cap = std::to_string(problem.capacity);
  if (r.capacity_met) return head + "; fits the capacity of " + cap + " B";
  if (r.capacity_refuted)
    return head + "; does not fit: needs at least " + std::to_string(r.lower_bound) + " B, capacity " + cap + " B";
  return head + "; no plan within the capacity of " + cap + " B found within the search budget (not refuted)";
}

}  // namespace tinyarena::allocation
