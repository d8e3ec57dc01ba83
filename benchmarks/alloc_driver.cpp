// Allocation problems from CSV files (interchange/csv.h), one allocator, in
// process: per file the gap of the plan's height to the live-bytes lower
// bound, wall ms, the method that found the plan, the work to the plan (auto
// and exact) and a hash of the offsets (the same plan on every run hashes the
// same); then how many are within 5 % of the bound and the slowest of those.
// Build with -DTINYARENA_BENCHMARKS=ON; write the zero-slack instances with
// `python benchmarks/alloc_bench.py --write-csv DIR` (the slack instances:
// `python benchmarks/slack_bench.py --write-csv DIR`).
// ALLOCATOR `fixed=CAPACITY` runs the fixed-capacity search at CAPACITY bytes
// (fixed_capacity.h); its lines add `fits` or `misses`, the height and the
// CPU time of the process (both threads of the race; less dependent on load
// than wall time).
//
//   tinyarena_alloc_driver ALLOCATOR SECONDS FILE.csv...
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tinyarena/allocation/allocators.h"
#include "tinyarena/allocation/exact.h"
#include "tinyarena/allocation/fixed_capacity.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/validator.h"
#include "tinyarena/interchange/csv.h"

using namespace tinyarena;

namespace {

struct Run {
  allocation::Solution solution;
  std::string method;
  int64_t work_to_plan = -1;  // -1: the allocator does not report it
};

constexpr char kFixed[] = "fixed=";

Run run(allocation::Problem problem, const std::string& allocator, double seconds) {
  if (allocator.rfind(kFixed, 0) == 0) {
    problem.capacity = std::atoll(allocator.c_str() + sizeof kFixed - 1);
    const allocation::ExactResult r =
        allocation::solve_fixed_capacity(problem, allocation::SearchBudget{WorkBudget(seconds), 0});
    return {r.solution, r.method, r.work_to_plan};
  }
  if (allocator == "exact") {
    const allocation::ExactResult r = allocation::solve_exact(problem, allocation::SearchBudget{WorkBudget(seconds), 0});
    return {r.solution, r.method, r.work_to_plan};
  }
  allocation::AllocatorOptions options;
  options.seconds = seconds;
  const allocation::AllocationResult r = allocation::run_allocator(problem, allocator, options);
  return {r.solution, r.method, -1};
}

uint64_t offsets_hash(const allocation::Solution& s) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the offsets
  for (int64_t offset : s.offsets) hash = (hash ^ static_cast<uint64_t>(offset)) * 1099511628211ull;
  return hash;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s ALLOCATOR SECONDS FILE.csv...\n", argv[0]);
    return 2;
  }
  const std::string allocator = argv[1];
  const double seconds = std::atof(argv[2]);
  int within = 0;
  double slowest_within = 0;
  for (int i = 3; i < argc; ++i) {
    std::ifstream file(argv[i]);
    std::stringstream text;
    text << file.rdbuf();
    const allocation::Problem problem = interchange::parse_problem_csv(text.str()).problem;
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();
    const Run r = run(problem, allocator, seconds);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const double cpu_ms = 1000.0 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    if (!allocation::validate(problem, r.solution).empty()) {
      std::fprintf(stderr, "%s: the plan does not validate\n", argv[i]);
      return 1;
    }
    const int64_t bound = allocation::lower_bound_bytes(problem);
    const double gap = bound > 0 ? static_cast<double>(r.solution.height) / static_cast<double>(bound) - 1 : 0;
    if (gap <= 0.05) ++within, slowest_within = ms > slowest_within ? ms : slowest_within;
    std::printf("%s %.4f%% %.1fms %s %lld %016llx", argv[i], 100 * gap, ms, r.method.c_str(),
                static_cast<long long>(r.work_to_plan), static_cast<unsigned long long>(offsets_hash(r.solution)));
    if (allocator.rfind(kFixed, 0) == 0) {
      const bool fits = r.solution.height <= std::atoll(allocator.c_str() + sizeof kFixed - 1);
      std::printf(" %s %lld %.1fcpu-ms", fits ? "fits" : "misses", static_cast<long long>(r.solution.height), cpu_ms);
    }
    std::printf("\n");
  }
  std::printf("within 5 %%: %d of %d, the slowest of those %.1f ms\n", within, argc - 3, slowest_within);
}
