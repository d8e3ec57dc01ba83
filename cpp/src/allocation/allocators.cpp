#include "tinyarena/allocation/allocators.h"

#include <algorithm>
#include <stdexcept>

#include "tinyarena/allocation/exact.h"
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

AllocationResult run_exact(const Problem& p, const AllocatorOptions& o, WorkBudget budget,
                           const Solution* start = nullptr) {
  const ExactResult r = solve_exact(p, SearchBudget{budget, o.node_limit}, start);
  return {r.solution, "exact", r.proven_optimal, r.lower_bound};
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

// Greedy first fit; if above the lower bound, the exact search from the
// better greedy plan for a tenth of the budget (real models end here, proven
// optimal); else the skyline search (two thirds of what is left), then the
// exact search from the lowest plan so far (the rest). The lowest plan wins.
AllocationResult run_auto(const Problem& p, const AllocatorOptions& o) {
  AllocationResult best = heuristic(p, greedy_size_first_fit(p), "greedy_size_first_fit");
  if (best.proven_optimal) return best;
  const auto keep = [&best](AllocationResult candidate) {
    if (candidate.solution.height < best.solution.height || candidate.proven_optimal) best = std::move(candidate);
  };
  keep(heuristic(p, greedy_size_best_fit(p), "greedy_size_best_fit"));
  WorkBudget budget = budget_of(o);
  AllocationResult exact = run_exact(p, o, budget.share(0.1), &best.solution);
  int64_t bound = exact.lower_bound;
  keep(std::move(exact));
  if (!best.proven_optimal) {
    keep(run_skyline(p, o, budget.share(2.0 / 3.0)));
    if (best.solution.height > bound) {
      exact = run_exact(p, o, budget.share(1.0), &best.solution);
      bound = std::max(bound, exact.lower_bound);
      keep(std::move(exact));
    }
  }
  best.lower_bound = bound;
  best.proven_optimal = best.solution.height == bound;
  return best;
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
