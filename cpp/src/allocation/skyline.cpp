#include "tinyarena/allocation/skyline.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/subset_sums.h"
#include "tinyarena/common/deep_stack.h"
#include "tinyarena/common/flat_lists.h"
#include "tinyarena/common/random.h"
#include "tinyarena/common/stopwatch.h"
#include "tinyarena/common/work_budget.h"
#include "skyline_pick.h"

namespace tinyarena::allocation {
namespace {

using skyline::Key;
using skyline::Pick;

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
constexpr int64_t kStepWork = 5;  // work units per step and buffer a pass over the floor touches
constexpr int64_t kRoomWork = 3;  // work units per node (and size) of the search of a room below a pin

// How a step's candidates are ranked (the first entry that differs decides).
enum class SkylineRule {
  kFillsRun,  // touches both ends of the run / one end, top level with a neighbour, no alignment waste, largest
  kLongest,   // no alignment waste, longest lifetime, largest (Sekiyama et al.)
  kLargest,   // no alignment waste, largest, longest lifetime
};

// Where a construction's search stops (its work counted from `base`, the
// work before it): past `work` units, or past a line another thread set on
// the budget (the construction can no longer win the race, see
// heuristic_race.h), which is not charged until the construction ends.
struct Limit {
  int64_t work = kUnbounded;
  int64_t base = 0;
  const WorkBudget* budget = nullptr;
  bool passed(int64_t work_now) const { return work_now > work || work_now - base > budget->units_to_line(); }
};

// The skyline over the timeline compressed to the steps where a lifetime
// starts or ends; a floor per compressed step.
class Skyline {
 public:
  explicit Skyline(const Problem& p) : p_(p), from_(p.buffers.size()), to_(p.buffers.size()) {
    std::vector<int64_t> points;
    for (const Buffer& b : p.buffers)
      if (b.size > 0) points.insert(points.end(), {b.first, static_cast<int64_t>(b.last) + 1});
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    steps_ = points.empty() ? 0 : static_cast<int32_t>(points.size()) - 1;
    const auto index = [&](int64_t t) {
      return static_cast<int32_t>(std::lower_bound(points.begin(), points.end(), t) - points.begin());
    };
    std::vector<std::pair<int32_t, int>> starts, ends, live;
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      const Buffer& b = p.buffers[i];
      size_.push_back(b.size), alignment_.push_back(b.alignment);
      if (b.size <= 0) continue;
      from_[i] = index(b.first);
      to_[i] = index(static_cast<int64_t>(b.last) + 1);
      (b.fixed_offset ? pins_ : free_).push_back(static_cast<int>(i));
      if (!b.fixed_offset) {
        starts.emplace_back(from_[i], static_cast<int>(i));
        ends.emplace_back(to_[i], static_cast<int>(i));
        for (int32_t t = from_[i]; t < to_[i]; ++t) live.emplace_back(t, static_cast<int>(i));
      }
    }
    starts_ = FlatLists<int>(steps_ + 1, starts);
    ends_ = FlatLists<int>(steps_ + 1, ends);
    live_ = FlatLists<int>(steps_, live);
    forward_.assign(steps_ + 1, 0);
    backward_.assign(steps_ + 1, 0);
    demand_.assign(steps_ + 1, 0), cover_.assign(steps_ + 1, 0);
    // Ascending offsets: one pass lifts the floor over stacked pins.
    std::sort(pins_.begin(), pins_.end(),
              [&](int a, int b) { return *p.buffers[a].fixed_offset < *p.buffers[b].fixed_offset; });
  }

  // One construction: with `backtracks` > 0, first a depth-first search
  // for a plan without waste, deciding at most that many branch points (and
  // stopping once work() passes the limit); then the deepest waste-free
  // partial plan it reached is completed greedily. Adds its work units to work().
  Solution build(SkylineRule rule, double noise, uint64_t seed, int64_t backtracks, const Limit& limit) const {
    State s = start();
    SplitMix64 rng{seed};
    if (backtracks > 0) {
      State deepest = s;
      search(s, rule, noise, rng, backtracks, limit, deepest);
      s = std::move(deepest);
    }
    complete(s, rule, noise, rng);
    s.solution.height = solution_height(p_, s.solution.offsets);
    return s.solution;
  }

