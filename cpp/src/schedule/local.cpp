// Local improvement of a full order, for graphs too large for the exact
// search: single-op moves that shrink the bytes live over the ops they pass
// (their area), and exact search inside windows around the peak. Each change replaces a
// window of the order with another order of the same ops, so the state after
// the window (ops run, bytes live) is unchanged whenever its oversized
// in-place buffers match; changes that would alter it are skipped, so only
// the window's steps need re-running.
#include <algorithm>

#include "tinyarena/common/work_budget.h"
#include "tinyarena/schedule/search.h"

namespace tinyarena::schedule {
namespace {

constexpr int64_t kStepWork = 40;          // work units per op run in a trial (run_op and bookkeeping)
constexpr int64_t kWindowStates = 20000;   // states one window's exact search may store
constexpr int32_t kRounds = 8;             // rounds of moves and windows, while something changes
constexpr size_t kPeakSteps = 16;          // peak steps whose windows are tried per window round

bool same_inflation(const std::vector<Inflation>& a, const std::vector<Inflation>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Inflation& x, const Inflation& y) { return x.component == y.component && x.size == y.size; });
}

// Steps of some ops run from a position, and the state they leave.
struct Trial {
  std::vector<int64_t> steps;
  std::vector<Inflation> inflated;
  int64_t bytes = 0, max = 0, area = 0;
};

// An order with the memory state before each position and the bytes live while each op runs.
class Profile {
 public:
  Profile(const MemoryModel& model, const std::vector<int32_t>& order)
      : model_(model), words_(model.words), order_(order), pos_(model.ops, 0), succ_(model.ops),
        done_((order.size() + 1) * model.words, 0), inflated_(order.size() + 1), bytes_(order.size() + 1),
        step_(order.size()) {
    for (int32_t op = 0; op < model.ops; ++op)
      for (int32_t p : model.op[op].preds) succ_[p].push_back(op);
    bytes_[0] = initial_state(model).bytes;
    apply(0, order_);
    update_peak();
  }

  const std::vector<int32_t>& order() const { return order_; }
  int64_t peak() const { return peak_; }

  void update_peak() {
    peak_ = order_.empty() ? bytes_[0] : *std::max_element(step_.begin(), step_.end());
  }

  // Each op, last first, moved just before its first consumer.
  bool sink(WorkBudget& work) {
    bool changed = false;
    const std::vector<int32_t> ops(order_.rbegin(), order_.rend());
    for (int32_t op : ops) {
      if (work.spent()) break;
      const size_t from = pos_[op];
      size_t to = order_.size();
      for (int32_t s : succ_[op]) to = std::min(to, pos_[s]);
      if (to <= from + 1 || born_bytes(op) <= dying_bytes(op)) continue;  // the ops passed would hold more
      std::vector<int32_t> window(order_.begin() + static_cast<std::ptrdiff_t>(from) + 1,
                                  order_.begin() + static_cast<std::ptrdiff_t>(to));
      window.push_back(op);
      changed = try_move(from, window, work) || changed;
    }
    return changed;
  }

  // Each op, first first, moved just after its last predecessor.
  bool hoist(WorkBudget& work) {
    bool changed = false;
    const std::vector<int32_t> ops = order_;
    for (int32_t op : ops) {
      if (work.spent()) break;
      const size_t to = pos_[op];
      size_t from = 0;
      for (int32_t p : model_.op[op].preds) from = std::max(from, pos_[p] + 1);
      if (to <= from) continue;
      std::vector<int32_t> window{op};
      window.insert(window.end(), order_.begin() + static_cast<std::ptrdiff_t>(from),
                    order_.begin() + static_cast<std::ptrdiff_t>(to));
      changed = try_move(from, window, work) || changed;
    }
    return changed;
  }

  // Exact search over windows of `width` ops around the first peak steps;
  // true after the first window whose peak drops below the order's.
  bool improve_window(int32_t width, WorkBudget& work) {
    update_peak();
    const size_t n = order_.size(), w = std::min(n, static_cast<size_t>(std::max(width, 2)));
    size_t tried = 0;
    for (size_t p = 0; p < n && tried < kPeakSteps && !work.spent(); ++p) {
      if (step_[p] != peak_) continue;
      ++tried;
      const size_t last_begin = n - w, centred = p >= w / 2 ? p - w / 2 : 0, ending = p + 1 >= w ? p + 1 - w : 0;
      size_t previous = n;
      for (size_t begin : {centred, ending, p}) {
        begin = std::min(begin, last_begin);
        if (begin == previous) continue;
        previous = begin;
        const std::vector<int32_t> ops(order_.begin() + static_cast<std::ptrdiff_t>(begin),
                                       order_.begin() + static_cast<std::ptrdiff_t>(begin + w));
        const SearchResult found = search_window(model_, state(begin), ops, peak_, {kWindowStates, 0, 0});
        work.charge(kStepWork * static_cast<int64_t>(w) * std::max<int64_t>(found.states, 1));
        if (found.best.order.empty()) continue;
        const Trial trial = simulate(begin, found.best.order, work);
        if (trial.max >= peak_ || !same_end(begin + w, trial)) continue;
        apply(begin, found.best.order);
        return true;
      }
    }
    return false;
  }

