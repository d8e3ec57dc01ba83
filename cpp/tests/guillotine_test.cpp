// The nested-cut search (guillotine.h): finds the cut plan of zero-slack
// instances, with pins, alignments and many buffers at an event; proves a
// pinwheel has none; keeps every nested plan through its pruning rules.
#include "allocation_problems.h"
#include "test_framework.h"
#include <tuple>
#include <vector>

#include "tinyarena/allocation/exact.h"
#include "tinyarena/allocation/guillotine.h"
#include "tinyarena/allocation/validator.h"

using namespace tinyarena::allocation;
using namespace tinyarena::allocation::testing;
using tinyarena::WorkBudget;

namespace {

// `count` buffers over one step cutting 1 MiB at random offsets, every
// `pin_every`-th pinned where it was cut, listed in shuffled order.
Problem pinned_stack(uint64_t seed, size_t count, size_t pin_every) {
  std::vector<int64_t> cuts{0, 1 << 20};
  while (cuts.size() < count + 1) cuts.push_back(1 + static_cast<int64_t>(next_random(seed) % ((1 << 20) - 1)));
  std::sort(cuts.begin(), cuts.end());
  Problem p;
  for (size_t i = 0; i < count; ++i) {
    if (cuts[i + 1] == cuts[i]) continue;
    Buffer b{"", cuts[i + 1] - cuts[i], 0, 0, 1, std::nullopt};
    if (i % pin_every == 1) b.fixed_offset = cuts[i];
    p.buffers.push_back(b);
  }
  for (size_t i = p.buffers.size(); i > 1; --i) std::swap(p.buffers[i - 1], p.buffers[next_random(seed) % i]);
  return p;
}

// The nested-cut search, without a budget, finds a valid plan of height 24
// (every tight_problem has one); a failure names the seed.
void check_nested_plan_found(const Problem& p, uint64_t seed) {
  const GuillotineResult r = guillotine_search(p, 24, GuillotineOptions{WorkBudget(0)});
  CHECK(r.solution.has_value());
  if (!r.solution) CHECK_EQ(seed, 0u);
  if (r.solution) CHECK(validate(p, *r.solution).empty() && r.solution->height == 24);
}

}  // namespace

TEST(guillotine_search_finds_the_cut_plan_of_small_zero_slack_instances) {
  // Every tight_problem is cut by nested cuts, so such a plan exists.
  for (uint64_t seed = 1; seed <= 600; ++seed) {
    const Problem p = tight_problem(seed * 31337, seed % 2 == 0);
    const GuillotineResult r = guillotine_search(p, 24, GuillotineOptions{WorkBudget(0)});
    CHECK(r.solution.has_value() && !r.complete);
    if (!r.solution) continue;
    CHECK_EQ(r.solution->height, 24);
    CHECK(validate(p, *r.solution).empty());
  }
}

TEST(guillotine_search_balances_events_many_buffers_meet_at) {
  // 40 to 60 buffers over 6 steps: a dozen or more undecided at an event,
  // where the smallest are tabulated and looked up (meet in the middle).
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const Problem p = tight_problem(seed * 7919, false, 60, 1 << 20, false);
    if (p.buffers.size() < 40) continue;
    const GuillotineResult r = guillotine_search(p, 1 << 20, GuillotineOptions{WorkBudget(1.0)});
    CHECK(r.solution.has_value());
    if (r.solution) CHECK(validate(p, *r.solution).empty() && r.solution->height == 1 << 20);
  }
}

TEST(guillotine_search_bounds_a_layer_by_its_pins) {
  // 40 to 60 buffers, one in eight pinned where it was cut: each pin decided
  // in or out of a layer bounds the layer's bytes (and the live bytes the
  // sweep passed bound them too), so sweeps no side can pack end early. 35
  // of these 37 solved within 10^7 units of work each (without the bounds:
  // 33).
  int instances = 0, solved = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const Problem p = tight_problem(seed * 7919, false, 60, 1 << 20, true);
    if (p.buffers.size() < 40) continue;
    ++instances;
    const GuillotineResult r = guillotine_search(p, 1 << 20, GuillotineOptions{WorkBudget(1e-2)});
    if (!r.solution) continue;
    ++solved;
    CHECK(validate(p, *r.solution).empty() && r.solution->height == 1 << 20);
  }
  CHECK_EQ(instances, 37);
  CHECK(solved >= 35);
}

TEST(guillotine_search_fills_the_gaps_between_pins_of_a_stack) {
  // The free buffers of a stack fill the gaps between its pins exactly: a
  // subset sum per gap: found or refuted within 100,000 units of work (one
  // layer per buffer in turn searched their orders: none found in 10^6).
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Problem p = pinned_stack(seed, 28, 5);
    const GuillotineResult r = guillotine_search(p, 1 << 20, GuillotineOptions{WorkBudget(1e-4)});
    CHECK(r.solution && validate(p, *r.solution).empty() && r.solution->height == 1 << 20);
    // A pin one byte lower leaves a gap a byte short: no subset fills both.
    auto lowest = std::min_element(p.buffers.begin(), p.buffers.end(), [](const Buffer& x, const Buffer& y) {
      return x.fixed_offset.value_or(1 << 30) < y.fixed_offset.value_or(1 << 30);
    });
    *lowest->fixed_offset -= 1;
    const GuillotineResult none = guillotine_search(p, 1 << 20, GuillotineOptions{WorkBudget(1e-4)});
    CHECK(!none.solution && none.complete);
  }
}