  // Work units of the constructions so far: the steps and buffers each pass
  // over (part of) the floor touches, each state copied, an eighth per pin
  // checked (a compare or two), and the nodes and sizes of the searches of
  // rooms below pins.
  int64_t work() const { return work_ + kStepWork * pin_checks_ / 8 + kRoomWork * room_work_; }

 private:
  struct Run {
    int32_t begin = 0, end = 0;  // compressed steps [begin, end) of equal floor
    int64_t height = 0;
    bool valley = false;         // both neighbours higher (or absent): whatever sits here lies inside it
    // A valley's tiling, once tiling_moves() has looked (it stays true while
    // find_runs() does not rebuild the run): exact tiles cover it, and its
    // step covered by the fewest of them.
    bool looked = false, tiles = false;
    int32_t scarcest = 0;
    int64_t covering = 0;
  };

  struct State {  // one construction
    std::vector<int64_t> floor;     // per compressed step: top of what is placed there
    std::vector<int> unplaced;      // free buffers not yet placed
    std::vector<int32_t> slot;      // per buffer: its index in unplaced (-1: none)
    std::vector<Run> runs;          // the floor's maximal runs, left to right
    std::vector<int32_t> run_of;    // per compressed step: its run
    std::vector<char> placed;       // per buffer
    std::vector<char> exact;        // per buffer: sits on its valley's floor with no waste (aligned, clear of pins)
    int32_t placed_from = 0, placed_to = 0;  // compressed steps of the latest placement
    int32_t changed_from = 0, changed_to = 0;  // compressed steps whose floor changed since find_runs()
    Solution solution;
  };

  State start() const {
    State s;
    s.solution.offsets.assign(p_.buffers.size(), 0);
    for (int pin : pins_) s.solution.offsets[pin] = *p_.buffers[pin].fixed_offset;
    s.floor.assign(steps_, 0);
    lift_over_pins(s.floor, 0, steps_);
    mark_changed(s, 0, steps_);
    s.unplaced = free_;
    s.slot.assign(p_.buffers.size(), -1);
    for (size_t i = 0; i < free_.size(); ++i) s.slot[free_[i]] = static_cast<int32_t>(i);
    s.exact.assign(p_.buffers.size(), 0);
    s.placed.assign(p_.buffers.size(), 0);
    return s;
  }

  // Places buffers on exact tiles while some valley has them; where none
  // has, the best fit on the lowest run, or that run becomes waste.
  void complete(State& s, SkylineRule rule, double noise, SplitMix64& rng) const {
    while (!s.unplaced.empty()) {
      find_runs(s);
      const std::vector<size_t> moves = tiling_moves(s, rule, noise, rng);
      if (!moves.empty()) {
        place(s, moves.front(), s.floor[from_[s.unplaced[moves.front()]]]);
        continue;
      }
      const Run lowest = *std::min_element(s.runs.begin(), s.runs.end(),
                                           [](const Run& a, const Run& b) { return a.height < b.height; });
      const size_t fallback = choose_best_fit(s, lowest, rule, noise, rng);
      if (fallback < s.unplaced.size())
        place(s, fallback, lowest.height);
      else
        raise(s, lowest);
    }
  }

  // Depth-first over the exact tiles of the most constrained valley end,
  // failing where some valley cannot be filled; true when all is placed
  // (then `deepest` is that plan). `nodes` counts down the branches tried;
  // none is tried once work() passes the limit.
  bool search(State s, SkylineRule rule, double noise, SplitMix64& rng, int64_t& nodes, const Limit& limit,
              State& deepest) const {
    for (;;) {
      if (s.unplaced.size() < deepest.unplaced.size()) deepest = s, work_ += copy_work();
      if (s.unplaced.empty()) return true;
      find_runs(s);
      if (!valleys_fillable(s) || !rooms_below_pins_fillable(s)) return false;
      const std::vector<size_t> moves = tiling_moves(s, rule, noise, rng);
      if (moves.empty()) return false;
      if (moves.size() == 1) {
        place(s, moves.front(), s.floor[from_[s.unplaced[moves.front()]]]);
        continue;
      }
      for (size_t move : moves) {
        if (nodes-- <= 0 || limit.passed(work())) return false;
        State child = s;
        work_ += copy_work();
        place(child, move, child.floor[from_[child.unplaced[move]]]);
        if (search(std::move(child), rule, noise, rng, nodes, limit, deepest)) return true;
      }
      return false;
    }
  }