 private:
  // Bytes of the buffers `op` creates, and of those it reads last where it is now (pinned
  // buffers never die). Moving it later changes the live bytes of each op it passes by about
  // the second less the first (in-place choices aside), so a sink that cannot pay is not tried.
  int64_t born_bytes(int32_t op) const {
    int64_t total = 0;
    for (int32_t c : model_.op[op].births) total += model_.components[c].size;
    return total;
  }
  int64_t dying_bytes(int32_t op) const {
    int64_t total = 0;
    for (int32_t c : model_.op[op].uses) {
      const Component& comp = model_.components[c];
      if (!comp.pinned && std::all_of(comp.consumers.begin(), comp.consumers.end(),
                                      [&](int32_t r) { return r == op || pos_[r] < pos_[op]; }))
        total += comp.size;
    }
    return total;
  }

  MemoryState state(size_t position) const {
    MemoryState s;
    s.done.assign(done_.begin() + static_cast<std::ptrdiff_t>(position * words_),
                  done_.begin() + static_cast<std::ptrdiff_t>((position + 1) * words_));
    s.inflated = inflated_[position];
    s.bytes = bytes_[position];
    return s;
  }

  Trial simulate(size_t begin, const std::vector<int32_t>& ops, WorkBudget& work) const {
    MemoryState now = state(begin), next;
    Trial trial;
    for (int32_t op : ops) {
      const int64_t step = run_op(model_, now.done.data(), now.inflated, now.bytes, op, next);
      add_op(now.done.data(), op);
      now.inflated.swap(next.inflated);
      now.bytes = next.bytes;
      trial.steps.push_back(step);
      trial.max = std::max(trial.max, step);
      trial.area += step;
    }
    work.charge(kStepWork * static_cast<int64_t>(ops.size()));
    trial.inflated = std::move(now.inflated);
    trial.bytes = now.bytes;
    return trial;
  }

  bool same_end(size_t end, const Trial& trial) const {
    return trial.bytes == bytes_[end] && same_inflation(trial.inflated, inflated_[end]);
  }

  // Replaces the window at `begin` by `window` when that does not raise the
  // peak and lowers (area, window peak).
  bool try_move(size_t begin, const std::vector<int32_t>& window, WorkBudget& work) {
    int64_t old_max = 0, old_area = 0;
    for (size_t k = begin; k < begin + window.size(); ++k) {
      old_max = std::max(old_max, step_[k]);
      old_area += step_[k];
    }
    const Trial trial = simulate(begin, window, work);
    if (trial.max > peak_ || !same_end(begin + window.size(), trial)) return false;
    if (trial.area > old_area || (trial.area == old_area && trial.max >= old_max)) return false;
    apply(begin, window);
    return true;
  }

  // Writes `ops` at `begin` and re-runs them, storing each state and step.
  void apply(size_t begin, const std::vector<int32_t>& ops) {
    MemoryState next;
    for (size_t k = 0; k < ops.size(); ++k) {
      const size_t at = begin + k;
      const int32_t op = ops[k];
      order_[at] = op;
      pos_[op] = at;
      uint64_t* done = &done_[at * words_];
      step_[at] = run_op(model_, done, inflated_[at], bytes_[at], op, next);
      std::copy_n(done, words_, done + words_);
      add_op(done + words_, op);
      inflated_[at + 1] = next.inflated;
      bytes_[at + 1] = next.bytes;
    }
  }

  const MemoryModel& model_;
  const size_t words_;
  std::vector<int32_t> order_;
  std::vector<size_t> pos_;                  // per op: its position in order_
  std::vector<std::vector<int32_t>> succ_;   // per op: the ops it must run before
  std::vector<uint64_t> done_;               // per position (0..n): the ops run before it, words_ each
  std::vector<std::vector<Inflation>> inflated_;
  std::vector<int64_t> bytes_;               // per position: bytes live before it
  std::vector<int64_t> step_;                // per position: bytes live while its op runs
  int64_t peak_ = 0;                         // no step exceeds it
};

}  // namespace

Found improve_order(const MemoryModel& model, Found start, int32_t window, double seconds) {
  if (start.order.size() < 2) return start;
  WorkBudget work(seconds);
  Profile profile(model, start.order);
  for (int32_t round = 0; round < kRounds && !work.spent(); ++round) {
    bool changed = profile.sink(work);
    changed = profile.hoist(work) || changed;
    profile.update_peak();
    while (!work.spent() && profile.improve_window(window, work)) changed = true;
    if (!changed) break;
  }
  profile.update_peak();
  if (profile.peak() >= start.peak) return start;
  return {profile.order(), profile.peak()};
}

}  // namespace tinyarena::schedule
