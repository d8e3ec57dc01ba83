#include "tinyarena/allocation/canonical_search.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "tinyarena/allocation/failed_states.h"
#include "tinyarena/allocation/sections.h"
#include "tinyarena/allocation/subset_sums.h"

namespace tinyarena::allocation {
namespace {

constexpr int64_t kUnplaced = -1;
constexpr int32_t kLimitedRounds = 8;  // rounds of limited discrepancy search before complete ones
constexpr int32_t kAnyDiscrepancy = std::numeric_limits<int32_t>::max();

// Work units of a round of a search node (a choice at one level) per buffer
// of its part and section of its span: it scans both.
constexpr int64_t kRoundWork = 25;
// Work units per subset sum merged when checking the room below a pin, and
// the most sums kept (past that the room counts as fillable).
constexpr int64_t kSubsetSumWork = 3;
constexpr size_t kMaxSubsetSums = 256;
// Work units per buffer of a section scanned for the bytes that fit below a pin.
constexpr int64_t kScanWork = 2;
// Work units per buffer and per pair of buffers live together that the
// depth-first search's set-up lists (measured: 18-28 ns each on 150-20,000
// buffers).
constexpr int64_t kSetupWork = 25;

// Buffer orders the search tries in turn (they order the candidates of a
// decision after the flush ones, so each first dive is a different greedy
// packing): most crowded sections first, largest, longest, largest area.
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

// States a limited-discrepancy dive of one order failed from, with the most
// discrepancies it had left there: a later round of the same order reaching
// such a state with no more left would repeat that dive, so it is cut at once
// (a heuristic cut like any discrepancy limit, never a refutation).
class CutStates {
 public:
  bool failed(const Fingerprint& f, int32_t discrepancies) const {
    const auto it = left_.find(key(f));
    return it != left_.end() && it->second >= discrepancies;
  }
  void insert(const Fingerprint& f, int32_t discrepancies) {
    if (left_.size() >= kMaxStates) return;
    const auto [it, fresh] = left_.try_emplace(key(f), discrepancies);
    if (!fresh) it->second = std::max(it->second, discrepancies);
  }

 private:
  static constexpr size_t kMaxStates = size_t{1} << 18;  // per order; then no more are recorded
  static uint64_t key(const Fingerprint& f) { return f.a ^ (f.b * 0x9e3779b97f4a7c15ull); }
  std::unordered_map<uint64_t, int32_t> left_;
};

// "Does this partition fit in `capacity`?" by depth-first search over
// canonical placements. State changes go on a trail, so a failed branch is
// undone exactly; a found branch leaves its offsets in place.
class Decision {
 public:
  Decision(const Problem& p, const Sections& s, const std::vector<int32_t>& rank, int64_t capacity, ProbeBudget& budget,
           int64_t node_limit, FailedStates& failed, CutStates& cut, bool near_ties)
      : p_(p), s_(s), rank_(rank), capacity_(capacity), budget_(budget), nodes_left_(node_limit), failed_(failed),
        cut_(cut), near_ties_(near_ties) {
    offset_.assign(p.buffers.size(), kUnplaced);
    min_offset_.assign(p.buffers.size(), 0);
    floor_.assign(s.members.size(), 0);
    remaining_.assign(s.members.size(), 0);
    crossings_.assign(s.crossings.begin(), s.crossings.end());
    seen_.assign(s.members.size(), 0);
    count_.assign(s.members.size(), 0);
    banned_at_.assign(p.buffers.size(), -1);
    twin_before_.assign(p.buffers.size(), -1);
    for (size_t k = 0; k < s.members.size(); ++k)
      for (int32_t b : s.members[k]) remaining_[k] += p.buffers[b].size;
  }

  // The buffers of one partition; on Found, offset(b) holds their placement.
  Outcome run(std::vector<int32_t> part, int32_t discrepancies) {
    std::sort(part.begin(), part.end(), [&](int32_t a, int32_t b) { return rank_[a] < rank_[b]; });
    link_twins(part);
    for (int32_t b : part)
      if (p_.buffers[b].size > capacity_) return Outcome::NotFound;
    const Outcome outcome = search(part, span_of(part), 0, discrepancies);
    return outcome == Outcome::NotFound && skips_ > 0 ? Outcome::Aborted : outcome;
  }

  int64_t offset(int32_t b) const { return offset_[b]; }