  // Every valley can still be filled. Only those within a step of the
  // latest placement can have changed since the state it was made in passed
  // this check, so only they are checked (all of them before any placement).
  bool valleys_fillable(State& s) const {
    const bool fresh = s.placed_to == 0;
    const int32_t first = fresh ? 0 : s.run_of[std::max(s.placed_from - 1, 0)];
    const int32_t last = fresh ? static_cast<int32_t>(s.runs.size()) - 1 : s.run_of[std::min(s.placed_to, steps_ - 1)];
    for (int32_t r = first; r <= last; ++r)
      if (s.runs[r].valley && !fillable(s, s.runs[r])) return false;
    return true;
  }

  bool overlaps(int b, int32_t begin, int32_t end) const { return from_[b] < end && begin < to_[b]; }

  // Where the floor reaches into a pin, it jumps to the pin's top.
  void lift_over_pins(std::vector<int64_t>& floor, int32_t begin, int32_t end) const {
    pin_checks_ += static_cast<int64_t>(pins_.size());
    for (int pin : pins_) {
      if (!overlaps(pin, begin, end)) continue;
      const int64_t bottom = *p_.buffers[pin].fixed_offset, top = bottom + size_[pin];
      for (int32_t t = std::max(begin, from_[pin]); t < std::min(end, to_[pin]); ++t)
        if (bottom <= floor[t] && floor[t] < top) floor[t] = top;
    }
  }

  // The floor's maximal runs with their valley flags, and the unplaced
  // buffers' exact flags: rebuilt where the floor changed since the last
  // call (from the run before the change to the run after it; the runs
  // beyond keep their steps, heights and flags, and shift).
  void find_runs(State& s) const {
    if (s.changed_from >= s.changed_to) return;
    const bool all = s.runs.empty();
    const int32_t first = all ? 0 : s.run_of[std::max(s.changed_from - 1, 0)];
    const int32_t last = all ? -1 : s.run_of[std::min(s.changed_to, steps_ - 1)];
    const int32_t begin = all ? 0 : s.runs[first].begin, end = all ? steps_ : s.runs[last].end;
    build_runs(s, begin, end, fresh_runs_);
    s.runs.erase(s.runs.begin() + first, s.runs.begin() + (last + 1));
    s.runs.insert(s.runs.begin() + first, fresh_runs_.begin(), fresh_runs_.end());
    s.run_of.resize(steps_);
    for (size_t i = 0; i < fresh_runs_.size(); ++i)
      std::fill(s.run_of.begin() + fresh_runs_[i].begin, s.run_of.begin() + fresh_runs_[i].end,
                first + static_cast<int32_t>(i));
    const auto shift = static_cast<int32_t>(fresh_runs_.size()) - (last - first + 1);
    if (shift != 0)
      for (int32_t t = end; t < steps_; ++t) s.run_of[t] += shift;
    int64_t flagged = 0;
    for (int b : starts_.span(begin, end)) {
      if (s.placed[b]) continue;
      const Run& run = s.runs[s.run_of[from_[b]]];
      s.exact[b] = run.valley && sits_exactly(b, run);
      ++flagged;
    }
    work_ += kStepWork * flagged + (shift != 0 ? steps_ - end : 0);
    s.changed_from = s.changed_to = 0;
  }

  // Work units of a copy of a construction's state (a few arrays over the steps and the buffers).
  int64_t copy_work() const { return 2 * (steps_ + static_cast<int64_t>(p_.buffers.size())); }

  // The floor changed over steps [begin, end): find_runs() rebuilds the runs there.
  static void mark_changed(State& s, int32_t begin, int32_t end) {
    const bool none = s.changed_from >= s.changed_to;
    s.changed_from = none ? begin : std::min(s.changed_from, begin);
    s.changed_to = none ? end : std::max(s.changed_to, end);
  }

  // Fills forward/backward over the run from exact tiles; true when they can cover it whole.
  bool tile(State& s, const Run& run) const {
    work_ += kStepWork * (run.end - run.begin);
    std::fill(forward_.begin() + run.begin, forward_.begin() + run.end + 1, 0);
    std::fill(backward_.begin() + run.begin, backward_.begin() + run.end + 1, 0);
    forward_[run.begin] = 1;
    for (int b : starts_.span(run.begin, run.end))  // by their first steps: forward_ there is final
      if (forward_[from_[b]] && s.exact[b]) forward_[to_[b]] = 1;
    backward_[run.end] = 1;
    for (int32_t t = run.end; t > run.begin; --t)
      if (backward_[t])
        for (int b : ends_[t])
          if (s.exact[b]) backward_[from_[b]] = 1;
    return backward_[run.begin];
  }

