// The depth-first search over canonical placements at one capacity: "does
// everything fit in `capacity` bytes?", asked of each independent partition
// of the timeline. The exact search (exact.h) probes it at capacities from
// the lower bound up; the fixed-capacity search (fixed_capacity.h) at the
// one capacity it is given.
//
// Canonical placement: buffers are placed in non-decreasing offset order,
// each at the lowest aligned offset above every placed buffer it overlaps in
// time (any plan can be pushed down into such a form without growing). At
// the lowest open offset, the timeline section with the fewest candidates is
// decided: which buffer starts there, or none (they are banned from that
// offset) -- so no placement order is searched twice. Pruning, dominance and
// the search strategy: see exact.h.
#pragma once

#include <cstdint>
#include <memory>

#include "tinyarena/allocation/exact.h"
#include "tinyarena/allocation/problem.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::allocation {

enum class Outcome { Found, NotFound, Aborted };

// Work and nodes shared by every probe of one solve (once spent, stays
// spent), and the share of what is left that the current probe may use.
class ProbeBudget {
 public:
  explicit ProbeBudget(SearchBudget& b) : work_(b.work), node_limit_(b.node_limit), probe_(b.work.share(1.0)) {}

  // A probe of `share` of what is left, and at most `max_units` of work.
  void begin_probe(double share, int64_t max_units = WorkBudget::kUnlimited) {
    probe_spent_ = spent_;
    probe_ = max_units == WorkBudget::kUnlimited ? work_.share(share) : work_.slice(max_units);
    probe_nodes_ = node_limit_ > 0 ? nodes_ + static_cast<int64_t>(share * static_cast<double>(node_limit_ - nodes_)) : 0;
  }
  // One more search node; false once the budget is spent.
  bool tick() {
    if (probe_spent_) return false;
    ++nodes_;
    if ((node_limit_ > 0 && nodes_ > node_limit_) || work_.spent()) spent_ = true;
    probe_spent_ = spent_ || probe_.spent() || (probe_nodes_ > 0 && nodes_ > probe_nodes_);
    return !probe_spent_;
  }
  // Work done (checked at the next tick).
  void charge(int64_t units) { probe_.charge(units); }
  // A share of what is left, for another search.
  WorkBudget share(double fraction) { return work_.share(fraction); }
  // Charges `units` of set-up if that much is left; false (nothing charged) if not.
  bool afford(int64_t units) { return units <= work_.remaining() && work_.charge(units); }
  int64_t nodes() const { return nodes_; }
  int64_t work() const { return work_.used(); }
  bool spent() const { return spent_ || work_.spent(); }
  bool probe_spent() const { return probe_spent_; }

 private:
  WorkBudget& work_;
  int64_t node_limit_;
  WorkBudget probe_;
  int64_t nodes_ = 0;
  bool spent_ = false;
  int64_t probe_nodes_ = 0;
  bool probe_spent_ = false;
};

// Every partition at one capacity (those the plan already meets are kept),
// with `share` of the remaining budget. The searches at the last capacity
// probed are kept, so probing it again continues them.
class CapacityProber {
 public:
  CapacityProber(const Problem& problem, ProbeBudget& budget);
  ~CapacityProber();
  CapacityProber(const CapacityProber&) = delete;
  CapacityProber& operator=(const CapacityProber&) = delete;

  // Found: `solution` holds a plan within `capacity`; NotFound: proven that
  // none exists; Aborted: the probe's share of the budget (or `max_units`)
  // ran out.
  Outcome probe(int64_t capacity, double share, Solution& solution, int64_t max_units = WorkBudget::kUnlimited);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Work of the prober's set-up (it lists every pair of buffers live together:
// quadratic on thousands of long-lived buffers), charged before it is built.
int64_t prober_setup_work(const Problem& problem);

}  // namespace tinyarena::allocation