 private:
  // Identical free buffers (size, lifetime, alignment) are interchangeable:
  // each waits for its previous twin in rank order.
  void link_twins(const std::vector<int32_t>& part) {
    std::map<std::tuple<int64_t, int32_t, int32_t, int64_t>, int32_t> last_seen;
    for (int32_t b : part) {
      const Buffer& x = p_.buffers[b];
      if (x.fixed_offset) continue;
      auto [it, fresh] = last_seen.try_emplace({x.size, x.first, x.last, x.alignment}, b);
      if (!fresh) twin_before_[b] = std::exchange(it->second, b);
    }
  }

  struct Span {
    int32_t lo, hi;  // sections [lo, hi)
  };
  struct Candidate {
    int64_t at;
    int32_t rank, buffer;
    int32_t flush = 0;  // ends whose top meets the neighbouring section's floor (tried first)
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

  bool banned(int32_t b) const { return banned_at_[b] == next_offset(b); }
  // The lowest offset b may still take when nothing goes below `at_least`.
  int64_t earliest(int32_t b, int64_t at_least) const {
    return std::max(next_offset(b) + (banned(b) ? 1 : 0), at_least);
  }

  // Canonical order: offsets non-decreasing. At the lowest open level, the
  // section with the fewest candidates is decided first: one of them starts
  // there, or none does (all are banned from that level).
  // A state refuted before (in any order) is skipped; one refuted here
  // without a discrepancy cut is recorded.
  Outcome search(const std::vector<int32_t>& part, Span span, int64_t at_least, int32_t discrepancies) {
    if (--nodes_left_ < 0 || !budget_.tick()) return Outcome::Aborted;
    const Fingerprint state = fingerprint(part, span, at_least);
    if (failed_.contains(state)) return Outcome::NotFound;
    const bool limited = discrepancies != kAnyDiscrepancy;
    if (limited && cut_.failed(state, discrepancies)) return ++skips_, Outcome::NotFound;
    const int64_t skips = skips_;
    const Outcome outcome = expand(part, span, at_least, discrepancies);
    if (outcome == Outcome::NotFound && skips_ == skips) failed_.insert(state);
    if (outcome == Outcome::NotFound && skips_ != skips && limited) cut_.insert(state, discrepancies);
    return outcome;
  }

  // Everything the rest of the search depends on: the level, the span's
  // floors, and each unplaced buffer's next offset and ban.
  Fingerprint fingerprint(const std::vector<int32_t>& part, Span span, int64_t at_least) const {
    FingerprintBuilder f;
    f.add(static_cast<uint64_t>(at_least));
    f.add(static_cast<uint64_t>(span.lo) << 32 | static_cast<uint32_t>(span.hi));
    for (int32_t k = span.lo; k < span.hi; ++k) f.add(static_cast<uint64_t>(floor_[k]));
    for (int32_t b : part)
      if (offset_[b] == kUnplaced) {
        f.add(static_cast<uint64_t>(b) << 1 | banned(b));
        f.add(static_cast<uint64_t>(next_offset(b)));
      }
    return f.done();
  }

  Outcome expand(const std::vector<int32_t>& part, Span span, int64_t at_least, int32_t discrepancies) {
    const size_t mark = trail_.size();
    for (;;) {
      budget_.charge(kRoundWork * (static_cast<int64_t>(part.size()) + span.hi - span.lo));
      // A placement at or above `lowest_top` leaves room for a whole unplaced buffer below it: dominated.
      int64_t lowest_top = std::numeric_limits<int64_t>::max();
      bool done = true;
      for (int32_t b : part) {
        if (offset_[b] != kUnplaced) continue;
        done = false;
        if (pinned(b) && earliest(b, at_least) != next_offset(b)) return fail(mark);  // passed its pin
        if (!pinned(b)) lowest_top = std::min(lowest_top, min_offset_[b] + p_.buffers[b].size);
      }
      if (done) return Outcome::Found;
      if (!sections_can_fill(span, at_least)) return fail(mark);
      if (const std::optional<Candidate> x = covering_buffer(part)) {  // the one choice (dominance)
        if (!place(x->buffer, x->at, span)) return fail(mark);
        const Outcome outcome = descend(part, span, *x, discrepancies);
        return outcome == Outcome::NotFound ? fail(mark) : outcome;
      }
      const std::vector<Candidate> candidates = lowest_candidates(part, at_least, lowest_top);
      if (candidates.empty()) return fail(mark);
      for (const Candidate& c : candidates) {
        const size_t before = trail_.size();
        const bool placed = place(c.buffer, c.at, span);
        if (placed) {
          const Outcome outcome = descend(part, span, c, discrepancies);
          if (outcome != Outcome::NotFound) return outcome;
        }
        undo(before);
        if (!placed) continue;  // refuted at once: taking the next choice is no discrepancy
        if (discrepancies == 0) {  // limited discrepancy: only the first choice is followed
          ++skips_;
          return fail(mark);
        }
        --discrepancies;
      }
      for (const Candidate& c : candidates) set(banned_at_[c.buffer], c.at);
    }
  }

