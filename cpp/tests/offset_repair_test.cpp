// The offset repair (offset_repair.h): a plan past the target brought within
// it by moving the buffer past it onto a slot clear of the pins and putting
// back the buffers it lands on; pins stay; a plan within the target is kept.
#include "test_framework.h"
#include "tinyarena/allocation/offset_repair.h"
#include "tinyarena/allocation/validator.h"

using namespace tinyarena::allocation;
using tinyarena::WorkBudget;

namespace {

Buffer buffer(int64_t size, int32_t first, int32_t last) {
  Buffer b;
  b.size = size;
  b.first = first;
  b.last = last;
  return b;
}

// Two short buffers (60 B, steps 0-3 and 6-9), a long one (40 B, steps 2-7)
// and a pin (50 B at 100, every step): within 150 B only with the long one
// at 60 and both short ones at 0. `stacked`: the short ones at 0 and 40, so
// the long one goes above the pin, to 150.
Problem pinned_gap() {
  Problem p;
  p.buffers = {buffer(60, 0, 3), buffer(60, 6, 9), buffer(40, 2, 7), buffer(50, 0, 9)};
  p.buffers[3].fixed_offset = 100;
  return p;
}

Solution stacked(const Problem& p) {
  Solution s{{0, 40, 150, 100}, 0};
  s.height = solution_height(p, s.offsets);
  return s;
}

}  // namespace

TEST(offset_repair_moves_a_buffer_past_the_target_into_the_gap_a_pin_leaves) {
  const Problem p = pinned_gap();
  const Solution start = stacked(p);
  CHECK(validate(p, start).empty());
  CHECK_EQ(start.height, 190);
  const OffsetRepairResult r = repair_offsets(p, start, 150, WorkBudget(0.01));
  CHECK(validate(p, r.solution).empty());
  CHECK_EQ(r.solution.height, 150);
  CHECK(r.solution.offsets[2] + 40 <= 100);  // the long buffer, below the pin
  CHECK_EQ(r.solution.offsets[3], 100);  // the pin stays
  CHECK(r.work > 0);
}

TEST(offset_repair_keeps_a_plan_within_the_target_and_never_moves_a_pin) {
  const Problem p = pinned_gap();
  const Solution start = stacked(p);
  const OffsetRepairResult at_start = repair_offsets(p, start, 190, WorkBudget(0.01));
  CHECK(at_start.solution.offsets == start.offsets);  // nothing past the target: nothing to move
  // A target the pin itself ends past (100 B): the free buffers are brought
  // within it, the pin stays and sets the height.
  const OffsetRepairResult r = repair_offsets(p, start, 100, WorkBudget(0.01), 7);
  CHECK(validate(p, r.solution).empty());
  CHECK_EQ(r.solution.offsets[3], 100);
  CHECK_EQ(r.solution.height, 150);
  for (int b = 0; b < 3; ++b) CHECK(r.solution.offsets[b] + p.buffers[b].size <= 100);
}
