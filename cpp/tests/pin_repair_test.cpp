// Pin repair (pin_repair.h): pins put back into a relaxed nested plan.
#include "allocation_problems.h"
#include "test_framework.h"
#include <algorithm>

#include "tinyarena/allocation/pin_repair.h"
#include "tinyarena/allocation/validator.h"

using namespace tinyarena::allocation;
using namespace tinyarena::allocation::testing;
using tinyarena::WorkBudget;

// Pins put back into the nested plan of the problem without them: every
// small pinned zero-slack instance whose relaxed plan has the cut plan's
// layers gets a plan at its height that validates (and honours every pin).
TEST(pin_repair_puts_the_pins_back_into_a_relaxed_nested_plan) {
  int repaired = 0, pinned = 0;
  for (uint64_t seed = 0; seed < 3000; ++seed) {
    const Problem p = tight_problem(seed, seed % 3 == 0);
    if (std::none_of(p.buffers.begin(), p.buffers.end(), [](const Buffer& b) { return b.fixed_offset.has_value(); }))
      continue;
    ++pinned;
    const PinRepairResult r = pin_repair_search(p, 24, WorkBudget(0));
    if (!r.solution) continue;
    ++repaired;
    CHECK(r.solution->height == 24);
    CHECK(validate(p, *r.solution).empty());
  }
  CHECK(pinned > 1000);
  CHECK(repaired * 10 > pinned * 8);  // most: where it misses, the relaxed plan's layers differ
}