  // A free buffer X live over every unplaced buffer's lifetime, on a flat
  // floor f, goes at f: any completion with X higher becomes one with X at f
  // by moving X down and what lay under it up by X's size -- valid when X
  // is aligned at f, every other unplaced buffer's alignment divides X's
  // size and none is pinned. The first such X in rank order, else none.
  std::optional<Candidate> covering_buffer(const std::vector<int32_t>& part) const {
    int32_t lo = std::numeric_limits<int32_t>::max(), hi = 0;
    for (int32_t b : part) {
      if (offset_[b] != kUnplaced) continue;
      if (pinned(b)) return std::nullopt;
      lo = std::min(lo, s_.lo[b]);
      hi = std::max(hi, s_.hi[b]);
    }
    const int64_t f = floor_[lo];
    for (int32_t k = lo; k < hi; ++k)
      if (floor_[k] != f) return std::nullopt;
    for (int32_t b : part) {
      if (offset_[b] != kUnplaced || s_.lo[b] != lo || s_.hi[b] != hi || next_offset(b) != f || banned(b)) continue;
      if (divides_all_others(part, b)) return Candidate{f, rank_[b], b};
    }
    return std::nullopt;
  }

  bool divides_all_others(const std::vector<int32_t>& part, int32_t x) const {
    for (int32_t b : part)
      if (b != x && offset_[b] == kUnplaced && p_.buffers[x].size % p_.buffers[b].alignment != 0) return false;
    return true;
  }

  Outcome fail(size_t mark) {
    undo(mark);
    return Outcome::NotFound;
  }

  // The unbanned buffers that can go next at the lowest level, restricted to
  // those covering the section with the fewest of them; in rank order.
  std::vector<Candidate> lowest_candidates(const std::vector<int32_t>& part, int64_t at_least, int64_t lowest_top) {
    std::vector<Candidate> level;
    for (int32_t b : part) {
      if (offset_[b] != kUnplaced || banned(b)) continue;
      if (twin_before_[b] >= 0 && offset_[twin_before_[b]] == kUnplaced) continue;
      const int64_t at = next_offset(b);
      if (at < at_least || at >= lowest_top || at + p_.buffers[b].size > capacity_) continue;
      if (!level.empty() && at > level.front().at) continue;
      if (!level.empty() && at < level.front().at) level.clear();
      level.push_back({at, rank_[b], b});
    }
    ++stamp_;
    int32_t focus = -1;
    for (const Candidate& c : level)
      for (int32_t k = s_.lo[c.buffer]; k < s_.hi[c.buffer]; ++k) {
        if (seen_[k] != stamp_) seen_[k] = stamp_, count_[k] = 0;
        ++count_[k];
      }
    for (const Candidate& c : level)
      for (int32_t k = s_.lo[c.buffer]; k < s_.hi[c.buffer]; ++k)
        if (focus < 0 || count_[k] < count_[focus] || (count_[k] == count_[focus] && near_ties_ && nearer(k, focus)))
          focus = k;
    std::vector<Candidate> chosen;
    for (const Candidate& c : level)
      if (s_.lo[c.buffer] <= focus && focus < s_.hi[c.buffer]) chosen.push_back(c);
    for (Candidate& c : chosen) c.flush = flush_ends(c);
    std::sort(chosen.begin(), chosen.end(), [](const Candidate& a, const Candidate& b) {
      return a.flush != b.flush ? a.flush > b.flush : a.rank < b.rank;
    });
    return chosen;
  }

  // With near_ties_, ties between sections go to the one nearest the last
  // placement (then the earlier): decisions stay in one region of the
  // timeline, so chronological backtracking revisits the choices that caused
  // a failure there instead of thrashing between distant regions. (Either
  // tie-break loses badly on some instances; the search alternates them.)
  bool nearer(int32_t k, int32_t other) const {
    const int32_t dk = std::abs(k - last_section_), dother = std::abs(other - last_section_);
    return dk != dother ? dk < dother : k < other;
  }

