// A deterministic search budget (like CPLEX's deterministic ticks): a search
// charges the work it does where it does it, in units of about a nanosecond
// on the reference machine (each search weighs its own steps: a buffer or a
// timeline section scanned), and stops once the budget is spent. The same
// problem and budget then give the same result on any machine under any
// load. A budget given in seconds converts at kUnitsPerSecond, so one second
// of budget is about one second of work on the reference machine
// (benchmarks/budget_calibration.py measures it).
// An optional wall-clock cap stops the search too; when the cap binds, the
// result depends on the machine and its load.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "tinyarena/common/stopwatch.h"

namespace tinyarena {

class WorkBudget {
 public:
  static constexpr double kUnitsPerSecond = 1e9;
  static constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

  // `seconds` of work (<= 0: unlimited); `wall_seconds` a hard wall-clock cap (<= 0: none).
  explicit WorkBudget(double seconds, double wall_seconds = 0)
      : limit_(seconds > 0 ? std::max<int64_t>(1, std::llround(seconds * kUnitsPerSecond)) : kUnlimited),
        wall_seconds_(wall_seconds) {}

  // A sub-budget of `fraction` of what is left here, of work and of any
  // wall-clock cap; its work counts here too, and it is spent when this one
  // is. Valid while this budget lives.
  WorkBudget share(double fraction) {
    const int64_t left = remaining();
    const double wall_left = remaining_wall_seconds();
    WorkBudget part(0, wall_left > 0 ? std::max(1e-6, fraction * wall_left) : 0);
    part.limit_ = left == kUnlimited ? kUnlimited : static_cast<int64_t>(fraction * static_cast<double>(left));
    part.parent_ = this;
    return part;
  }

  // A sub-budget of at most `units` of the work left here (and all of any
  // wall-clock cap), like share(): for searches that restart in rounds of a
  // set size even under an unlimited budget.
  WorkBudget slice(int64_t units) {
    WorkBudget part = share(1.0);
    part.limit_ = std::min(part.limit_, units);
    return part;
  }

  // An independent budget of what is left here (work and wall clock) for a
  // search on another thread: its work is not counted here.
  WorkBudget detached() const {
    WorkBudget part(0, remaining_wall_seconds());
    part.limit_ = remaining();
    return part;
  }

  // Also spent once more than `*line` units are done here. Another thread
  // may lower the line at any time (a search racing this one posts the work
  // past which this one can no longer win); shares are still cut from the
  // limit, so the work done up to the line does not depend on when it moves.
  void stop_past(const std::atomic<int64_t>* line) { stop_line_ = line; }

  // Counts `units` of work done here and in every budget this is a share
  // of; false once the budget is spent.
  bool charge(int64_t units) {
    bool spent_somewhere = false;
    for (WorkBudget* b = this; b; b = b->parent_) {
      b->used_ += units;
      if (b->wall_seconds_ > 0 && b->used_ >= b->next_check_) {  // the clock is read about every tenth of a millisecond
        b->next_check_ = b->used_ + static_cast<int64_t>(kUnitsPerSecond / 1e4);
        b->out_of_time_ = b->out_of_time_ || b->clock_.seconds() > b->wall_seconds_;
      }
      spent_somewhere = spent_somewhere || b->spent_here();
    }
    return !spent_somewhere;
  }

  bool spent() const {
    for (const WorkBudget* b = this; b; b = b->parent_)
      if (b->spent_here()) return true;
    return false;
  }
  int64_t used() const { return used_; }
  // Units that can be charged here before a line (stop_past) here or above
  // is passed: kUnlimited without one, negative once past it.
  int64_t units_to_line() const {
    int64_t units = kUnlimited;
    for (const WorkBudget* b = this; b; b = b->parent_)
      if (b->stop_line_) units = std::min(units, b->stop_line_->load(std::memory_order_relaxed) - b->used_);
    return units;
  }
  // Units that can be charged here before this budget or one above it is
  // spent by its limit or its line, or reads its clock.
  int64_t headroom() const {
    int64_t units = units_to_line();
    for (const WorkBudget* b = this; b; b = b->parent_) {
      units = std::min(units, b->limit_ - b->used_);
      if (b->wall_seconds_ > 0) units = std::min(units, b->next_check_ - b->used_);
    }
    return units;
  }
  // Units left here and in every budget this is a share of.
  int64_t remaining() const {
    const int64_t own = limit_ == kUnlimited ? kUnlimited : std::max<int64_t>(0, limit_ - used_);
    return parent_ ? std::min(own, parent_->remaining()) : own;
  }
  // Wall-clock seconds left under the tightest cap here or above (0: no cap).
  double remaining_wall_seconds() const {
    double left = wall_seconds_ > 0 ? std::max(1e-9, wall_seconds_ - clock_.seconds()) : 0;
    const double above = parent_ ? parent_->remaining_wall_seconds() : 0;
    return above > 0 && (left == 0 || above < left) ? above : left;
  }

 private:
  WorkBudget* parent_ = nullptr;
  int64_t limit_;
  int64_t used_ = 0;
  double wall_seconds_;
  Stopwatch clock_;
  int64_t next_check_ = 0;
  bool out_of_time_ = false;
  const std::atomic<int64_t>* stop_line_ = nullptr;

  // Spent by its own limit, clock or line (not counting the budgets above).
  bool spent_here() const {
    return used_ > limit_ || out_of_time_ || (stop_line_ && used_ > stop_line_->load(std::memory_order_relaxed));
  }
};

// Charges a budget in batches, for searches that charge a few units at a
// time: a charge reaches the budget only once the units held back could
// spend it (by its limit or line) or make it read its clock, or past
// kMaxBatch units (another thread's line is seen within that much work). So
// it stops at the very charge the budget would stop at. Flush before the
// budget is read or dropped.
class BatchedCharge {
 public:
  static constexpr int64_t kMaxBatch = 100'000;

  explicit BatchedCharge(WorkBudget& budget) : budget_(&budget) {}

  // Counts `units` of work; false once the budget is spent.
  bool charge(int64_t units) {
    held_ += units;
    return held_ <= headroom_ || flush();
  }
  // Charges the units held back; false if the budget is spent.
  bool flush() {
    const bool left = budget_->charge(std::exchange(held_, 0));
    headroom_ = left ? std::min(kMaxBatch, budget_->headroom()) : -1;
    return left;
  }

 private:
  WorkBudget* budget_;
  int64_t held_ = 0;
  int64_t headroom_ = 0;  // units that can be held back without changing what the budget answers
};

}  // namespace tinyarena
