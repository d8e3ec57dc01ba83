#include "tinyarena/plan/plan.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "tinyarena/allocation/allocators.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/common/alignment.h"
#include "tinyarena/liveness/problem.h"
#include "tinyarena/op_params/cost_model.h"
#include "tinyarena/op_params/targets.h"

namespace tinyarena::plan {
namespace {

// The op's flash in the plan's target build; kernel code is estimated for the Cortex-M targets only.
FlashReport op_flash(const graph::Graph& graph, const graph::Op& op, const Plan& plan, op_params::KernelCodeTally& code) {
  FlashReport flash;
  const op_params::WeightLayout layout = op_params::layout_of(graph, plan.weight_layouts.layouts, op);
  flash.constants = op_params::constant_bytes(graph, op, op_params::target_build(plan.options.target), layout);
  const auto& in_place = plan.liveness.inplace_ops;
  if (plan.options.target != "host")
    flash.code = code.add(
        op_params::kernel_function(graph, op, std::binary_search(in_place.begin(), in_place.end(), op.index), layout));
  return flash;
}

std::vector<OpReport> report_ops(const graph::Graph& graph, const Plan& plan) {
  const auto metrics = graph::op_metrics(graph);
  op_params::KernelCodeTally code;
  std::vector<OpReport> reports;
  for (size_t step = 0; step < plan.liveness.order.size(); ++step) {
    const graph::Op& op = graph.ops[plan.liveness.order[step]];
    OpReport r;
    r.index = op.index;
    r.step = static_cast<int32_t>(step);
    r.type = op.type;
    if (const graph::Tensor* out = graph.output(op, 0)) r.output_shape = out->shape;
    r.metrics = metrics[op.index];
    r.flash = op_flash(graph, op, plan, code);
    r.predicted_instructions = op_params::predicted_instructions(graph, op, op_params::target_build(plan.options.target),
                                                              op_params::layout_of(graph, plan.weight_layouts.layouts, op));
    reports.push_back(r);
  }
  for (size_t b = 0; b < plan.problem.buffers.size(); ++b) {
    const allocation::Buffer& buffer = plan.problem.buffers[b];
    const bool scratch = plan.liveness.buffers[b].kind == liveness::BufferKind::Scratch;
    for (int32_t step = buffer.first; step <= buffer.last && step < static_cast<int32_t>(reports.size()); ++step) {
      OpReport& r = reports[step];
      (scratch ? r.scratch_bytes : r.live_bytes) += buffer.size;
      r.arena_top = std::max(r.arena_top, plan.solution.offsets[b] + buffer.size);
    }
  }
  return reports;
}

void add(FlashReport& sum, const FlashReport& op) {
  sum.constants.weights += op.constants.weights;
  sum.constants.biases += op.constants.biases;
  sum.constants.requant += op.constants.requant;
  sum.constants.tables += op.constants.tables;
  sum.code += op.code;
}

// The plan with the in-place ops of `options` except those in `declined`.
liveness::Liveness liveness_declining(const graph::Graph& graph, const PlanOptions& options,
                                      const std::vector<int32_t>& declined) {
  PlanOptions trial = options;
  trial.liveness.not_inplace_ops.insert(trial.liveness.not_inplace_ops.end(), declined.begin(), declined.end());
  return liveness::analyze_liveness(graph, trial.liveness, options.order);
}

Plan plan_declining(const graph::Graph& graph, const PlanOptions& options, const std::vector<int32_t>& declined) {
  return plan_buffers(graph, options, liveness_declining(graph, options, declined));
}

// Ops in `all` but not in `in_place` (both ascending).
std::vector<int32_t> minus(const std::vector<int32_t>& all, const std::vector<int32_t>& in_place) {
  std::vector<int32_t> rest;
  std::set_difference(all.begin(), all.end(), in_place.begin(), in_place.end(), std::back_inserter(rest));
  return rest;
}

// The first `limit` of `ops` in the order the schedule `order` runs them.
std::vector<int32_t> in_step_order(const std::vector<int32_t>& ops, const std::vector<int32_t>& order, size_t limit) {
  std::vector<int32_t> result;
  for (int32_t op : order)
    if (result.size() < limit && std::binary_search(ops.begin(), ops.end(), op)) result.push_back(op);
  return result;
}

// The per-op report of plan.weight_layouts and its sums.
void report(const graph::Graph& graph, Plan& plan) {
  plan.ops = report_ops(graph, plan);
  plan.flash = {};
  plan.macs = 0;
  plan.predicted_instructions = 0;
  plan.peak_op = -1;
  int64_t most_in_use = -1;
  for (const OpReport& r : plan.ops) {
    add(plan.flash, r.flash);
    plan.macs += r.metrics.macs;
    plan.predicted_instructions += r.predicted_instructions;
    if (r.live_bytes + r.scratch_bytes > most_in_use) {
      most_in_use = r.live_bytes + r.scratch_bytes;
      plan.peak_op = r.index;
    }
  }
}

// The weight layouts of plan.options (target, flash_limit), then the report.
void choose_layouts_and_report(const graph::Graph& graph, Plan& plan) {
  plan.weight_layouts = op_params::choose_weight_layouts(graph, plan.options.target, plan.options.flash_limit,
                                                         plan.liveness.inplace_ops);
  report(graph, plan);
}

}  // namespace

Plan make_plan(const graph::Graph& graph, const PlanOptions& options) {
  check_alignment(options.alignment);
  Plan all_on = plan_declining(graph, options, {});
  const std::vector<int32_t>& candidates = all_on.liveness.inplace_ops;
  if (candidates.empty()) return all_on;
  liveness::Liveness all_off = liveness_declining(graph, options, candidates);
  // No plan without in-place ops is below its lower bound: when that is not under the plan with
  // them all, the plan with them all stands without allocating the other.
  if (all_on.peak_bytes <= allocation::lower_bound_bytes(liveness::make_problem(all_off, options.alignment)))
    return all_on;
  Plan best = plan_buffers(graph, options, std::move(all_off));
  if (all_on.peak_bytes <= best.peak_bytes) return all_on;
  std::vector<int32_t> declined = candidates;
  PlanOptions trial_options = options;
  for (int32_t op : in_step_order(candidates, all_on.liveness.order, kMaxInplaceTrials)) {
    std::vector<int32_t> trial_declined;
    std::remove_copy(declined.begin(), declined.end(), std::back_inserter(trial_declined), op);
    trial_options.worth_below = best.peak_bytes + 1;  // kept when not above the best
    Plan trial = plan_declining(graph, trial_options, trial_declined);
    if (trial.peak_bytes > best.peak_bytes) continue;
    best = std::move(trial);
    declined = std::move(trial_declined);
  }
  best.inplace_declined = minus(candidates, best.liveness.inplace_ops);
  return best;
}

Plan plan_buffers(const graph::Graph& graph, const PlanOptions& options, liveness::Liveness liveness) {
  check_alignment(options.alignment);
  op_params::target_build(options.target);  // throws for an unknown target
  Plan plan;
  plan.options = options;
  plan.options.worth_below = 0;  // the caller's test, not part of the plan
  plan.liveness = std::move(liveness);
  plan.problem = liveness::make_problem(plan.liveness, options.alignment);
  allocation::AllocatorOptions allocator_options;
  allocator_options.seconds = options.allocation_seconds;
  allocator_options.worth_below = options.worth_below;
  allocation::AllocationResult allocated = allocation::run_allocator(plan.problem, options.allocator, allocator_options);
  plan.solution = std::move(allocated.solution);
  plan.allocation_method = allocated.method;
  plan.proven_optimal = allocated.proven_optimal;
  plan.peak_bytes = plan.solution.height;
  plan.lower_bound_bytes = allocation::lower_bound_bytes(plan.problem);
  choose_layouts_and_report(graph, plan);
  return plan;
}

Plan with_flash_limit(const graph::Graph& graph, Plan plan, const std::string& target, int64_t flash_limit) {
  op_params::target_build(target);  // throws for an unknown target
  plan.options.target = target;
  plan.options.flash_limit = flash_limit;
  choose_layouts_and_report(graph, plan);
  return plan;
}

}  // namespace tinyarena::plan

namespace tinyarena::plan {

Plan with_weight_layouts(const graph::Graph& graph, Plan plan, const op_params::WeightLayouts& layouts) {
  op_params::check_weight_layouts(graph, layouts);
  plan.options.flash_limit = 0;
  op_params::WeightLayouts changed;
  for (const auto& [index, layout] : layouts)
    if (layout != op_params::default_layout(graph, graph.ops[index])) changed[index] = layout;
  plan.weight_layouts = {};
  plan.weight_layouts.layouts = std::move(changed);
  report(graph, plan);
  return plan;
}

}  // namespace tinyarena::plan
