#include "tinyarena/allocation/allocators.h"

#include <algorithm>
#include <stdexcept>

#include "tinyarena/allocation/exact.h"
#include "tinyarena/allocation/fixed_capacity.h"
#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/local_search.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/skyline.h"

namespace tinyarena::allocation {
namespace {

// A heuristic's plan, optimal when it meets the live-bytes bound.
AllocationResult heuristic(const Problem& p, Solution solution, const char* method) {
  const int64_t bound = lower_bound_bytes(p);
  const bool optimal = solution.height == bound;
  return {std::move(solution), method, optimal, bound};
}

// The exact search's plan (with a capacity, the fixed-capacity search's: the
// first plan found within it), named after what found it.
AllocationResult run_exact(const Problem& p, const AllocatorOptions& o, WorkBudget budget) {
  const SearchBudget search{budget, o.node_limit};
  const ExactResult r = p.capacity > 0 ? solve_fixed_capacity(p, search) : solve_exact(p, search);
  return {r.solution, r.method, r.proven_optimal, r.lower_bound};
}

AllocationResult run_local_search(const Problem& p, const AllocatorOptions& o, WorkBudget budget) {
  return heuristic(p, local_search(p, LocalSearchOptions{LocalSearchOptions{}.iterations, budget, o.seed}).solution,
                   "local_search");
}

AllocationResult run_skyline(const Problem& p, const AllocatorOptions& o, WorkBudget budget) {
  SkylineOptions options;
  options.budget = budget;
  options.seed = o.seed;
  return heuristic(p, skyline_search(p, options).solution, "skyline");
}

WorkBudget budget_of(const AllocatorOptions& o) { return WorkBudget(o.seconds, o.wall_seconds); }

// Greedy first fit; if above the lower bound, the exact search (which runs
// the skyline search too) with the budget, from the better greedy plan. With
// a capacity: first fit if it fits, else the fixed-capacity search. No search
// when no plan could be worth it (the bound is not below `worth_below`).
AllocationResult run_auto(const Problem& p, const AllocatorOptions& o) {
  AllocationResult first_fit = heuristic(p, greedy_size_first_fit(p), "greedy_size_first_fit");
  const bool fits = p.capacity > 0 && first_fit.solution.height <= p.capacity;
  const bool worthless = o.worth_below > 0 && first_fit.lower_bound >= o.worth_below;
  if (first_fit.proven_optimal || fits || worthless) return first_fit;
  AllocationResult best_fit = heuristic(p, greedy_size_best_fit(p), "greedy_size_best_fit");
  const AllocationResult& start = best_fit.solution.height < first_fit.solution.height ? best_fit : first_fit;
  const SearchBudget search{budget_of(o), o.node_limit};
  const ExactResult r = p.capacity > 0 ? solve_fixed_capacity(p, search, &start.solution)
                                       : solve_exact(p, search, &start.solution);
  return {r.solution, r.method == "start" ? start.method : r.method, r.proven_optimal, r.lower_bound};
}

struct NamedAllocator {
  const char* name;
  AllocationResult (*run)(const Problem&, const AllocatorOptions&);
};

constexpr NamedAllocator kAllocators[] = {
    {"auto", run_auto},
    {"exact", [](const Problem& p, const AllocatorOptions& o) { return run_exact(p, o, budget_of(o)); }},
    {"local_search", [](const Problem& p, const AllocatorOptions& o) { return run_local_search(p, o, budget_of(o)); }},
    {"skyline", [](const Problem& p, const AllocatorOptions& o) { return run_skyline(p, o, budget_of(o)); }},
    {"greedy_size_first_fit",
     [](const Problem& p, const AllocatorOptions&) {
       return heuristic(p, greedy_size_first_fit(p), "greedy_size_first_fit");
     }},
    {"greedy_size_best_fit",
     [](const Problem& p, const AllocatorOptions&) {
       return heuristic(p, greedy_size_best_fit(p), "greedy_size_best_fit");
     }},
};

}  // namespace

std::vector<std::string> allocator_names() {
  std::vector<std::string> names;
  for (const auto& a : kAllocators) names.push_back(a.name);
  return names;
}

AllocationResult run_allocator(const Problem& problem, const std::string& allocator, const AllocatorOptions& options) {
  for (const auto& a : kAllocators)
    if (allocator == a.name) return a.run(problem, options);
  std::string known;
  for (const auto& name : allocator_names()) known += (known.empty() ? "" : ", ") + name;
  throw std::invalid_argument("unknown allocator '" + allocator + "' (known: " + known + ")");
}

Solution allocate(const Problem& problem, const std::string& allocator) {
  return run_allocator(problem, allocator).solution;
}

}  // namespace tinyarena::allocation
