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

// The kernel code the target links, counted at each kernel's first caller; the
// functions of one source together never above what that whole source links.
class CodeTally {
 public:
  int64_t add(const op_params::KernelFunction& kernel) {
    if (kernel.function.empty() || !functions_.insert(kernel.function).second) return 0;
    int64_t& source = by_source_[kernel.source];
    const int64_t before = source;
    source = std::min(source + op_params::kernel_code_bytes(kernel.function),
                      op_params::kernel_source_code_bytes(kernel.source));
    return source - before;
  }

 private:
  std::set<std::string> functions_;
  std::map<std::string, int64_t> by_source_;
};

// The op's flash in the plan's target build; kernel code is estimated for the Cortex-M targets only.
FlashReport op_flash(const graph::Graph& graph, const graph::Op& op, const Plan& plan, CodeTally& code) {
  FlashReport flash;
  flash.constants = op_params::constant_bytes(graph, op, op_params::target_build(plan.options.target));
  const auto& in_place = plan.liveness.inplace_ops;
  if (plan.options.target != "host")
    flash.code = code.add(op_params::kernel_function(graph, op, std::binary_search(in_place.begin(), in_place.end(), op.index)));
  return flash;
}

std::vector<OpReport> report_ops(const graph::Graph& graph, const Plan& plan) {
  const auto metrics = graph::op_metrics(graph);
  CodeTally code;
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
    r.predicted_instructions = op_params::predicted_instructions(graph, op, op_params::target_build(plan.options.target));
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
  for (int32_t op : in_step_order(candidates, all_on.liveness.order, kMaxInplaceTrials)) {
    std::vector<int32_t> trial_declined;
    std::remove_copy(declined.begin(), declined.end(), std::back_inserter(trial_declined), op);
    Plan trial = plan_declining(graph, options, trial_declined);
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
  plan.liveness = std::move(liveness);
  plan.problem = liveness::make_problem(plan.liveness, options.alignment);
  allocation::AllocatorOptions allocator_options;
  allocator_options.seconds = options.allocation_seconds;
  allocation::AllocationResult allocated = allocation::run_allocator(plan.problem, options.allocator, allocator_options);
  plan.solution = std::move(allocated.solution);
  plan.allocation_method = allocated.method;
  plan.proven_optimal = allocated.proven_optimal;
  plan.ops = report_ops(graph, plan);
  plan.peak_bytes = plan.solution.height;
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
  plan.lower_bound_bytes = allocation::lower_bound_bytes(plan.problem);
  return plan;
}

}  // namespace tinyarena::plan