  // The valleys next to `valley` (runs within two steps left, one right)
  // that no exact tiling can fill once unplaced[pick] sits on it. The
  // placement is made on the floor in place and undone; only the runs there
  // are rebuilt, and only their buffers' exact flags (nothing else changes).
  int64_t dead_valleys_after(State& s, size_t pick, const Run& valley) const {
    const int b = s.unplaced[pick];
    saved_floor_.assign(s.floor.begin() + from_[b], s.floor.begin() + to_[b]);
    std::fill(s.floor.begin() + from_[b], s.floor.begin() + to_[b],
              align_up(valley.height, alignment_[b]) + size_[b]);
    lift_over_pins(s.floor, from_[b], to_[b]);
    s.placed[b] = 1;
    int64_t dead = 0;
    for (const Run& run : runs_around(s, valley.begin - 2, valley.end + 1))
      if (run.valley) dead += !fillable_as_is(s, run);
    s.placed[b] = 0;
    std::copy(saved_floor_.begin(), saved_floor_.end(), s.floor.begin() + from_[b]);
    return dead;
  }

  // The floor's maximal runs covering steps [first, last] (clamped).
  const std::vector<Run>& runs_around(const State& s, int32_t first, int32_t last) const {
    int32_t begin = std::max(first, 0), end = std::min(last, steps_ - 1) + 1;
    while (begin > 0 && s.floor[begin - 1] == s.floor[begin]) --begin;
    while (end < steps_ && s.floor[end] == s.floor[end - 1]) ++end;
    build_runs(s, begin, end, nearby_runs_);
    return nearby_runs_;
  }

  // The maximal runs of steps [begin, end) (each end at a change of the
  // floor or at its edge) into `runs`, with their valley flags.
  void build_runs(const State& s, int32_t begin, int32_t end, std::vector<Run>& runs) const {
    work_ += kStepWork * (end - begin);
    runs.clear();
    for (int32_t t = begin; t < end; ++t) {
      if (t == begin || s.floor[t] != s.floor[t - 1]) runs.push_back(Run{t, t, s.floor[t], false});
      runs.back().end = t + 1;
    }
    const int64_t left = begin > 0 ? s.floor[begin - 1] : kUnbounded, right = end < steps_ ? s.floor[end] : kUnbounded;
    for (size_t i = 0; i < runs.size(); ++i)
      runs[i].valley = (i == 0 ? left : runs[i - 1].height) > runs[i].height &&
                       (i + 1 == runs.size() ? right : runs[i + 1].height) > runs[i].height;
  }

  // Buffer b sits on the run's floor with no waste: inside it, aligned there, clear of pins.
  bool sits_exactly(int b, const Run& run) const {
    return to_[b] <= run.end && align_up(run.height, alignment_[b]) == run.height && clear_of_pins(b, run.height);
  }

  // fillable() for a valley of a floor changed since find_runs(): the exact
  // flags of the unplaced buffers starting in it are set for it first, and
  // restored after.
  bool fillable_as_is(State& s, const Run& run) const {
    flags_before_.clear();
    for (int c : starts_.span(run.begin, run.end)) {
      flags_before_.push_back(s.exact[c]);
      s.exact[c] = !s.placed[c] && sits_exactly(c, run);
    }
    work_ += kStepWork * static_cast<int64_t>(flags_before_.size());
    const bool fills = fillable(s, run);
    size_t k = 0;
    for (int c : starts_.span(run.begin, run.end)) s.exact[c] = flags_before_[k++];
    return fills;
  }

