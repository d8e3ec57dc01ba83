#include "test_framework.h"
#include "tinyarena/allocation/allocators.h"
#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/validator.h"

using namespace tinyarena::allocation;

namespace {

Buffer buffer(int64_t size, int32_t first, int32_t last, int64_t alignment = 1) {
  return Buffer{"", size, first, last, alignment, std::nullopt};
}

// A deterministic pseudo-random problem of `n` buffers over `steps` steps.
Problem random_problem(uint64_t seed, int n, int steps) {
  Problem p;
  for (int i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const int first = static_cast<int>((seed >> 33) % steps);
    const int length = static_cast<int>((seed >> 20) % 5);
    const int64_t size = 1 + static_cast<int64_t>((seed >> 40) % 200);
    p.buffers.push_back(buffer(size, first, std::min(first + length, steps - 1), 1 + (i % 3 == 0) * 7));
  }
  return p;
}

}  // namespace

TEST(lower_bound_is_the_largest_live_total) {
  Problem p{{buffer(10, 0, 1), buffer(20, 1, 2), buffer(5, 2, 3)}, 0};
  CHECK_EQ(lower_bound_bytes(p), 30);
  const auto live = live_bytes_per_step(p);
  CHECK_EQ(live.size(), 4u);
  CHECK_EQ(live[0], 10);
  CHECK_EQ(live[2], 25);
  CHECK_EQ(live[3], 5);
}

TEST(first_fit_reuses_dead_memory) {
  Problem p{{buffer(100, 0, 1), buffer(50, 1, 2), buffer(100, 2, 3)}, 0};
  const Solution s = greedy_size_first_fit(p);
  CHECK(validate(p, s).empty());
  CHECK_EQ(s.height, 150);
  CHECK_EQ(s.offsets[0], s.offsets[2]);
}

TEST(size_order_puts_equal_sizes_last_first) {
  Problem p{{buffer(16, 0, 0), buffer(32, 0, 0), buffer(16, 0, 0)}, 0};
  const auto order = size_descending_order(p);
  CHECK_EQ(order[0], 1);
  CHECK_EQ(order[1], 2);
  CHECK_EQ(order[2], 0);
}

TEST(first_fit_fills_the_lowest_gap_best_fit_the_tightest) {
  // Placed: [0,40) and [100,130) live at step 1; gaps: [40,100) of 60 and
  // (top) from 130. A 20-byte buffer: first fit takes 40; pins force it.
  Problem p{{buffer(40, 0, 2), buffer(30, 0, 2), buffer(20, 1, 1), buffer(60, 3, 3)}, 0};
  p.buffers[1].fixed_offset = 100;
  const Solution first = place_first_fit(p, {0, 2, 3});
  CHECK(validate(p, first).empty());
  CHECK_EQ(first.offsets[1], 100);
  CHECK_EQ(first.offsets[2], 40);
  // Best fit prefers an exact gap: add a 20-byte hole at [130,150) by pinning.
  Problem q{{buffer(40, 0, 2), buffer(30, 0, 2), buffer(20, 1, 1), buffer(10, 0, 2)}, 0};
  q.buffers[1].fixed_offset = 100;
  q.buffers[3].fixed_offset = 150;
  const Solution best = place_best_fit(q, {0, 2});
  CHECK(validate(q, best).empty());
  CHECK_EQ(best.offsets[2], 130);
}

TEST(alignment_rounds_offsets_up) {
  Problem p{{buffer(10, 0, 1, 1), buffer(10, 0, 1, 16)}, 0};
  const Solution s = place_first_fit(p, {0, 1});
  CHECK(validate(p, s).empty());
  CHECK_EQ(s.offsets[1], 16);
  CHECK_EQ(s.height, 26);
}

TEST(validator_reports_overlap_misalignment_pin_and_height) {
  Problem p{{buffer(10, 0, 1, 4), buffer(10, 1, 2)}, 0};
  p.buffers[1].fixed_offset = 5;
  const auto errors = validate(p, Solution{{2, 3}, 12});
  CHECK_EQ(errors.size(), 4u);  // misaligned 2, pin 5 vs 3, overlap, height 13 != 12
  CHECK(validate(p, Solution{{0}, 10}).size() == 1u);  // wrong offset count
  Problem capped{{buffer(10, 0, 0)}, 8};
  CHECK_EQ(validate(capped, Solution{{0}, 10}).size(), 1u);
}

TEST(greedy_plans_validate_on_random_problems) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Problem p = random_problem(seed, 2 + static_cast<int>(seed % 40), 12);
    for (const auto& name : allocator_names()) {
      const Solution s = run_allocator(p, name, AllocatorOptions{0.001}).solution;  // budgets of 1 ms of work
      CHECK(validate(p, s).empty());
      CHECK(s.height >= lower_bound_bytes(p));
    }
  }
}

TEST(unknown_allocator_is_an_error) {
  bool thrown = false;
  try {
    allocate(Problem{}, "magic");
  } catch (const std::invalid_argument&) {
    thrown = true;
  }
  CHECK(thrown);
}
