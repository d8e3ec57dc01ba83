// The skyline search (skyline.h) on a second thread, racing the exact
// search's other stages with a work budget of its own, deterministically:
// of the two plans the lower wins, at equal height the one complete after
// less work, then the exact search's -- the plan a run of both one after the
// other would pick. A side whose plan nothing can beat (it meets a proven
// lower bound) posts the work it took, and the other stops once past it: from
// there on it can no longer win. So a run takes about the wall time of the
// side that wins, not of both.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/allocation/skyline.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::allocation {

class SkylineRace {
 public:
  // Starts the skyline search with a budget of what is left in `exact_budget`
  // and makes `exact_budget` stop past the work the skyline posts when it
  // meets `lower_bound` (proven: nothing lower fits).
  SkylineRace(const Problem& problem, WorkBudget& exact_budget, int64_t lower_bound);
  ~SkylineRace();
  SkylineRace(const SkylineRace&) = delete;
  SkylineRace& operator=(const SkylineRace&) = delete;

  // The exact search's plan, found after `work_to_plan` units, is proven
  // optimal: the skyline stops past that work.
  void exact_plan_optimal(int64_t work_to_plan) { skyline_line_.store(work_to_plan); }

  // Waits for the skyline search; true if its plan beats a plan of `height`
  // found after `work_to_plan` units.
  bool skyline_wins(int64_t height, int64_t work_to_plan);
  // The skyline search's result, once skyline_wins() has waited for it.
  const SkylineResult& skyline_result() const { return skyline_; }

 private:
  void join();

  std::atomic<int64_t> exact_line_{WorkBudget::kUnlimited};    // the exact search stops past it
  std::atomic<int64_t> skyline_line_{WorkBudget::kUnlimited};  // the skyline search stops past it
  SkylineResult skyline_;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace tinyarena::allocation
