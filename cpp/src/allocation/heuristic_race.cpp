#include "tinyarena/allocation/heuristic_race.h"

#include "tinyarena/allocation/pin_repair.h"
#include "tinyarena/allocation/skyline.h"

namespace tinyarena::allocation {

constexpr double kPinRepairShare = 0.5;  // of the second thread's budget, where a buffer is pinned

HeuristicRace::HeuristicRace(const Problem& problem, WorkBudget& exact_budget, int64_t target,
                             const Problem* upside_down) {
  thread_ = std::thread([this, &problem, upside_down, budget = exact_budget.detached(), target]() mutable {
    budget.stop_past(&heuristic_line_);
    try {
      search(problem, upside_down, budget, target);
    } catch (...) {
      error_ = std::current_exception();
    }
  });
  exact_budget.stop_past(&exact_line_);  // once the thread runs (a line posted before is read then)
}

HeuristicRace::~HeuristicRace() {
  heuristic_line_.store(-1);  // an exception left the exact search: nothing waits for this thread
  join();
}

void HeuristicRace::search(const Problem& problem, const Problem* upside_down, WorkBudget budget, int64_t target) {
  // Without pins it finds nothing and spends nothing.
  const PinRepairResult repaired = pin_repair_search(problem, target, budget.share(kPinRepairShare));
  if (repaired.solution) keep(*repaired.solution, "pin_repair", budget.used());
  const auto open = [&] { return !budget.spent() && (plan_.method.empty() || plan_.solution.height > target); };
  SkylineOptions options;
  options.target_height = target;
  if (open()) {  // not past a line, no plan at the target yet
    options.budget = budget.share(upside_down ? 0.5 : 1.0);
    const int64_t before = budget.used();
    const SkylineResult skyline = skyline_search(problem, options);
    keep(skyline.solution, "skyline", before + skyline.work_to_best);
  }
  if (upside_down && open()) {
    options.budget = budget.share(1.0);
    const int64_t before = budget.used();
    const SkylineResult turned = skyline_search(*upside_down, options);
    if (turned.solution.height <= target)
      keep(mirror_plan(problem, turned.solution, target), "skyline", before + turned.work_to_best);
  }
  if (plan_.solution.height <= target) exact_line_.store(plan_.work_to_plan);
}

// A search's plan, found after `work_to_plan` units of this thread's work, if lower.
void HeuristicRace::keep(const Solution& solution, const char* method, int64_t work_to_plan) {
  if (!plan_.method.empty() && solution.height >= plan_.solution.height) return;
  plan_ = HeuristicPlan{solution, method, work_to_plan};
}

void HeuristicRace::join() {
  if (thread_.joinable()) thread_.join();
}

bool HeuristicRace::heuristic_wins(int64_t height, int64_t work_to_plan) {
  join();
  if (error_) std::rethrow_exception(error_);
  // A plan found past the line does not count: how far past it the thread
  // got before it saw the line depends on timing.
  return !plan_.method.empty() && plan_.work_to_plan <= heuristic_line_.load() &&
         (plan_.solution.height < height || (plan_.solution.height == height && plan_.work_to_plan < work_to_plan));
}

}  // namespace tinyarena::allocation
