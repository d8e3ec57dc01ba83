// The planner: liveness -> allocation problem -> allocator -> per-op report.
// Takes the graph and options, returns a Plan value; nothing upstream changes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/graph/graph.h"
#include "tinyarena/graph/op_metrics.h"
#include "tinyarena/liveness/liveness.h"

namespace tinyarena::plan {

struct PlanOptions {
  int64_t alignment = 16;  // every buffer's offset and size rounded to this (TFLM uses 16)
  std::string allocator = "auto";
  double allocation_seconds = 0.3;  // search budget of the searching allocators, as deterministic work (WorkBudget)
  liveness::LivenessOptions liveness;
  int64_t sram_limit = 0;  // 0 = no limit; a plan above it reports fits() == false
  std::vector<int32_t> order;  // schedule (op indices); empty = file order
};

struct OpReport {
  int32_t index = 0;  // op index in the graph
  int32_t step = 0;   // position in the schedule
  std::string type;
  std::vector<int32_t> output_shape;
  int64_t live_bytes = 0;     // activation buffers live at this step (aligned sizes)
  int64_t scratch_bytes = 0;  // scratch buffers of this step (aligned sizes)
  int64_t arena_top = 0;      // highest address used by buffers live at this step
  graph::OpMetrics metrics;
};

struct Plan {
  PlanOptions options;
  liveness::Liveness liveness;
  allocation::Problem problem;  // buffer i = liveness buffer i, size aligned up
  allocation::Solution solution;
  std::string allocation_method;  // the allocator whose plan was kept (for auto: the one that won)
  bool proven_optimal = false;    // no placement of these buffers is lower
  std::vector<OpReport> ops;    // in schedule order
  int64_t peak_bytes = 0;       // arena height
  int32_t peak_op = -1;         // first op with the most bytes in use (live + scratch)
  int64_t lower_bound_bytes = 0;
  int64_t flash_bytes = 0;
  int64_t macs = 0;

  bool fits() const { return options.sram_limit <= 0 || peak_bytes <= options.sram_limit; }
};

// Buffers of `liveness` as an allocation problem: sizes rounded up to
// `alignment`, every offset aligned to it.
allocation::Problem make_problem(const liveness::Liveness& liveness, int64_t alignment);

// 1, 2, 4, ...: what an arena (__attribute__((aligned(N)))) can be aligned to.
inline bool is_power_of_two(int64_t value) { return value >= 1 && (value & (value - 1)) == 0; }

// Throws std::invalid_argument unless `alignment` is a power of two: the arena is
// aligned to one, so offsets aligned to anything else are not aligned in memory.
void check_alignment(int64_t alignment);

// Throws std::invalid_argument for bad options (alignment not a power of two, unknown allocator).
Plan make_plan(const graph::Graph& graph, const PlanOptions& options = {});

// The plan of given buffers (e.g. a tiled schedule's: ring buffers and full
// tensors): allocation and per-op report exactly as make_plan does them.
Plan plan_buffers(const graph::Graph& graph, const PlanOptions& options, liveness::Liveness liveness);

}  // namespace tinyarena::plan
