#include "tinyarena/allocation/time_sweep.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "tinyarena/allocation/failed_states.h"
#include "tinyarena/common/deep_stack.h"

namespace tinyarena::allocation {
namespace {

// Work units (about a nanosecond each: fitted to wall time on these counts,
// benchmarks/README.md) per event visited (its holes found, its layout
// fingerprinted and looked up), per buffer live there, per buffer tried at
// the bottom of a hole, and per node of a forward check.
constexpr int64_t kEventWork = 200;
constexpr int64_t kLiveWork = 3;
constexpr int64_t kTryWork = 8;
constexpr int64_t kCheckWork = 11;
constexpr int64_t kCheckNodes = 256;  // per forward check (past them the holes count as fillable)

// A span of the time line no buffer crosses, by event.
struct Span {
  std::vector<std::vector<int32_t>> starting, ending;  // per event: its buffers (starting ones largest first)
  std::vector<std::vector<int32_t>> pinned;            // per event: indices of its pinned starting buffers
  std::vector<int32_t> start_event, end_event;         // per problem buffer: where it starts / ends (-1: not here)
  std::vector<int32_t> twin;  // per problem buffer: the index among its event's starting buffers of the last
                              // one before it interchangeable with it (size, last step, alignment, no pin), or -1
  int64_t height = 0;         // its live bytes, the same at every step
};

// Events of a span as a set: those whose choices a failure depends on.
class Events {
 public:
  void reset(size_t events) { words_.assign((events + 63) / 64, 0); }
  void add(size_t e) { words_[e / 64] |= uint64_t{1} << (e % 64); }
  void remove(size_t e) { words_[e / 64] &= ~(uint64_t{1} << (e % 64)); }
  bool has(size_t e) const { return words_[e / 64] >> (e % 64) & 1; }
  void clear() { std::fill(words_.begin(), words_.end(), 0); }
  void add_all_before(size_t k) {
    for (size_t e = 0; e < k; ++e) add(e);
  }
  void merge(const Events& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= other.words_[w];
  }

 private:
  std::vector<uint64_t> words_;
};

// A hole the ending buffers leave, [at, at + room) while it is filled from the bottom.
struct Hole {
  int64_t at, room;
};

// What the search keeps per event (reused at every visit).
struct Level {
  std::vector<int32_t> layout;            // the live buffers before the event, in address order
  std::vector<int32_t> kept;              // those that do not end there
  std::vector<Hole> holes;                // in address order
  std::vector<std::vector<int32_t>> in;   // per hole: its starting buffers, bottom up
  std::vector<char> placed;               // per starting buffer
  size_t hole = 0;                        // the lowest hole not yet full
  Events later;                           // a failure's events past this one
};

class Sweep {
 public:
  Sweep(const Problem& p, WorkBudget& budget) : p_(p), budget_(budget), offsets_(p.buffers.size(), 0) {}

  // Tiles [0, span.height) at every step of the span; false if it cannot
  // (or the budget ran out: aborted()).
  bool tile(const Span& span, size_t index) {
    span_ = &span;
    span_index_ = index;
    const size_t events = span.starting.size();
    levels_.resize(events);
    for (Level& level : levels_) level.later.reset(events);
    levels_[0].layout.clear();
    pending_.resize(events);
    for (size_t e = 0; e < events; ++e) pending_[e] = static_cast<int32_t>(span.ending[e].size());
    Events conflict;
    conflict.reset(events);
    return sweep(0, conflict);
  }

  std::vector<int64_t>& offsets() { return offsets_; }
  bool aborted() const { return aborted_; }

 private:
  bool spend(int64_t units) {
    if (!aborted_ && !budget_.charge(units)) aborted_ = true;
    return !aborted_;
  }

  const Buffer& buffer(int32_t b) const { return p_.buffers[b]; }

  // Adds the events where `buffers` were placed.
  void add_starts(const std::vector<int32_t>& buffers, Events& events) const {
    for (int32_t b : buffers) events.add(static_cast<size_t>(span_->start_event[b]));
  }