TEST(guillotine_search_proves_a_pinwheel_has_no_nested_cut_plan) {
  // Five buffers tile a 3-step x 3-byte rectangle as a pinwheel: every
  // layer of equal bytes per step is empty or everything, and every step
  // is crossed. The exact search still packs it into 3 bytes.
  Problem p;
  for (const auto& [size, first, last] : {std::tuple{1, 0, 1}, {2, 2, 2}, {1, 1, 2}, {2, 0, 0}, {1, 1, 1}})
    p.buffers.push_back(Buffer{"", size, first, last, 1, std::nullopt});
  const GuillotineResult r = guillotine_search(p, 3, GuillotineOptions{WorkBudget(0)});
  CHECK(!r.solution.has_value() && r.complete);
  const ExactResult exact = solve_exact(p, SearchBudget{WorkBudget(0), 0});
  CHECK(exact.proven_optimal && exact.solution.height == 3 && exact.method != "guillotine");
}

TEST(guillotine_search_needs_no_waste_and_honours_pins_and_alignment) {
  // A chain whose live bytes differ from step to step: no plan without waste.
  Problem chain;
  for (int32_t t = 0; t < 4; ++t) chain.buffers.push_back(Buffer{"", 16 * (t + 1), t, t + 1, 1, std::nullopt});
  const GuillotineResult none = guillotine_search(chain, 1 << 10, GuillotineOptions{WorkBudget(0)});
  CHECK(!none.solution.has_value() && none.complete);
  // Two stacked buffers over two steps: the pin puts the 4-byte one on top,
  // and the alignment of 4 a 2-byte one above 6 bytes has to go below.
  Problem stack;
  stack.buffers = {Buffer{"", 4, 0, 1, 1, 6}, Buffer{"", 6, 0, 1, 2, std::nullopt}};
  const GuillotineResult pinned = guillotine_search(stack, 10, GuillotineOptions{WorkBudget(0)});
  CHECK(pinned.solution && pinned.solution->offsets == std::vector<int64_t>({6, 0}));
  stack.buffers = {Buffer{"", 2, 0, 1, 4, std::nullopt}, Buffer{"", 6, 0, 1, 1, std::nullopt}};
  const GuillotineResult aligned = guillotine_search(stack, 8, GuillotineOptions{WorkBudget(0)});
  CHECK(aligned.solution && aligned.solution->offsets == std::vector<int64_t>({0, 2}));
}

TEST(guillotine_search_moves_free_buffers_spanning_a_part_to_its_top) {
  // Without pins, a buffer live at every step of the part is a layer any
  // nested plan can lift to the top: the rest is packed below such buffers.
  Problem p;
  p.buffers = {Buffer{"", 3, 0, 1, 1, std::nullopt}, Buffer{"", 2, 0, 0, 1, std::nullopt},
               Buffer{"", 2, 1, 1, 1, std::nullopt}, Buffer{"", 5, 0, 1, 1, std::nullopt}};
  const GuillotineResult lifted = guillotine_search(p, 10, GuillotineOptions{WorkBudget(0)});
  CHECK(lifted.solution && lifted.solution->offsets == std::vector<int64_t>({7, 0, 0, 2}));
  // An alignment of 4 that 3 and 5 bytes do not keep: the layers are searched instead.
  p.buffers[1].alignment = 4;
  const GuillotineResult searched = guillotine_search(p, 10, GuillotineOptions{WorkBudget(0)});
  CHECK(searched.solution && validate(p, *searched.solution).empty() && searched.solution->height == 10);
  CHECK(searched.solution->offsets != lifted.solution->offsets);
}