  // Exact tiles can cover the valley, and at every step of it the unplaced
  // buffers inside it (with the pins there) hold enough bytes to fill it up
  // to its lower neighbour: only they can, anything reaching outside the
  // valley sits above its neighbours.
  bool fillable(State& s, const Run& run) const {
    if (!tile(s, run)) return false;
    const int64_t rim = std::min(run.begin > 0 ? s.floor[run.begin - 1] : kUnbounded,
                                 run.end < steps_ ? s.floor[run.end] : kUnbounded);
    if (rim == kUnbounded) return true;
    std::fill(demand_.begin() + run.begin, demand_.begin() + run.end + 1, 0);
    for (int b : starts_.span(run.begin, run.end))
      if (!s.placed[b] && to_[b] <= run.end) demand_[from_[b]] += size_[b], demand_[to_[b]] -= size_[b];
    int64_t live = 0;
    for (int32_t t = run.begin; t < run.end; ++t) {
      live += demand_[t];
      if (live + pinned_below(t, run.height, rim) < rim - run.height) return false;
    }
    return true;
  }

  // Without waste, the room between a step's floor and the lowest pin above
  // it is filled exactly by free buffers that fit under the pin: at each step
  // of the latest placement, some subset of the unplaced buffers live there
  // sums to that room (may_fill_room: a short search).
  bool rooms_below_pins_fillable(State& s) const {
    for (int32_t t = s.placed_from; t < s.placed_to; ++t) {
      int64_t bottom = kUnbounded;
      pin_checks_ += static_cast<int64_t>(pins_.size());
      for (int pin : pins_)
        if (from_[pin] <= t && t < to_[pin] && *p_.buffers[pin].fixed_offset > s.floor[t]) {
          bottom = *p_.buffers[pin].fixed_offset;  // pins_ ascend: the lowest
          break;
        }
      if (bottom == kUnbounded) continue;
      room_sizes_.clear();
      for (int b : live_[t])
        if (!s.placed[b] && align_up(s.floor[t], alignment_[b]) + size_[b] <= bottom)
          room_sizes_.push_back(size_[b]);
      int64_t nodes = 0;
      const bool fills = may_fill_room(room_sizes_, bottom - s.floor[t], nodes);
      room_work_ += nodes + static_cast<int64_t>(room_sizes_.size()) + 1;
      if (!fills) return false;
    }
    return true;
  }

  // Bytes of pins at step t between `floor` and `level`.
  int64_t pinned_below(int32_t t, int64_t floor, int64_t level) const {
    pin_checks_ += static_cast<int64_t>(pins_.size());
    int64_t bytes = 0;
    for (int pin : pins_) {
      const int64_t bottom = *p_.buffers[pin].fixed_offset;
      if (from_[pin] <= t && t < to_[pin] && bottom >= floor && bottom < level)
        bytes += std::min(bottom + size_[pin], level) - bottom;
    }
    return bytes;
  }

  // The step of `run` (after tile()) covered by the fewest exact tiles that
  // belong to a tiling of it, and their count (exactly one of them sits
  // at that step in a plan with no waste here).
  std::pair<int32_t, int64_t> scarcest_step(State& s, const Run& run) const {
    work_ += kStepWork * (run.end - run.begin);
    std::fill(cover_.begin() + run.begin, cover_.begin() + run.end + 1, 0);
    for (int b : starts_.span(run.begin, run.end))
      if (s.exact[b] && forward_[from_[b]] && backward_[to_[b]]) ++cover_[from_[b]], --cover_[to_[b]];
    int32_t scarcest = run.begin;
    int64_t covering = 0, fewest = kUnbounded;
    for (int32_t t = run.begin; t < run.end; ++t)
      if ((covering += cover_[t]) < fewest) fewest = covering, scarcest = t;
    return {scarcest, fewest};
  }