  // Event k and the ones after it, from its layout. On failure `conflict`
  // holds the earlier events whose choices the failure depends on, so the
  // search returns to the latest of them (conflict-directed backjumping).
  bool sweep(size_t k, Events& conflict) {
    if (k == span_->starting.size()) return true;
    Level& level = levels_[k];
    if (!spend(kEventWork + kLiveWork * static_cast<int64_t>(level.layout.size()))) return false;
    FingerprintBuilder key;
    key.add(static_cast<uint64_t>(span_index_)), key.add(static_cast<uint64_t>(k));
    for (int32_t b : level.layout) key.add(static_cast<uint64_t>(b));
    const Fingerprint state = key.done();
    conflict.clear();
    if (failed_.contains(state)) {
      conflict.add_all_before(k);
      return false;
    }
    find_holes(k, level);
    bool jumped = false;
    if (fill_holes(k, level, conflict, jumped)) return true;
    if (!aborted_) failed_.insert(state);
    if (!jumped) add_starts(span_->ending[k], conflict);  // they placed the holes
    conflict.remove(k);
    return false;
  }

  // The runs of the layout that end at event k (the whole span at the first).
  void find_holes(size_t k, Level& level) const {
    level.kept.clear();
    level.holes.clear();
    int64_t at = 0;
    for (int32_t b : level.layout) {
      const bool ends = span_->end_event[b] == static_cast<int32_t>(k);
      if (!ends) level.kept.push_back(b);
      if (ends && (level.holes.empty() || level.holes.back().at + level.holes.back().room != at))
        level.holes.push_back({at, 0});
      if (ends) level.holes.back().room += buffer(b).size;
      at += buffer(b).size;
    }
    if (level.layout.empty()) level.holes.push_back({0, span_->height});
    level.in.resize(level.holes.size());
    for (auto& in : level.in) in.clear();
    level.placed.assign(span_->starting[k].size(), 0);
    level.hole = 0;
  }

  // Places starting buffers at the bottom of the lowest hole with room
  // until every hole is full, then sweeps on. On failure adds to
  // `conflict`; `jumped`: the failure lies past this event and none of its
  // choices affect it (every other choice here fails too).
  bool fill_holes(size_t k, Level& level, Events& conflict, bool& jumped) {
    while (level.hole < level.holes.size() && level.holes[level.hole].room == 0) ++level.hole;
    if (level.hole == level.holes.size()) return sweep_on(k, level, conflict, jumped);
    const std::vector<int32_t>& starting = span_->starting[k];
    Hole& hole = level.holes[level.hole];
    for (size_t i = 0; i < starting.size(); ++i) {
      const int32_t b = starting[i];
      if (level.placed[i] || repeats(level, b) || swapped(level, b)) continue;
      if (!spend(kTryWork)) return false;
      if (!fits(k, level, i, hole)) {
        conflict.add(k);
        continue;
      }
      offsets_[b] = hole.at;
      const int32_t ends_at = span_->end_event[b];
      if (ends_at >= 0 && --pending_[ends_at] == 0 && !refillable(ends_at)) {
        ++pending_[ends_at];
        add_starts(span_->ending[ends_at], conflict);
        continue;
      }
      level.placed[i] = 1;
      level.in[level.hole].push_back(b);
      hole.at += buffer(b).size, hole.room -= buffer(b).size;
      const size_t this_hole = level.hole;
      const bool found = fill_holes(k, level, conflict, jumped);
      level.hole = this_hole;
      hole.at -= buffer(b).size, hole.room += buffer(b).size;
      level.in[level.hole].pop_back();
      level.placed[i] = 0;
      if (ends_at >= 0) ++pending_[ends_at];
      if (found || aborted_ || jumped) return found;
    }
    return false;
  }

  // Starting buffer i can go at the bottom of the hole: it fits, its pin
  // (if any) is there, its alignment holds, and no unplaced pinned buffer's
  // place lies under it.
  bool fits(size_t k, const Level& level, size_t i, const Hole& hole) const {
    const Buffer& x = buffer(span_->starting[k][i]);
    if (x.size > hole.room || hole.at % x.alignment != 0) return false;
    if (x.fixed_offset) return *x.fixed_offset == hole.at;
    return std::none_of(span_->pinned[k].begin(), span_->pinned[k].end(), [&](int32_t j) {
      const int64_t pin = *buffer(span_->starting[k][j]).fixed_offset;
      return !level.placed[j] && pin >= hole.at && pin < hole.at + x.size;
    });
  }