  // How many of c's two ends leave a flat skyline: its top meets the floor
  // of the section just outside it (dense packings are built of such steps).
  int32_t flush_ends(const Candidate& c) const {
    const int64_t top = c.at + p_.buffers[c.buffer].size;
    const int32_t before = s_.lo[c.buffer] - 1, after = s_.hi[c.buffer];
    return (before >= 0 && floor_[before] == top) + (after < static_cast<int32_t>(floor_.size()) && floor_[after] == top);
  }

  // Each section's unplaced bytes must fit above the lowest start still
  // allowed there; the floor rises to that start. Sections whose floor is
  // above `at_least` were checked when it last rose (bans only concern the
  // current level).
  bool sections_can_fill(Span span, int64_t at_least) {
    for (int32_t k = span.lo; k < span.hi; ++k) {
      if (remaining_[k] == 0 || floor_[k] > at_least) continue;
      int64_t lowest = std::numeric_limits<int64_t>::max();
      for (int32_t u : s_.members[k]) {
        if (offset_[u] != kUnplaced) continue;
        lowest = std::min(lowest, earliest(u, at_least));
        if (lowest == at_least) break;
      }
      if (lowest + remaining_[k] > capacity_) return false;
      if (lowest > floor_[k]) set(floor_[k], lowest);
    }
    return true;
  }

  // Below any level L, section k's free room [floor, L) is covered only by
  // unplaced buffers starting below L (each by at most min(size, L - start);
  // below a pin at L, only by those ending by L); the rest is waste, and the
  // waste plus the unplaced bytes must fit the capacity. One sweep over the
  // starts (the levels) and the ends.
  bool gaps_can_fill(int32_t k, int64_t at_least) {
    const int64_t floor = floor_[k], slack = capacity_ - floor - remaining_[k];
    starts_.clear();
    bool above_floor = false;  // else no level above the floor: nothing to check
    for (int32_t u : s_.members[k])
      if (offset_[u] == kUnplaced) {
        starts_.push_back({earliest(u, at_least), p_.buffers[u].size, pinned(u)});
        above_floor |= starts_.back().at > floor;
      }
    if (!above_floor) return true;
    ends_ = starts_;
    std::sort(starts_.begin(), starts_.end(), [](const Start& a, const Start& b) { return a.at < b.at; });
    std::sort(ends_.begin(), ends_.end(), [](const Start& a, const Start& b) { return a.at + a.size < b.at + b.size; });
    int64_t begun = 0, begun_at = 0;                  // buffers starting below the level: count, sum of starts
    int64_t ended = 0, ended_at = 0, ended_size = 0;  // of those, ending by the level: count, starts, sizes
    size_t next_start = 0, next_end = 0;
    for (const Start& level : starts_) {
      if (level.at <= floor) continue;
      for (; next_start < starts_.size() && starts_[next_start].at < level.at; ++next_start)
        ++begun, begun_at += starts_[next_start].at;
      for (; next_end < ends_.size() && ends_[next_end].at + ends_[next_end].size <= level.at; ++next_end)
        ++ended, ended_at += ends_[next_end].at, ended_size += ends_[next_end].size;
      const int64_t straddling = level.pin ? 0 : (begun - ended) * level.at - (begun_at - ended_at);
      if (level.at - floor - ended_size - straddling > slack) return false;
    }
    return true;
  }

  // Places b at `at`; false when a pin is passed, some section's floor plus
  // its unplaced bytes exceeds the capacity, or a gap at either end of b
  // can no longer be filled.
  bool place(int32_t b, int64_t at, Span span) {
    const Buffer& buffer = p_.buffers[b];
    const int64_t top = at + buffer.size;
    last_section_ = s_.lo[b];
    set(offset_[b], at);
    for (int32_t k = s_.lo[b]; k < s_.hi[b]; ++k) {
      set(floor_[k], top);
      set(remaining_[k], remaining_[k] - buffer.size);
    }
    for (int32_t k = s_.lo[b]; k + 1 < s_.hi[b]; ++k) set(crossings_[k], crossings_[k] - 1);
    for (int32_t o : s_.overlaps[b]) {
      if (offset_[o] != kUnplaced) continue;
      const int64_t need = align_up(top, p_.buffers[o].alignment);
      if (min_offset_[o] >= need) continue;
      set(min_offset_[o], need);
      if (need + p_.buffers[o].size > capacity_ || (pinned(o) && need > *p_.buffers[o].fixed_offset)) return false;
    }
    for (int32_t k = span.lo; k < span.hi; ++k)
      if (std::max(at, floor_[k]) + remaining_[k] > capacity_) return false;
    for (int32_t k : {s_.lo[b] - 1, s_.lo[b], s_.hi[b] - 1, s_.hi[b]})  // where the skyline just stepped
      if (k >= span.lo && k < span.hi && remaining_[k] > 0 && !gaps_can_fill(k, at)) return false;
    for (int32_t k = s_.lo[b]; k < s_.hi[b]; ++k)
      if (remaining_[k] > 0 && !room_below_pin_fillable(k, at)) return false;
    return true;
  }