TEST(guillotine_search_stacks_the_event_components_of_a_part_without_pins) {
  // Two groups meeting at different events (a 2-byte pair changing at step
  // 1, a 3-byte pair at step 2): each is flat, so each is packed on its own,
  // one above the other. A pinwheel stacked with a pair the same way (flat,
  // but with no nested plan) refutes its part, so the whole problem.
  Problem p;
  p.buffers = {Buffer{"", 3, 0, 1, 1, std::nullopt}, Buffer{"", 2, 0, 0, 1, std::nullopt},
               Buffer{"", 3, 2, 2, 1, std::nullopt}, Buffer{"", 2, 1, 2, 1, std::nullopt}};
  const GuillotineResult stacked = guillotine_search(p, 5, GuillotineOptions{WorkBudget(0)});
  CHECK(stacked.solution && stacked.solution->offsets == std::vector<int64_t>({0, 3, 0, 3}));
  // Twice the sizes and an alignment of 2 that every size keeps: stacked the same way.
  Problem aligned = p;
  for (Buffer& b : aligned.buffers) b.size *= 2;
  aligned.buffers[1].alignment = 2;
  const GuillotineResult twice = guillotine_search(aligned, 10, GuillotineOptions{WorkBudget(0)});
  CHECK(twice.solution && twice.solution->offsets == std::vector<int64_t>({0, 6, 0, 6}));
  // Steps 3..8: a pinwheel changing at steps 5 and 7 (3 bytes), a 2-byte pair at step 6.
  for (const auto& [size, first, last] :
       {std::tuple{1, 3, 6}, {2, 7, 8}, {1, 5, 8}, {2, 3, 4}, {1, 5, 6}, {2, 3, 5}, {2, 6, 8}})
    p.buffers.push_back(Buffer{"", size, first, last, 1, std::nullopt});
  const GuillotineResult none = guillotine_search(p, 5, GuillotineOptions{WorkBudget(0)});
  CHECK(!none.solution && none.complete);
}

TEST(guillotine_search_keeps_every_nested_plan_when_it_stacks_components) {
  // Stacking the event components of a part (and lifting buffers spanning
  // it) decides without searching layers across components: sound only if
  // no nested plan is lost. Unpinned instances cut by nested cuts, up to 12
  // pieces, half with alignments: each must still be found.
  for (uint64_t seed = 1; seed <= 1000; ++seed)
    check_nested_plan_found(tight_problem(seed * 7919 + 17, seed % 2 == 0, 12, 24, false), seed);
}

TEST(guillotine_search_keeps_every_nested_plan_with_alignments_that_are_not_powers_of_two) {
  // Lifting buffers, stacking components and floating on free strips move
  // buffers by the sizes of others: those sizes must be multiples of every
  // alignment there (not only of the largest: 8 is a multiple of 4, not of
  // 3). Nested instances with alignments 1, 2, 3, 4, 6 or 12 that their cut
  // offsets keep, a third of them with pins: each must still be found.
  for (uint64_t seed = 1; seed <= 3000; ++seed) {
    Problem p = tight_problem(seed * 7727 + 3, false, 12, 24, seed % 3 == 0);
    const Solution cut = guillotine_search(p, 24, GuillotineOptions{WorkBudget(0)}).solution.value_or(Solution{});
    if (cut.offsets.empty()) continue;  // checked by the tests above
    uint64_t state = seed;
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      std::vector<int64_t> kept;
      for (int64_t a : {1, 2, 3, 4, 6, 12})
        if (cut.offsets[i] % a == 0) kept.push_back(a);
      p.buffers[i].alignment = kept[next_random(state) % kept.size()];
    }
    check_nested_plan_found(p, seed);
  }
}

TEST(guillotine_search_keeps_every_nested_plan_with_pins) {
  // With pins, free buffers spanning a part float below layers with pins
  // instead of being layers of their own, and rooms next to pins are
  // checked as the sweep decides them: sound only if no nested plan is
  // lost. Instances cut by nested cuts, up to 14 pieces, one in eight
  // pinned, half with alignments: each must still be found.
  for (uint64_t seed = 1; seed <= 3000; ++seed)
    check_nested_plan_found(tight_problem(seed * 6271 + 5, seed % 2 == 0, 14, 24, true), seed);
}

TEST(guillotine_search_floats_a_pinned_layer_on_free_buffers_spanning_the_part) {
  // 16 free buffers live over steps 0..3 (random sizes), a pinned pair
  // (steps 0..1 and 2..3) at the bytes of 8 of them: the pair floats on
  // those 8 and the others go on top. Each is found within 10^6 units of
  // work (at most 1.1 x 10^5 here). As layers of their own, the free
  // buffers' subsets below the pair were searched: 8 of these 10 needed
  // more, up to 1.8 x 10^7.
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    uint64_t state = seed * 977;
    Problem p;
    int64_t below = 0;
    for (int i = 0; i < 16; ++i) {
      const int64_t size = 1000 + static_cast<int64_t>(next_random(state) % 9000);
      p.buffers.push_back(Buffer{"", size, 0, 3, 1, std::nullopt});
      below += i % 2 == 0 ? size : 0;
    }
    p.buffers.push_back(Buffer{"", 5000, 0, 1, 1, below});
    p.buffers.push_back(Buffer{"", 5000, 2, 3, 1, std::nullopt});
    int64_t height = 5000;
    for (int i = 0; i < 16; ++i) height += p.buffers[i].size;
    for (size_t i = p.buffers.size(); i > 1; --i) std::swap(p.buffers[i - 1], p.buffers[next_random(state) % i]);
    const GuillotineResult r = guillotine_search(p, height, GuillotineOptions{WorkBudget(1e-3)});
    CHECK(r.solution && validate(p, *r.solution).empty() && r.solution->height == height);
  }
}