  // Two free unaligned buffers ending at the same event, one right on the
  // other in a hole: the other order leaves the same layout ahead (one hole
  // at that event), so only the one with the lower index goes below.
  bool swapped(const Level& level, int32_t b) const {
    const std::vector<int32_t>& in = level.in[level.hole];
    if (in.empty()) return false;
    const int32_t below = in.back();
    return below > b && span_->end_event[below] == span_->end_event[b] && free_and_unaligned(below) && free_and_unaligned(b);
  }
  bool free_and_unaligned(int32_t b) const { return !buffer(b).fixed_offset && buffer(b).alignment <= 1; }

  // Interchangeable buffers go in their order (the placed ones of a kind
  // are always its first): one behind an unplaced twin would repeat its tries.
  bool repeats(const Level& level, int32_t b) const {
    const int32_t twin = span_->twin[b];
    return twin >= 0 && !level.placed[twin];
  }

  // Forward checking: once every buffer ending at event e is placed, the
  // holes they will leave are known (touching ones merge), and the buffers
  // starting there must split into groups that fill them exactly.
  bool refillable(int32_t e) {
    ending_ = span_->ending[e];
    std::sort(ending_.begin(), ending_.end(), [&](int32_t x, int32_t y) { return offsets_[x] < offsets_[y]; });
    rooms_.clear();
    int64_t top = -1;
    for (int32_t b : ending_) {
      if (offsets_[b] != top) rooms_.push_back(0);
      rooms_.back() += buffer(b).size;
      top = offsets_[b] + buffer(b).size;
    }
    int64_t nodes = kCheckNodes;
    const bool fills = partitions(span_->starting[e], 0, nodes);
    spend(kCheckWork * (kCheckNodes - nodes + 1));
    return fills;
  }

  // starting[i..] (largest first) fill rooms_ exactly, each in one (or the
  // nodes ran out); rooms of equal size are tried once.
  bool partitions(const std::vector<int32_t>& starting, size_t i, int64_t& nodes) {
    if (i == starting.size() || nodes-- <= 0) return true;
    const int64_t size = buffer(starting[i]).size;
    for (size_t r = 0; r < rooms_.size(); ++r) {
      if (rooms_[r] < size || std::find(rooms_.begin(), rooms_.begin() + r, rooms_[r]) != rooms_.begin() + r) continue;
      rooms_[r] -= size;
      const bool fills = partitions(starting, i + 1, nodes);
      rooms_[r] += size;
      if (fills) return true;
    }
    return false;
  }

  // The next event's layout (the kept buffers and the holes' contents, by
  // address), then the next event; a failure there that no choice of this
  // event affects is passed on.
  bool sweep_on(size_t k, Level& level, Events& conflict, bool& jumped) {
    if (k + 1 == levels_.size()) return true;
    std::vector<int32_t>& next = levels_[k + 1].layout;
    filled_.clear();
    for (const auto& in : level.in) filled_.insert(filled_.end(), in.begin(), in.end());
    next.clear();
    std::merge(level.kept.begin(), level.kept.end(), filled_.begin(), filled_.end(), std::back_inserter(next),
               [&](int32_t x, int32_t y) { return offsets_[x] < offsets_[y]; });
    if (sweep(k + 1, level.later)) return true;
    jumped = !level.later.has(k);
    if (jumped) conflict = level.later;
    else conflict.merge(level.later);
    return false;
  }