  // Below the lowest unplaced pin of section k the room [floor, pin) holds
  // only free buffers that fit under the pin, and at most the section's slack
  // (capacity - floor - unplaced bytes) is wasted: some subset of those
  // buffers must sum into [room - slack, room].
  bool room_below_pin_fillable(int32_t k, int64_t at_least) {
    const auto pin = std::find_if(s_.pins[k].begin(), s_.pins[k].end(),
                                  [&](int32_t q) { return offset_[q] == kUnplaced; });
    if (pin == s_.pins[k].end()) return true;
    const int64_t bottom = *p_.buffers[*pin].fixed_offset, room = bottom - floor_[k];
    const int64_t slack = capacity_ - floor_[k] - remaining_[k];
    if (room <= slack) return true;
    // Enough bytes, none larger than the slack: adding them one by one, the
    // first sum to reach room - slack overshoots it by less than the slack.
    int64_t total = 0, largest = 0;
    for (int32_t u : s_.members[k]) {
      if (offset_[u] != kUnplaced || pinned(u) || earliest(u, at_least) + p_.buffers[u].size > bottom) continue;
      total += p_.buffers[u].size, largest = std::max(largest, p_.buffers[u].size);
    }
    budget_.charge(kScanWork * static_cast<int64_t>(s_.members[k].size()));
    if (total < room - slack) return false;
    if (largest <= slack) return true;
    sums_.reset(room);
    for (int32_t u : s_.members[k]) {
      if (offset_[u] != kUnplaced || pinned(u) || earliest(u, at_least) + p_.buffers[u].size > bottom) continue;
      const bool may_fill = sums_.add_may_reach(p_.buffers[u].size, room - slack, room);
      budget_.charge(kSubsetSumWork * static_cast<int64_t>(sums_.count()));
      if (may_fill) return true;
    }
    return false;
  }

  // After placing c: cuts inside its span that no unplaced buffer crosses
  // any more split the part into independent sub-parts.
  Outcome descend(const std::vector<int32_t>& part, Span span, const Candidate& c, int32_t discrepancies) {
    std::vector<int32_t> cuts;
    for (int32_t k = s_.lo[c.buffer]; k + 1 < s_.hi[c.buffer]; ++k)
      if (crossings_[k] == 0) cuts.push_back(k + 1);
    if (cuts.empty()) return search(part, span, c.at, discrepancies);
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
      const Outcome outcome = search(pieces[i], Span{cuts[i], cuts[i + 1]}, c.at, discrepancies);
      if (outcome != Outcome::Found) return outcome;
    }
    return Outcome::Found;
  }

  const Problem& p_;
  const Sections& s_;
  const std::vector<int32_t>& rank_;
  const int64_t capacity_;
  ProbeBudget& budget_;
  int64_t nodes_left_;  // this attempt's own node limit
  FailedStates& failed_;  // shared by every attempt at this capacity
  CutStates& cut_;        // this order's limited-discrepancy failures, shared by its rounds
  int64_t skips_ = 0;     // branches left out for the discrepancy limit (NotFound above them proves nothing)
  std::vector<int64_t> offset_, min_offset_, floor_, remaining_, crossings_;
  std::vector<std::pair<int64_t*, int64_t>> trail_;
  struct Start {
    int64_t at, size;  // an unplaced buffer's earliest offset and size
    bool pin;
  };
  std::vector<Start> starts_, ends_;  // scratch of gaps_can_fill
  SubsetSums sums_{kMaxSubsetSums};            // scratch of room_below_pin_fillable
  std::vector<uint64_t> seen_;   // per section: the last pass (stamp) that visited it
  std::vector<int32_t> count_;   // per section: candidates covering it (valid where seen_ is current)
  std::vector<int64_t> banned_at_;  // per buffer: the offset it may not take (-1: none)
  std::vector<int32_t> twin_before_;  // per buffer: the identical buffer placed before it (-1: none)
  uint64_t stamp_ = 0;
  const bool near_ties_;
  int32_t last_section_ = 0;  // first section of the latest placement (focus tie-break)
};

int64_t part_height(const Problem& p, const std::vector<int32_t>& part, const std::vector<int64_t>& offsets) {
  int64_t height = 0;
  for (int32_t b : part) height = std::max(height, offsets[b] + p.buffers[b].size);
  return height;
}

using Ranks = std::vector<std::vector<int32_t>>;

// One partition at one capacity: the buffer orders in turn, each with both
// focus tie-breaks, under a node limit that doubles every round (a search
// stuck in one order often flies in another). Early rounds follow the value
// order but for `round` discrepancies (limited discrepancy search); later
// rounds are complete, and a complete search in any order decides.
// Resumable: when the budget stops an attempt, the next run() starts it again.
class PartSearch {
 public:
  PartSearch(const std::vector<int32_t>& part, size_t orders)
      : part_(part), limit_(4 * static_cast<int64_t>(part.size()) + 64), cut_(2 * orders) {}

