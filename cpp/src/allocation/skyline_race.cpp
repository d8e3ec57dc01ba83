#include "tinyarena/allocation/skyline_race.h"

namespace tinyarena::allocation {

SkylineRace::SkylineRace(const Problem& problem, WorkBudget& exact_budget, int64_t lower_bound) {
  SkylineOptions options;
  options.budget = exact_budget.detached();
  options.target_height = lower_bound;
  exact_budget.stop_past(&exact_line_);
  thread_ = std::thread([this, &problem, options, lower_bound]() mutable {
    options.budget.stop_past(&skyline_line_);
    try {
      skyline_ = skyline_search(problem, options);
      if (skyline_.solution.height <= lower_bound) exact_line_.store(skyline_.work_to_best);
    } catch (...) {
      error_ = std::current_exception();
    }
  });
}

SkylineRace::~SkylineRace() {
  skyline_line_.store(-1);  // an exception left the exact search: nothing waits for the skyline
  join();
}

void SkylineRace::join() {
  if (thread_.joinable()) thread_.join();
}

bool SkylineRace::skyline_wins(int64_t height, int64_t work_to_plan) {
  join();
  if (error_) std::rethrow_exception(error_);
  const Solution& plan = skyline_.solution;
  return plan.height < height || (plan.height == height && skyline_.work_to_best < work_to_plan);
}

}  // namespace tinyarena::allocation