  // Most constrained first: among valleys that exact tiles can cover, the
  // step covered by the fewest tiles (ties: lowest valley, then leftmost).
  // Its tiles, those leaving no valley unfillable first, then in rule
  // order (with probability `noise` the first two swap).
  std::vector<size_t> tiling_moves(State& s, SkylineRule rule, double noise, SplitMix64& rng) const {
    work_ += static_cast<int64_t>(s.runs.size());
    size_t chosen = s.runs.size();
    int32_t step = 0;
    int64_t fewest = 0;
    for (size_t r = 0; r < s.runs.size(); ++r) {
      Run& run = s.runs[r];
      if (!run.valley) continue;
      if (!std::exchange(run.looked, true) && (run.tiles = tile(s, run)))
        std::tie(run.scarcest, run.covering) = scarcest_step(s, run);
      if (!run.tiles) continue;
      if (chosen == s.runs.size() || run.covering < fewest || (run.covering == fewest && run.height < s.runs[chosen].height))
        chosen = r, step = run.scarcest, fewest = run.covering;
    }
    if (chosen == s.runs.size()) return {};
    const Run run = s.runs[chosen];
    tile(s, run);
    std::vector<std::pair<Key, size_t>>& ranked = ranked_;
    ranked.clear();
    for (int b : live_[step])
      if (s.exact[b] && forward_[from_[b]] && backward_[to_[b]]) ranked.emplace_back(Key{}, s.slot[b]);
    std::sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    for (auto& [key, i] : ranked) key = rank(s, s.unplaced[i], run, rule);
    if (ranked.size() > 1)
      for (auto& [key, i] : ranked) key[0] -= 1000 * dead_valleys_after(s, i, run);
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    if (ranked.size() > 1 && noise > 0 && static_cast<double>(rng.next() >> 11) * 0x1.0p-53 < noise)
      std::swap(ranked[0], ranked[1]);
    std::vector<size_t> moves;
    for (const auto& entry : ranked) moves.push_back(entry.second);
    return moves;
  }

  // No valley can be tiled exactly: the buffer that fits the lowest run best.
  // Those inside the run start at its steps: listed from there (not by a
  // scan of all unplaced), offered in their order in `unplaced` (ties go to
  // the first offered).
  size_t choose_best_fit(const State& s, const Run& run, SkylineRule rule, double noise, SplitMix64& rng) const {
    inside_.clear();
    for (int b : starts_.span(run.begin, run.end))
      if (!s.placed[b] && to_[b] <= run.end) inside_.push_back(static_cast<size_t>(s.slot[b]));
    std::sort(inside_.begin(), inside_.end());
    Pick pick;
    for (size_t i : inside_) {
      const int b = s.unplaced[i];
      if (clear_of_pins(b, align_up(run.height, alignment_[b]))) pick.offer(i, rank(s, b, run, rule));
    }
    return pick.choice(s.unplaced.size(), noise, rng);
  }

  void place(State& s, size_t pick, int64_t height) const {
    const int b = s.unplaced[pick];
    const int64_t offset = align_up(height, alignment_[b]);
    s.solution.offsets[b] = offset;
    std::fill(s.floor.begin() + from_[b], s.floor.begin() + to_[b], offset + size_[b]);
    lift_over_pins(s.floor, from_[b], to_[b]);
    s.exact[b] = 0;
    s.placed[b] = 1;
    s.placed_from = from_[b], s.placed_to = to_[b];
    mark_changed(s, from_[b], to_[b]);
    s.slot[s.unplaced.back()] = static_cast<int32_t>(pick);
    s.slot[b] = -1;
    s.unplaced[pick] = s.unplaced.back();
    s.unplaced.pop_back();
  }

  // Nothing fits the run: it is waste up to its lower neighbour or the lowest pin above it.
  void raise(State& s, const Run& run) const {
    int64_t raised = std::min(run.begin > 0 ? s.floor[run.begin - 1] : kUnbounded,
                              run.end < steps_ ? s.floor[run.end] : kUnbounded);
    for (int pin : pins_)
      if (overlaps(pin, run.begin, run.end) && *p_.buffers[pin].fixed_offset > run.height)
        raised = std::min(raised, *p_.buffers[pin].fixed_offset);
    if (raised == kUnbounded) throw std::logic_error("skyline: no buffer fits an unbounded run");
    std::fill(s.floor.begin() + run.begin, s.floor.begin() + run.end, raised);
    lift_over_pins(s.floor, run.begin, run.end);
    mark_changed(s, run.begin, run.end);
  }

  // Buffer b at `offset` stays clear of every pin overlapping it in time.
  bool clear_of_pins(int b, int64_t offset) const {
    pin_checks_ += static_cast<int64_t>(pins_.size());
    const int64_t top = offset + size_[b];
    for (int pin : pins_) {
      const int64_t bottom = *p_.buffers[pin].fixed_offset;
      if (overlaps(pin, from_[b], to_[b]) && bottom < top && offset < bottom + size_[pin]) return false;
    }
    return true;
  }

