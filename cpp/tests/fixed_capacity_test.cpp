// The fixed-capacity search (fixed_capacity.h): a plan within the capacity on
// instances with room to spare, a clear refusal below the bound, a refutation
// by search between the bound and the optimum, and the same plan on every run.
#include <optional>
#include <stdexcept>

#include "test_framework.h"
#include "tinyarena/allocation/allocators.h"
#include "tinyarena/allocation/exact.h"
#include "tinyarena/allocation/fixed_capacity.h"
#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/validator.h"

using namespace tinyarena::allocation;
using tinyarena::WorkBudget;

namespace {

uint64_t next_random(uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return state >> 33;
}

// `n` buffers of 1-64 bytes with lifetimes of 1-12 steps among 40, and 1 in
// `pin_every` of them pinned at a greedy plan's offsets (0: none); `aligned`:
// alignments 1-8 that need not divide the sizes (no mirrored search then).
Problem random_problem(uint64_t seed, int n, int pin_every, bool aligned = false) {
  Problem p;
  for (int i = 0; i < n; ++i) {
    Buffer b;
    b.first = static_cast<int32_t>(next_random(seed) % 40);
    b.last = b.first + static_cast<int32_t>(next_random(seed) % 12);
    b.size = 1 + static_cast<int64_t>(next_random(seed) % 64);
    if (aligned) b.alignment = int64_t{1} << (next_random(seed) % 4);
    p.buffers.push_back(b);
  }
  const Solution greedy = greedy_size_first_fit(p);
  for (size_t i = 0; pin_every > 0 && i < p.buffers.size(); ++i)
    if (next_random(seed) % pin_every == 0) p.buffers[i].fixed_offset = greedy.offsets[i];
  return p;
}

}  // namespace

TEST(fixed_capacity_meets_a_capacity_the_greedy_plan_misses) {
  int searched = 0;  // instances only a search met; three are enough (each costs seconds under ASan)
  for (uint64_t seed = 1; seed <= 30 && searched < 3; ++seed) {
    Problem p = random_problem(seed, 60, seed % 3 == 0 ? 8 : 0, seed % 4 == 1);
    const ExactResult optimum = solve_exact(p, SearchBudget{WorkBudget(1.0), 0});
    const int64_t greedy = greedy_size_first_fit(p).height;
    if (optimum.solution.height >= greedy) continue;
    p.capacity = optimum.solution.height;  // below both greedy plans' height or equal to best fit's
    const ExactResult r = solve_fixed_capacity(p, SearchBudget{WorkBudget(1.0), 0});
    CHECK(r.capacity_met);
    CHECK(r.solution.height <= p.capacity);
    CHECK(validate(p, r.solution).empty());
    searched += r.method != "greedy_size_first_fit" && r.method != "greedy_size_best_fit";
  }
  CHECK(searched > 0);
}

TEST(fixed_capacity_refuses_a_capacity_below_the_bound_at_once) {
  Problem p = random_problem(5, 40, 0);
  p.capacity = lower_bound_bytes(p) - 1;
  const ExactResult r = solve_fixed_capacity(p, SearchBudget{WorkBudget(1.0), 0});
  CHECK(r.capacity_refuted);
  CHECK(!r.capacity_met);
  CHECK_EQ(r.lower_bound, lower_bound_bytes(p));
  CHECK_EQ(r.nodes, 0);
  CHECK(describe_capacity(p, r).find("does not fit: needs at least") != std::string::npos);
}

TEST(fixed_capacity_refutes_by_search_between_the_bound_and_the_optimum) {
  // A pin leaves room below it too small for the buffer beside it, which
  // then goes above: the optimum is one buffer more than the live bytes.
  for (int64_t room = 1; room <= 4; ++room) {
    Problem p{{Buffer{"pin", 1, 0, 0, 1, room}, Buffer{"wide", room + 1, 0, 0, 1, std::nullopt}}, 0};
    const ExactResult optimum = solve_exact(p, SearchBudget{WorkBudget(1.0), 0});
    CHECK(optimum.proven_optimal);
    CHECK(optimum.solution.height > lower_bound_with_pins(p));
    p.capacity = optimum.solution.height - 1;  // at or above every bound, below the optimum
    const ExactResult r = solve_fixed_capacity(p, SearchBudget{WorkBudget(1.0), 0});
    CHECK(r.capacity_refuted);
    CHECK(!r.capacity_met);
    CHECK_EQ(r.lower_bound, optimum.solution.height);
    CHECK(r.nodes > 0);
    p.capacity = optimum.solution.height;
    CHECK(solve_fixed_capacity(p, SearchBudget{WorkBudget(1.0), 0}).capacity_met);
  }
}

TEST(fixed_capacity_gives_the_same_plan_on_every_run) {
  Problem p = random_problem(11, 400, 10);
  p.capacity = solve_exact(p, SearchBudget{WorkBudget(0.05), 0}).solution.height;
  const ExactResult a = solve_fixed_capacity(p, SearchBudget{WorkBudget(0.2), 0});
  const ExactResult b = solve_fixed_capacity(p, SearchBudget{WorkBudget(0.2), 0});
  CHECK(a.solution.offsets == b.solution.offsets);
  CHECK_EQ(a.method, b.method);
  CHECK(a.capacity_met);
}

TEST(fixed_capacity_needs_a_capacity) {
  bool threw = false;
  try {
    solve_fixed_capacity(random_problem(3, 10, 0));
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

TEST(auto_and_exact_stop_at_a_plan_within_the_capacity) {
  Problem p = random_problem(7, 80, 0);
  p.capacity = greedy_size_first_fit(p).height;  // first fit meets it: auto keeps it
  const AllocationResult kept = run_allocator(p, "auto");
  CHECK_EQ(kept.method, std::string("greedy_size_first_fit"));
  CHECK(kept.solution.height <= p.capacity);
  p.capacity = solve_exact(p, SearchBudget{WorkBudget(1.0), 0}).solution.height;
  for (const char* name : {"auto", "exact"}) {
    const AllocationResult r = run_allocator(p, name);
    CHECK(r.solution.height <= p.capacity);
    CHECK(validate(p, r.solution).empty());
  }
}
