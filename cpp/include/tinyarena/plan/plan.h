// The planner: liveness -> allocation problem -> allocator -> per-op report.
// Takes the graph and options, returns a Plan value; nothing upstream changes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/graph/graph.h"
#include "tinyarena/graph/op_metrics.h"
#include "tinyarena/op_params/flash.h"
#include "tinyarena/op_params/weight_layouts.h"
#include "tinyarena/liveness/liveness.h"

namespace tinyarena::plan {

struct PlanOptions {
  int64_t alignment = 16;  // every buffer's offset and size rounded to this (TFLM uses 16)
  std::string allocator = "auto";
  double allocation_seconds = 0.3;  // search budget of the searching allocators, as deterministic work (WorkBudget)
  liveness::LivenessOptions liveness;
  int64_t sram_limit = 0;  // 0 = no limit; a plan above it reports fits() == false
  std::vector<int32_t> order;  // schedule (op indices); empty = file order
  // The build whose flash the plan reports, a target of op_params::targets(): "cortex-m4", "cortex-m7",
  // "cortex-m33", "cortex-m55" (SIMD kernels, packed int16 weights) or "host", "cortex-m3" (portable
  // kernels, int8 weights).
  std::string target = "cortex-m4";
  // Flash budget of the target's build, bytes (0 = none: every layer at its default weight
  // layout). With one, op_params::choose_weight_layouts picks each layer's layout; a budget below
  // the most compact build (LayoutChoice::compact_flash_bytes) makes flash_fits() false.
  int64_t flash_limit = 0;
  // > 0: the caller keeps the plan only if its peak is below this, so the allocator does not
  // search for a lower peak when the live-bytes bound is not below it (AllocatorOptions::worth_below).
  int64_t worth_below = 0;
};

// Flash of one op or of the whole model in the target's build: the constant
// arrays the generated code holds, and the kernel library code it links
// (estimated: see op_params::kernel_code_bytes; counted at the first op that calls
// a kernel; 0 for the host target).
struct FlashReport {
  op_params::ConstantBytes constants;
  int64_t code = 0;
  int64_t total() const { return constants.total() + code; }
};

struct OpReport {
  int32_t index = 0;  // op index in the graph
  int32_t step = 0;   // position in the schedule
  std::string type;
  std::vector<int32_t> output_shape;
  int64_t live_bytes = 0;     // activation buffers live at this step (aligned sizes)
  int64_t scratch_bytes = 0;  // scratch buffers of this step (aligned sizes)
  int64_t arena_top = 0;      // highest address used by buffers live at this step
  graph::OpMetrics metrics;   // MACs, and the op's constant tensors as the model stores them
  FlashReport flash;          // in the target's build
  // Cortex-M instructions of the op's kernel call in the target's build, predicted by the cost
  // model (op_params/cost_model.h; the untiled op's, 0 for an elided op).
  int64_t predicted_instructions = 0;
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
  FlashReport flash;            // sum of the ops' flash
  // The weight layouts of the target's build (layers not at their default layout), their flash
  // and the compact build's: what the report and the generated code use.
  op_params::LayoutChoice weight_layouts;
  int64_t macs = 0;
  int64_t predicted_instructions = 0;  // sum of the ops'
  // Ops that could write over their input but were planned out of place, because
  // writing in place raised the peak (see make_plan), ascending.
  std::vector<int32_t> inplace_declined;

  bool fits() const { return options.sram_limit <= 0 || peak_bytes <= options.sram_limit; }
  bool flash_fits() const { return weight_layouts.fits; }
};

// The plan of the graph. In-place ops are kept only where they do not raise
// the peak: when the plan with every allowed in-place op is higher than the
// one with none, the allowed ops are turned on one at a time in schedule order
// (the first kMaxInplaceTrials of them; any others stay out of place) and each
// is kept if the peak does not grow, so the result is never above the plan
// without in-place ops.
// Throws std::invalid_argument for bad options (alignment not a power of two,
// unknown allocator or target).
Plan make_plan(const graph::Graph& graph, const PlanOptions& options = {});

constexpr size_t kMaxInplaceTrials = 32;

// `plan` with its weight layouts chosen again for `target` under `flash_limit` (0: none; see
// PlanOptions::flash_limit) and its flash report redone; buffers and offsets stay. Throws
// std::invalid_argument for an unknown target.
Plan with_flash_limit(const graph::Graph& graph, Plan plan, const std::string& target, int64_t flash_limit);

// `plan` with the given weight layouts (layers absent: their default; op_params::check_weight_layouts
// throws std::invalid_argument for ones a kernel has no path for) and no flash limit, its flash
// report redone: what benchmarks and tests pin a build's layouts with.
Plan with_weight_layouts(const graph::Graph& graph, Plan plan, const op_params::WeightLayouts& layouts);

// The plan of given buffers (e.g. a tiled schedule's: ring buffers and full
// tensors): allocation and per-op report as make_plan does them, with the
// liveness's in-place choices as given.
Plan plan_buffers(const graph::Graph& graph, const PlanOptions& options, liveness::Liveness liveness);

}  // namespace tinyarena::plan
