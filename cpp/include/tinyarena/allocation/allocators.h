// The allocators by name, so callers (plan, CLI, Python) pick one with a string.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/allocation/problem.h"

namespace tinyarena::allocation {

struct AllocatorOptions {
  double seconds = 0.3;      // search budget of exact, local_search, skyline and auto, as deterministic work
                             // (WorkBudget: about this many seconds here; <= 0: none)
  int64_t node_limit = 0;    // exact search nodes (0: none)
  uint64_t seed = 1;         // local search and skyline
  double wall_seconds = 0;   // hard wall-clock cap (<= 0: none); when it binds, the plan depends on machine load
  // > 0: the caller keeps the plan only if its height is below this (it has one that low), so auto
  // does not search when the live-bytes bound is not below it: the first-fit plan stands.
  int64_t worth_below = 0;
};

struct AllocationResult {
  Solution solution;
  std::string method;          // what found the plan: the allocator, or for auto and exact the search
                               // or heuristic that won ("exact", "guillotine", "skyline", a greedy's name)
  bool proven_optimal = false; // no plan is lower
  int64_t lower_bound = 0;     // proven: no plan is lower than this
};

// Names accepted by allocate(), in a stable order: auto (greedy first fit;
// if above the lower bound, the exact search -- nested-cut and skyline searches included --
// from the better greedy plan within the budget), exact, local_search,
// skyline, greedy_size_first_fit, greedy_size_best_fit. With problem.capacity
// set, auto keeps first fit if it fits, and auto and exact run the
// fixed-capacity search (fixed_capacity.h): the first plan within it.
std::vector<std::string> allocator_names();

// Runs the named allocator; throws std::invalid_argument for an unknown name.
AllocationResult run_allocator(const Problem& problem, const std::string& allocator, const AllocatorOptions& options = {});

// run_allocator(...).solution.
Solution allocate(const Problem& problem, const std::string& allocator);

}  // namespace tinyarena::allocation
