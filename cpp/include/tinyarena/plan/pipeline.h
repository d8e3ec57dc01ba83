// The pipeline as `tinyarena.plan` runs it: interface -> graph rewrites -> op
// order -> plan, with the policy that decides what is kept. Python, the CLI
// and C++ callers (examples/plan_model.cpp) all call this one function.
//
// 1. Interface: io_boundary drops the boundary ops the options name (int8 I/O,
//    NHWC input). It is chosen, never judged.
// 2. With an explicit order: plan that order, nothing else (no transforms).
// 3. Else each named graph rewrite in turn (fold_pads, zero_copy; see
//    transforms.h) on the graph kept so far (keep_if_no_higher):
//    a. all of its rewrites at once; kept when the plan of the result, reordered
//       first when "reorder" is named (planned_graph), peaks no higher;
//    b. when that raises the peak and there are 2..kMaxSingleTrials rewrites,
//       each alone from the last op back (PAD folding renumbers later ops),
//       each kept when the peak does not grow (one_at_a_time).
// 4. "reorder": find_schedule's order of the final graph is kept when its plan
//    peaks no higher than the file order's (always with force_reorder).
// 5. In-place ops change the peaks that steps 3-4 compare, so with in-place
//    ops allowed the path without them is followed too; when it ends lower,
//    its graph and order are planned again with in-place ops (make_plan keeps
//    each only where it does not raise the peak, never above that path's end).
//    It is skipped when it cannot reach another graph or order (no rewrite
//    found, and no reordering or only one order: other_path_can_differ).
//
// Limits: greedy and one pass; a rewrite rejected early is not retried after a
// later one is kept, and at most kMaxSingleTrials rewrites are tried alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/plan/plan.h"
#include "tinyarena/schedule/schedule.h"
#include "tinyarena/transforms/transforms.h"

namespace tinyarena::plan {

struct PipelineOptions {
  PlanOptions plan;  // with a non-empty order, the transforms must be empty
  transforms::IoBoundaryOptions interface;
  // Any of "fold_pads", "zero_copy", "reorder"; applied in that order whatever the order given.
  std::vector<std::string> transforms = {"fold_pads", "zero_copy", "reorder"};
  bool force_reorder = false;  // plan the order found even when its peak is higher (`reorder=True`)
  // The reorder search's budgets and method; its liveness and alignment are taken from `plan`.
  schedule::ScheduleOptions schedule;
};

// One transform's effect: file-order lower bound and peak before and after it, and whether it was kept.
struct TransformReport {
  std::string name;
  bool applied = false;              // kept: it changed the graph or order and the peak did not grow
  std::vector<std::string> changes;  // one line per rewrite kept (or tried, when none was kept)
  int64_t lower_bound_before = 0;
  int64_t lower_bound_after = 0;
  int64_t peak_before = 0;
  int64_t peak_after = 0;
};

struct PipelineResult {
  graph::Graph graph;                           // after the interface and the kept rewrites
  Plan plan;                                    // of `graph`, in the order kept
  std::vector<transforms::Rewrite> interface;   // what io_boundary removed
  std::vector<TransformReport> transforms;      // one per transform tried, in order
  std::optional<schedule::ScheduleResult> schedule;  // the search whose order was planned
};

constexpr size_t kMaxSingleTrials = 32;

// Throws std::invalid_argument for unknown transform names or an order given
// with transforms; the stages' own errors propagate.
PipelineResult run_pipeline(const graph::Graph& graph, const PipelineOptions& options = {});

}  // namespace tinyarena::plan