  const Problem& p_;
  WorkBudget& budget_;
  std::vector<int64_t> offsets_;
  const Span* span_ = nullptr;
  size_t span_index_ = 0;
  std::vector<Level> levels_;     // per event of the span
  std::vector<int32_t> pending_;  // per event: buffers ending there not yet placed
  std::vector<int32_t> ending_, filled_;  // scratch of refillable and sweep_on
  std::vector<int64_t> rooms_;            // scratch of refillable
  FailedStates failed_;                   // (span, event, layout) with no tiling of the rest
  bool aborted_ = false;
};

// Each event's starting buffers largest first, with their twins and pins.
void mark_twins_and_pins(const Problem& p, Span& span) {
  span.pinned.resize(span.starting.size());
  for (size_t k = 0; k < span.starting.size(); ++k) {
    std::vector<int32_t>& starting = span.starting[k];
    std::stable_sort(starting.begin(), starting.end(),
                     [&](int32_t x, int32_t y) { return p.buffers[x].size > p.buffers[y].size; });
    for (size_t i = 0; i < starting.size(); ++i) {
      const Buffer& x = p.buffers[starting[i]];
      if (x.fixed_offset) span.pinned[k].push_back(static_cast<int32_t>(i));
      for (size_t j = i; j-- > 0 && !x.fixed_offset;) {
        const Buffer& y = p.buffers[starting[j]];
        if (!y.fixed_offset && y.size == x.size && y.last == x.last && y.alignment == x.alignment) {
          span.twin[starting[i]] = static_cast<int32_t>(j);
          break;
        }
      }
    }
  }
}

// The span of `group` (buffers by first step, none crossing its ends) by
// event; none if its live bytes vary (some buffer ends where none starts,
// or the bytes differ).
std::optional<Span> make_span(const Problem& p, const std::vector<int32_t>& group) {
  std::vector<int32_t> times;
  int32_t end = 0;  // the step after the span's last
  for (int32_t b : group) times.push_back(p.buffers[b].first), end = std::max(end, p.buffers[b].last + 1);
  times.erase(std::unique(times.begin(), times.end()), times.end());
  const auto event = [&](int32_t t) { return static_cast<size_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin()); };
  Span span;
  span.starting.resize(times.size());
  span.ending.resize(times.size());
  span.start_event.assign(p.buffers.size(), -1);
  span.end_event.assign(p.buffers.size(), -1);
  span.twin.assign(p.buffers.size(), -1);
  for (int32_t b : group) {
    span.start_event[b] = static_cast<int32_t>(event(p.buffers[b].first));
    span.starting[span.start_event[b]].push_back(b);
    const int32_t after = p.buffers[b].last + 1;
    if (after == end) continue;
    const size_t k = event(after);
    if (k == times.size() || times[k] != after) return std::nullopt;
    span.end_event[b] = static_cast<int32_t>(k);
    span.ending[k].push_back(b);
  }
  int64_t live = 0;
  for (size_t k = 0; k < times.size(); ++k) {
    for (int32_t b : span.starting[k]) live += p.buffers[b].size;
    for (int32_t b : span.ending[k]) live -= p.buffers[b].size;
    if (k == 0) span.height = live;
    if (live != span.height) return std::nullopt;
  }
  mark_twins_and_pins(p, span);
  return span;
}

// The spans no buffer crosses; none if some span's live bytes vary or
// exceed `height`.
std::optional<std::vector<Span>> flat_spans(const Problem& p, std::vector<int32_t> buffers, int64_t height) {
  std::sort(buffers.begin(), buffers.end(), [&](int32_t a, int32_t b) {
    return std::pair(p.buffers[a].first, a) < std::pair(p.buffers[b].first, b);
  });
  std::vector<Span> spans;
  std::vector<int32_t> group;
  int32_t reach = -1;
  const auto close = [&] {
    if (group.empty()) return true;
    std::optional<Span> span = make_span(p, group);
    if (!span || span->height > height) return false;
    spans.push_back(std::move(*span));
    group.clear();
    return true;
  };
  for (int32_t b : buffers) {
    if (p.buffers[b].first > reach && !close()) return std::nullopt;
    group.push_back(b);
    reach = std::max(reach, p.buffers[b].last);
  }
  if (!close()) return std::nullopt;
  return spans;
}

TimeSweepResult search_tilings(const Problem& problem, int64_t height, TimeSweepOptions options) {
  check_pins(problem);
  Sweep sweep(problem, options.budget);
  std::vector<int32_t> sized;
  for (size_t b = 0; b < problem.buffers.size(); ++b) {
    const Buffer& x = problem.buffers[b];
    if (x.size > 0) sized.push_back(static_cast<int32_t>(b));
    else sweep.offsets()[b] = x.fixed_offset.value_or(0);
  }
  TimeSweepResult result;
  const std::optional<std::vector<Span>> spans = flat_spans(problem, sized, height);
  if (!spans) return result;
  bool found = true;
  for (size_t i = 0; i < spans->size() && found; ++i) found = sweep.tile((*spans)[i], i);
  if (found) result.solution = Solution{sweep.offsets(), solution_height(problem, sweep.offsets())};
  result.complete = !found && !sweep.aborted();
  result.work = options.budget.used();
  return result;
}

}  // namespace

TimeSweepResult time_sweep_search(const Problem& problem, int64_t height, TimeSweepOptions options) {
  return on_deep_stack(problem.buffers.size(), [&] { return search_tilings(problem, height, options); });
}

}  // namespace tinyarena::allocation
