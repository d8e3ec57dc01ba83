#include <algorithm>
#include <cstdint>
#include <vector>

#include "allocation_problems.h"
#include "test_framework.h"
#include "tinyarena/allocation/allocators.h"
#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/validator.h"
#include "tinyarena/common/flat_lists.h"

using namespace tinyarena::allocation;
using tinyarena::allocation::testing::brute_force_height;
using tinyarena::allocation::testing::small_problem;

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

TEST(align_up_rounds_to_the_next_multiple_with_or_without_division) {
  for (const int64_t alignment : {1, 2, 3, 8, 12, 64})
    for (int64_t value = -130; value <= 130; ++value) {
      const int64_t aligned = align_up(value, alignment);
      if (value >= 0) CHECK(aligned % alignment == 0 && aligned >= value && aligned - value < alignment);
      else CHECK_EQ(aligned, (value + alignment - 1) / alignment * alignment);  // below zero: as ever (toward zero)
    }
  CHECK_EQ(align_up(65, 64), 128);
  CHECK_EQ(align_up(13, 12), 24);
}

TEST(flat_lists_group_entries_by_key_in_the_order_given) {
  const tinyarena::FlatLists<int> lists(3, {{2, 7}, {0, 1}, {2, 3}, {0, 9}});
  const auto listed = [&](int32_t key) { return std::vector<int>(lists[key].begin(), lists[key].end()); };
  CHECK(listed(0) == std::vector<int>({1, 9}));
  CHECK_EQ(lists[1].size(), 0u);
  CHECK(listed(2) == std::vector<int>({7, 3}));
}

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

// First fit and best fit as defined: each buffer in size order against
// every placed buffer live with it, by offset (a scan and a sort per buffer).
Solution reference_greedy(const Problem& p, bool best_fit) {
  Solution s;
  s.offsets.assign(p.buffers.size(), 0);
  std::vector<int> placed;
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (p.buffers[i].fixed_offset) s.offsets[i] = *p.buffers[i].fixed_offset, placed.push_back(static_cast<int>(i));
  for (int b : size_descending_order(p)) {
    const Buffer& x = p.buffers[b];
    if (x.fixed_offset || x.size == 0) continue;
    std::vector<int> live;
    for (int o : placed)
      if (p.buffers[o].size > 0 && lifetimes_overlap(p.buffers[o], x)) live.push_back(o);
    std::stable_sort(live.begin(), live.end(), [&](int u, int v) { return s.offsets[u] < s.offsets[v]; });
    int64_t at = 0, best = -1, best_gap = INT64_MAX;
    for (int o : live) {
      const int64_t start = align_up(at, x.alignment), gap = s.offsets[o] - at;
      if (!best_fit && s.offsets[o] >= at + x.size) break;
      if (best_fit && s.offsets[o] - start >= x.size && gap < best_gap) best_gap = gap, best = start;
      at = best_fit ? std::max(at, s.offsets[o] + p.buffers[o].size) : std::max(at, align_up(s.offsets[o] + p.buffers[o].size, x.alignment));
    }
    s.offsets[b] = best >= 0 ? best : align_up(at, x.alignment);
    placed.push_back(b);
  }
  s.height = solution_height(p, s.offsets);
  return s;
}

TEST(greedy_plans_equal_the_plain_definition_on_short_and_long_lifetimes) {
  // The greedy plans list the placed buffers live with each one from blocks
  // of steps, or scan them all by offset where the blocks list too many:
  // both must give the plans of the definition. Mixed lifetimes (most short,
  // a few spanning everything), a few pins.
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    uint64_t state = seed;
    const int n = 50 + static_cast<int>(seed * 37 % 1500), steps = 20 + static_cast<int>(seed * 53 % 2000);
    Problem p = random_problem(seed, n, steps);
    for (int i = 0; i < n; i += 17) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      p.buffers[i].first = static_cast<int32_t>(state >> 40) % 3, p.buffers[i].last = steps - 1 - static_cast<int32_t>(state >> 50) % 3;
    }
    for (int i = 5; i < n; i += 97) p.buffers[i].fixed_offset = 1000 * i, p.buffers[i].alignment = 1;
    for (bool best_fit : {false, true}) {
      const Solution greedy = best_fit ? greedy_size_best_fit(p) : greedy_size_first_fit(p);
      const Solution reference = reference_greedy(p, best_fit);
      CHECK(greedy.offsets == reference.offsets && greedy.height == reference.height);
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

TEST(every_allocator_plan_validates_on_small_random_instances) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Problem p = small_problem(seed * 104729, 12, seed % 3 == 0);
    const int64_t optimum = brute_force_height(p);
    for (const std::string& name : allocator_names()) {
      const AllocationResult r = run_allocator(p, name);
      CHECK(validate(p, r.solution).empty());
      CHECK(r.solution.height >= optimum);
      CHECK(r.lower_bound <= optimum);
      CHECK(!r.proven_optimal || r.solution.height == optimum);
    }
  }
}

TEST(auto_does_not_search_for_heights_the_caller_cannot_use) {
  int searched = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Problem p = small_problem(seed * 7919, 12, seed % 3 == 0);
    const AllocationResult plain = run_allocator(p, "auto");
    const Solution first_fit = greedy_size_first_fit(p);
    const int64_t bound = lower_bound_bytes(p);
    if (first_fit.height == bound) continue;  // auto stops at first fit anyway
    ++searched;
    AllocatorOptions useless;
    useless.worth_below = bound;  // no plan is below its live-bytes bound
    const AllocationResult skipped = run_allocator(p, "auto", useless);
    CHECK(skipped.method == "greedy_size_first_fit");
    CHECK(skipped.solution.height == first_fit.height);
    CHECK(validate(p, skipped.solution).empty());
    AllocatorOptions useful;
    useful.worth_below = bound + 1;
    CHECK(run_allocator(p, "auto", useful).solution.height == plain.solution.height);
  }
  CHECK(searched > 0);
}
