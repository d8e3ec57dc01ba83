// The pin-repair (pin_repair.h), skyline (skyline.h) and, for the
// fixed-capacity search where a buffer is pinned, hill-climbing
// (local_search.h) searches on a second thread, racing the exact search's other stages with a work budget of their
// own, deterministically: of the two plans the lower wins, at equal height
// the one complete after less work, then the exact search's -- the plan a run
// of both one after the other would pick. A side whose plan nothing can beat
// (it meets a proven lower bound, or the capacity the search was asked to meet) posts the work it took, and the other stops
// once past it: from there on it can no longer win. So a run takes about the
// wall time of the side that wins, not of both. The second thread sees the
// line inside a skyline construction too (its work is charged only when it
// ends), skips the later searches once one ran past it, and a plan it
// completes past the line never counts (how far past it got is timing).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::allocation {

// What the second thread found: its lowest plan, by which search, and after
// how much of its work.
struct HeuristicPlan {
  Solution solution;
  std::string method;     // "pin_repair", "local_search", "offset_repair" or "skyline"
  int64_t work_to_plan = 0;
};

class HeuristicRace {
 public:
  // Starts the searches with a budget of what is left in `exact_budget` and
  // makes `exact_budget` stop past the work they post when they meet
  // `target` (the proven lower bound of the exact search: nothing lower
  // fits; the capacity of the fixed-capacity search: any plan as low will
  // do): pin repair first where a buffer is pinned (half the budget), then
  // the skyline search -- with `upside_down` (the problem mirrored in
  // `target`, problem.h), half of what is left on each in turn, a plan of
  // the mirrored one counting once it meets `target` (mirrored back).
  // `problem` and `upside_down` must outlive the race.
  // With `climb_around_pins` (the fixed-capacity search) and a pinned
  // buffer, what is left after pin repair goes to hill climbing over
  // first-fit orders (local_search.h, two-sided, each round from another
  // seed order; a climb short of `target` followed by the offset repair of
  // its plan, offset_repair.h) and the skyline search, each on the problem
  // and on its mirror, in rounds of doubling work.
  HeuristicRace(const Problem& problem, WorkBudget& exact_budget, int64_t target,
                const Problem* upside_down = nullptr, bool climb_around_pins = false);
  ~HeuristicRace();
  HeuristicRace(const HeuristicRace&) = delete;
  HeuristicRace& operator=(const HeuristicRace&) = delete;

  // The second thread stops past `work` units: the exact search's plan,
  // found after that much work, is proven optimal (the second thread can no
  // longer win), or the exact search ended after that much of an unlimited
  // budget (the second thread gets as much).
  void stop_heuristics_past(int64_t work) { heuristic_line_.store(work); }

  // Waits for the second thread; true if its plan beats a plan of `height`
  // found after `work_to_plan` units. A plan of either side found past the
  // line the other posted never counts: where the second thread's plan met
  // the target, the exact search's plan counts only if found with less work.
  bool heuristic_wins(int64_t height, int64_t work_to_plan);
  // The second thread's plan, once heuristic_wins() has waited for it.
  const HeuristicPlan& heuristic_plan() const { return plan_; }

 private:
  void search(const Problem& problem, const Problem* upside_down, WorkBudget budget, int64_t target);
  void search_skylines(const Problem& problem, const Problem* upside_down, WorkBudget& budget, int64_t target);
  void search_in_rounds(const Problem& problem, const Problem* upside_down, WorkBudget& budget, int64_t target);
  void run_skyline(const Problem& side, const Problem* original, WorkBudget part, WorkBudget& budget, int64_t target);
  void run_local_search(const Problem& side, const Problem* original, int64_t units, WorkBudget& budget,
                        int64_t target, uint64_t seed);
  void keep_side(const Problem* original, const Solution& plan, const char* method, int64_t work_to_plan,
                 int64_t target);
  bool open(const WorkBudget& budget, int64_t target) const;  // not past a line, no plan at the target yet
  void keep(const Solution& solution, const char* method, int64_t work_to_plan);
  void join();

  std::atomic<int64_t> exact_line_{WorkBudget::kUnlimited};      // the exact search stops past it
  std::atomic<int64_t> heuristic_line_{WorkBudget::kUnlimited};  // the second thread stops past it
  const bool climb_around_pins_;
  const int64_t target_;
  HeuristicPlan plan_;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace tinyarena::allocation