  Key rank(const State& s, int b, const Run& run, SkylineRule rule) const {
    const Buffer& buffer = p_.buffers[b];
    const int64_t length = static_cast<int64_t>(buffer.last) - buffer.first + 1;
    const int64_t offset = align_up(run.height, buffer.alignment), top = offset + buffer.size;
    switch (rule) {
      case SkylineRule::kFillsRun: {
        const int64_t snaps = (from_[b] == run.begin && run.begin > 0 && s.floor[run.begin - 1] == top) +
                              (to_[b] == run.end && run.end < steps_ && s.floor[run.end] == top);
        const int64_t ends = (from_[b] == run.begin) + (to_[b] == run.end);
        return {ends, snaps, run.height - offset, buffer.size};
      }
      case SkylineRule::kLongest:
        return {run.height - offset, length, buffer.size, 0};
      case SkylineRule::kLargest:
        return {run.height - offset, buffer.size, length, 0};
    }
    return {};
  }

  const Problem& p_;
  int32_t steps_ = 0;
  FlatLists<int> starts_, ends_;  // per compressed step: the free buffers starting / ending there
  FlatLists<int> live_;           // per compressed step: the free buffers live there
  std::vector<int32_t> from_, to_;  // per buffer: its compressed steps [from, to)
  std::vector<int64_t> size_, alignment_;  // per buffer (read in every pass: kept apart from the rest of Buffer)
  std::vector<int> pins_, free_;    // buffers of positive size, pinned (by offset) or free
  mutable int64_t work_ = 0, pin_checks_ = 0, room_work_ = 0;  // see work()
  mutable std::vector<size_t> inside_;  // scratch of choose_best_fit
  mutable std::vector<int64_t> room_sizes_;       // scratch of rooms_below_pins_fillable
  mutable std::vector<int64_t> saved_floor_;      // scratch of dead_valleys_after
  mutable std::vector<Run> nearby_runs_;          // scratch of runs_around
  mutable std::vector<Run> fresh_runs_;           // scratch of find_runs
  mutable std::vector<char> flags_before_;        // scratch of fillable_as_is
  mutable std::vector<std::pair<Key, size_t>> ranked_;  // scratch of tiling_moves
  // Scratch per compressed step, not part of a construction's state (not copied with it):
  mutable std::vector<char> forward_, backward_;  // reachable from the run's start / end by exact tiles (tile)
  mutable std::vector<int64_t> demand_;           // of fillable
  mutable std::vector<int64_t> cover_;            // of scarcest_step
};

constexpr SkylineRule kRules[] = {SkylineRule::kFillsRun, SkylineRule::kLongest, SkylineRule::kLargest};

SkylineResult search_skylines(const Problem& problem, SkylineOptions options) {
  check_pins(problem);
  const Stopwatch clock;
  WorkBudget& budget = options.budget;
  const Skyline skyline(problem);
  const int64_t bound = std::max(options.target_height, lower_bound_bytes(problem));
  SkylineResult result;
  int64_t costliest = 0;  // the most work of one construction so far: none starts that would overrun the budget
  const auto construct = [&](SkylineRule rule, double noise, uint64_t seed) {
    const int64_t before = skyline.work(), left = budget.remaining();
    const Limit limit{left > kUnbounded - before ? kUnbounded : before + left, before, &budget};
    Solution plan = skyline.build(rule, noise, seed, options.backtracks, limit);
    costliest = std::max(costliest, skyline.work() - before);
    budget.charge(skyline.work() - before);
    // A construction that ended past a line is not kept (where its search
    // stopped depends on when the line was set), unless it is the first.
    const bool past_line = budget.units_to_line() < 0;
    if (result.constructions++ == 0 || (plan.height < result.solution.height && !past_line)) {
      result.solution = std::move(plan);
      result.work_to_best = budget.used();
    }
  };
  const auto affordable = [&] { return !budget.spent() && costliest <= budget.remaining(); };
  for (SkylineRule rule : kRules)
    if (result.constructions == 0 || (result.solution.height > bound && affordable())) construct(rule, 0, 0);
  SplitMix64 seeds{options.seed};
  for (int64_t i = 0; i < options.constructions && result.solution.height > bound && affordable(); ++i)
    construct(kRules[i % 3], 0.05 + 0.05 * static_cast<double>(i / 3 % 4), seeds.next());
  result.work = budget.used();
  result.seconds = clock.seconds();
  return result;
}

}  // namespace

SkylineResult skyline_search(const Problem& problem, SkylineOptions options) {
  return on_deep_stack(problem.buffers.size(), [&] { return search_skylines(problem, options); });
}

}  // namespace tinyarena::allocation
