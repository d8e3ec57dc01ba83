// The skyline search (skyline.h) stops at a line posted before its work is charged.
#include "allocation_problems.h"
#include "test_framework.h"
#include <atomic>

#include "tinyarena/allocation/skyline.h"
#include "tinyarena/allocation/validator.h"

using namespace tinyarena::allocation;
using namespace tinyarena::allocation::testing;
using tinyarena::WorkBudget;

TEST(skyline_construction_stops_at_a_line_before_its_work_is_charged) {
  const Problem p = tight_problem(5, false, 300, int64_t{1} << 20, false);
  SkylineOptions free_options, stopped_options;
  free_options.budget = WorkBudget(1.0);
  const SkylineResult free_run = skyline_search(p, free_options);
  stopped_options.budget = WorkBudget(1.0);
  std::atomic<int64_t> line{0};
  stopped_options.budget.stop_past(&line);
  const SkylineResult stopped = skyline_search(p, stopped_options);
  CHECK_EQ(stopped.constructions, 1);  // the first always runs (there is a plan), its search cut at once
  CHECK(validate(p, stopped.solution).empty());
  CHECK(stopped.work < free_run.work);
}