  // Found: `offsets` updated.
  Outcome run(const Problem& p, const Sections& s, const Ranks& ranks, int64_t capacity, ProbeBudget& budget,
              std::vector<int64_t>& offsets) {
    for (;; next_attempt()) {
      const bool near_ties = attempt_ >= ranks.size();
      Decision decision(p, s, ranks[attempt_ % ranks.size()], capacity, budget, limit_, failed_, cut_[attempt_],
                        near_ties);
      const Outcome outcome = decision.run(part_, round_ < kLimitedRounds ? round_ : kAnyDiscrepancy);
      if (outcome == Outcome::Found)
        for (int32_t b : part_) offsets[b] = decision.offset(b);
      if (outcome != Outcome::Aborted || budget.probe_spent()) return outcome;
    }
  }

 private:
  void next_attempt() {  // every order with each tie-break of the focus, then the next round
    if (++attempt_ < cut_.size()) return;
    attempt_ = 0;
    ++round_;
    limit_ *= 2;
  }

  std::vector<int32_t> part_;
  int32_t round_ = 0;
  size_t attempt_ = 0;
  int64_t limit_;
  FailedStates failed_;
  std::vector<CutStates> cut_;  // per attempt
};

// Every partition at one capacity (those the plan already meets are kept),
// with `share` of the remaining budget. The searches at the last capacity
// probed are kept, so probing it again continues them. Found: `solution`
// updated.
class Prober {
 public:
  Prober(const Problem& p, ProbeBudget& budget)
      : p_(p), s_(make_sections(p)), parts_(partitions(p, s_)), ranks_(preorder_ranks(p, s_)), budget_(budget) {}

  Outcome probe(int64_t capacity, double share, Solution& solution, int64_t max_units) {
    budget_.begin_probe(share, max_units);
    if (capacity != capacity_) searches_.clear();
    capacity_ = capacity;
    std::vector<int64_t> offsets = solution.offsets;
    for (size_t i = 0; i < parts_.size(); ++i) {
      if (part_height(p_, parts_[i], offsets) <= capacity) continue;
      auto [it, fresh] = searches_.try_emplace(i, parts_[i], ranks_.size());
      const Outcome outcome = it->second.run(p_, s_, ranks_, capacity, budget_, offsets);
      if (outcome != Outcome::Found) return outcome;
    }
    solution = Solution{offsets, solution_height(p_, offsets)};
    return Outcome::Found;
  }

 private:
  const Problem& p_;
  const Sections s_;
  const std::vector<std::vector<int32_t>> parts_;
  const Ranks ranks_;
  ProbeBudget& budget_;
  int64_t capacity_ = -1;
  std::map<size_t, PartSearch> searches_;  // per partition, at capacity_
};

}  // namespace

class CapacityProber::Impl : public Prober {
  using Prober::Prober;
};

CapacityProber::CapacityProber(const Problem& problem, ProbeBudget& budget)
    : impl_(std::make_unique<Impl>(problem, budget)) {}
CapacityProber::~CapacityProber() = default;

Outcome CapacityProber::probe(int64_t capacity, double share, Solution& solution, int64_t max_units) {
  return impl_->probe(capacity, share, solution, max_units);
}

int64_t prober_setup_work(const Problem& problem) {
  return kSetupWork * (2 * overlapping_pairs(problem) + static_cast<int64_t>(problem.buffers.size()));
}

}  // namespace tinyarena::allocation
