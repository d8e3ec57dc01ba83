#include "tinyarena/plan/plan.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tinyarena/allocation/allocators.h"
#include "tinyarena/allocation/lower_bound.h"

namespace tinyarena::plan {
namespace {

std::vector<OpReport> report_ops(const graph::Graph& graph, const Plan& plan) {
  const auto metrics = graph::op_metrics(graph);
  std::vector<OpReport> reports;
  for (size_t step = 0; step < plan.liveness.order.size(); ++step) {
    const graph::Op& op = graph.ops[plan.liveness.order[step]];
    OpReport r;
    r.index = op.index;
    r.step = static_cast<int32_t>(step);
    r.type = op.type;
    if (const graph::Tensor* out = graph.output(op, 0)) r.output_shape = out->shape;
    r.metrics = metrics[op.index];
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

}  // namespace

allocation::Problem make_problem(const liveness::Liveness& liveness, int64_t alignment) {
  allocation::Problem problem;
  for (const liveness::LiveBuffer& live : liveness.buffers) {
    allocation::Buffer buffer;
    buffer.name = live.name;
    buffer.size = allocation::align_up(live.size, alignment);
    buffer.first = live.first;
    buffer.last = live.last;
    buffer.alignment = alignment;
    problem.buffers.push_back(buffer);
  }
  return problem;
}

void check_alignment(int64_t alignment) {
  if (!is_power_of_two(alignment))
    throw std::invalid_argument("alignment must be a power of two (1, 2, 4, ...), got " + std::to_string(alignment));
}

Plan make_plan(const graph::Graph& graph, const PlanOptions& options) {
  check_alignment(options.alignment);
  return plan_buffers(graph, options, liveness::analyze_liveness(graph, options.liveness, options.order));
}

Plan plan_buffers(const graph::Graph& graph, const PlanOptions& options, liveness::Liveness liveness) {
  check_alignment(options.alignment);
  Plan plan;
  plan.options = options;
  plan.liveness = std::move(liveness);
  plan.problem = make_problem(plan.liveness, options.alignment);
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
    plan.flash_bytes += r.metrics.flash_bytes();
    plan.macs += r.metrics.macs;
    if (r.live_bytes + r.scratch_bytes > most_in_use) {
      most_in_use = r.live_bytes + r.scratch_bytes;
      plan.peak_op = r.index;
    }
  }
  plan.lower_bound_bytes = allocation::lower_bound_bytes(plan.problem);
  return plan;
}

}  // namespace tinyarena::plan
