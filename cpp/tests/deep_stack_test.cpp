// Searches run on a deep stack (common/deep_stack.h): recursion past the
// caller's stack, and exceptions reach the caller.
#include "allocation_problems.h"
#include "test_framework.h"
#include <algorithm>
#include <stdexcept>

#include "tinyarena/allocation/guillotine.h"
#include "tinyarena/allocation/time_sweep.h"
#include "tinyarena/allocation/validator.h"
#include "tinyarena/common/deep_stack.h"

using namespace tinyarena::allocation;
using namespace tinyarena::allocation::testing;
using tinyarena::WorkBudget;

TEST(searches_run_on_a_deep_stack) {
  // Two rows of staggered tiles over 40,000 steps: the time sweep recurses
  // once per event (40,000 of them), deeper than the test's own 8 MiB stack
  // allows; run_on_deep_stack gives each search 1 GiB.
  Problem p;
  constexpr int32_t kSteps = 40000;
  p.buffers.push_back(Buffer{"", 5, 0, 0, 1, std::nullopt});
  for (int32_t t = 0; t < kSteps; t += 2) {
    p.buffers.push_back(Buffer{"", 3, t, std::min(t + 1, kSteps - 1), 1, std::nullopt});
    p.buffers.push_back(Buffer{"", 5, t + 1, std::min(t + 2, kSteps - 1), 1, std::nullopt});
  }
  const TimeSweepResult tiled = time_sweep_search(p, 8, TimeSweepOptions{WorkBudget(1.0)});
  CHECK(tiled.solution && validate(p, *tiled.solution).empty() && tiled.solution->height == 8);
  const GuillotineResult nested = guillotine_search(p, 8, GuillotineOptions{WorkBudget(1.0)});
  CHECK(nested.solution && validate(p, *nested.solution).empty());
  // An exception thrown on the deep stack reaches the caller.
  bool thrown = false;
  try {
    tinyarena::run_on_deep_stack(1000, [] { throw std::invalid_argument("from the search thread"); });
  } catch (const std::invalid_argument&) {
    thrown = true;
  }
  CHECK(thrown);
}
