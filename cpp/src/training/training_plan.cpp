#include "tinyarena/training/training_plan.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "tinyarena/allocation/allocators.h"
#include "tinyarena/allocation/validator.h"
#include "tinyarena/common/alignment.h"
#include "tinyarena/liveness/problem.h"
#include "tinyarena/op_params/flash.h"
#include "tinyarena/op_params/targets.h"

namespace tinyarena::training {

namespace {

// The channel update that replaces backward step `step` (-1: none).
int32_t channel_update_replacing(const TrainingGraph& t, size_t step) {
  for (size_t c = 0; c < t.channel_updates.size(); ++c)
    if (t.channel_update_replaces[c] == static_cast<int32_t>(step)) return static_cast<int32_t>(c);
  return -1;
}

}  // namespace

std::vector<const TrainStep*> backward_timeline(const TrainingGraph& t, bool reorder_updates) {
  std::vector<const TrainStep*> timeline;
  for (size_t i = 0; i < t.backward.size(); ++i) {
    int32_t fused = reorder_updates ? channel_update_replacing(t, i) : -1;
    if (fused >= 0) {
      timeline.push_back(&t.channel_updates[fused]);  // its SGD update is part of it
      continue;
    }
    timeline.push_back(&t.backward[i]);
    for (size_t u = 0; reorder_updates && u < t.sgd_updates.size(); ++u)
      if (t.update_after[u] == static_cast<int32_t>(i)) timeline.push_back(&t.sgd_updates[u]);
  }
  if (!reorder_updates)
    for (const TrainStep& update : t.sgd_updates) timeline.push_back(&update);
  return timeline;
}

namespace {

// Forward buffers as inference plans them, no op writing over a saved activation.
liveness::Liveness forward_liveness(const TrainingGraph& t, const TrainingOptions& options) {
  liveness::LivenessOptions plain;
  plain.inplace_depthwise = plain.inplace_elementwise = false;
  plain.scratch = options.scratch;
  liveness::Liveness base = liveness::analyze_liveness(t.forward, plain);
  if (!options.inplace) return base;
  std::set<int32_t> saved_buffers;
  for (int32_t tensor : t.saved) saved_buffers.insert(base.tensor_buffer[tensor]);
  liveness::LivenessOptions inplace;
  inplace.scratch = options.scratch;
  for (const graph::Op& op : t.forward.ops)
    for (int32_t in : op.inputs)
      if (in >= 0 && saved_buffers.count(base.tensor_buffer[in])) {
        inplace.not_inplace_ops.push_back(op.index);
        break;
      }
  return liveness::analyze_liveness(t.forward, inplace);
}

class ValueRoots {
 public:
  explicit ValueRoots(size_t n) : parent_(n) {
    for (size_t i = 0; i < n; ++i) parent_[i] = static_cast<int32_t>(i);
  }
  int32_t root(int32_t v) { return parent_[v] == v ? v : parent_[v] = root(parent_[v]); }
  void join(int32_t into, int32_t v) { parent_[root(v)] = root(into); }

 private:
  std::vector<int32_t> parent_;
};

// Backward values sharing memory: a step marked in_place_candidate writes over
// its first read when it has the same size and nothing reads it later.
ValueRoots backward_aliases(const TrainingGraph& t, const std::vector<const TrainStep*>& timeline, bool inplace) {
  ValueRoots roots(t.values.size());
  std::vector<int32_t> last_read(t.values.size(), -1);
  for (size_t s = 0; s < timeline.size(); ++s)
    for (int32_t v : timeline[s]->reads) last_read[v] = static_cast<int32_t>(s);
  std::vector<int32_t> root_last = last_read;
  for (size_t s = 0; inplace && s < timeline.size(); ++s) {
    const TrainStep& step = *timeline[s];
    if (!step.in_place_candidate || step.reads.empty() || step.writes.size() != 1) continue;
    int32_t input = roots.root(step.reads[0]), output = step.writes[0];
    if (root_last[input] > static_cast<int32_t>(s) || t.values[input].bytes != t.values[output].bytes ||
        t.values[input].cls != ValueClass::Gradient)
      continue;
    roots.join(input, output);
    root_last[input] = std::max(root_last[input], last_read[output]);
  }
  return roots;
}

struct StepBuffers {
  liveness::Liveness liveness;
  std::vector<ValueClass> classes;
  std::vector<int32_t> value_buffer;  // per value (TrainingPlan::value_buffer)
  std::vector<int32_t> step_scratch;  // per timeline step
};

void add_buffer(StepBuffers& out, liveness::LiveBuffer buffer, ValueClass cls) {
  buffer.kind = cls == ValueClass::Scratch ? liveness::BufferKind::Scratch : liveness::BufferKind::Activation;
  out.liveness.buffers.push_back(std::move(buffer));
  out.classes.push_back(cls);
}

StepBuffers step_buffers(const TrainingGraph& t, const TrainingOptions& options) {
  StepBuffers out;
  out.liveness = forward_liveness(t, options);
  int32_t forward = static_cast<int32_t>(t.forward.ops.size());
  std::vector<const TrainStep*> timeline = backward_timeline(t, options.reorder_updates);
  int32_t end = forward + static_cast<int32_t>(timeline.size()) - 1;
  std::vector<liveness::LiveBuffer> buffers = std::move(out.liveness.buffers);
  out.liveness.buffers.clear();
  for (size_t s = 0; s < timeline.size(); ++s)
    for (int32_t tensor : timeline[s]->saved) {
      liveness::LiveBuffer& held = buffers[out.liveness.tensor_buffer[tensor]];
      held.last = std::max(held.last, forward + static_cast<int32_t>(s));
    }
  for (liveness::LiveBuffer& buffer : buffers) {
    ValueClass cls = buffer.kind == liveness::BufferKind::Scratch ? ValueClass::Scratch : ValueClass::Activation;
    add_buffer(out, std::move(buffer), cls);
  }
  ValueRoots roots = backward_aliases(t, timeline, options.inplace);
  std::vector<int32_t> first(t.values.size(), INT32_MAX), last(t.values.size(), -1);
  for (size_t s = 0; s < timeline.size(); ++s) {
    int32_t step = forward + static_cast<int32_t>(s);
    for (const auto* list : {&timeline[s]->reads, &timeline[s]->writes})
      for (int32_t v : *list) {
        int32_t r = roots.root(v);
        first[r] = std::min(first[r], step);
        last[r] = std::max(last[r], step);
      }
    int64_t scratch = options.single_pass_requant ? timeline[s]->single_pass_scratch_bytes : timeline[s]->scratch_bytes;
    out.step_scratch.push_back(options.scratch && scratch > 0 ? static_cast<int32_t>(out.liveness.buffers.size()) : -1);
    if (options.scratch && scratch > 0)
      add_buffer(out, {"scratch " + timeline[s]->what + " op " + std::to_string(timeline[s]->op),
                       liveness::BufferKind::Scratch, scratch, step, step, {}, timeline[s]->op},
                 ValueClass::Scratch);
  }
  std::vector<int32_t> step_of_op(t.forward.ops.size());
  for (int32_t s = 0; s < forward; ++s) step_of_op[out.liveness.order.empty() ? s : out.liveness.order[s]] = s;
  out.value_buffer.assign(t.values.size(), -1);
  for (size_t v = 0; v < t.values.size(); ++v) {
    const TrainValue& value = t.values[v];
    if (roots.root(static_cast<int32_t>(v)) != static_cast<int32_t>(v) || last[v] < 0) continue;
    out.value_buffer[v] = static_cast<int32_t>(out.liveness.buffers.size());
    bool trainable = value.cls == ValueClass::Trainable;
    int32_t from = trainable ? 0 : value.forward_op >= 0 ? step_of_op[value.forward_op] : first[v];
    add_buffer(out, {value.name, liveness::BufferKind::Activation, value.bytes, from, trainable ? end : last[v], {},
                     value.forward_op},
               value.cls);
  }
  for (size_t v = 0; v < t.values.size(); ++v) out.value_buffer[v] = out.value_buffer[roots.root(static_cast<int32_t>(v))];
  return out;
}

// Steps with their live bytes per class; the lower bound and the step where it is reached.
void report_steps(TrainingPlan& plan, const std::vector<const TrainStep*>& timeline) {
  int32_t steps = plan.forward_steps + static_cast<int32_t>(timeline.size());
  plan.steps.resize(steps);
  for (int32_t s = 0; s < steps; ++s) {
    StepReport& report = plan.steps[s];
    report.step = s;
    if (s < plan.forward_steps) {
      report.op = plan.liveness.order.empty() ? s : plan.liveness.order[s];
      report.what = plan.training.forward.ops[report.op].type;
    } else {
      const TrainStep& step = *timeline[s - plan.forward_steps];
      report.kind = step.kind;
      report.op = step.op;
      report.what = step.what;
    }
  }
  const auto& buffers = plan.problem.buffers;
  for (size_t b = 0; b < buffers.size(); ++b) {
    int cls = static_cast<int>(plan.buffer_class[b]);
    plan.class_bytes[cls] += buffers[b].size;
    if (plan.buffer_class[b] == ValueClass::Trainable) plan.trainable_bytes += buffers[b].size;
    for (int32_t s = buffers[b].first; s <= buffers[b].last; ++s) plan.steps[s].live[cls] += buffers[b].size;
  }
  for (const StepReport& report : plan.steps) {
    plan.gradient_bytes = std::max(plan.gradient_bytes, report.live[static_cast<int>(ValueClass::Gradient)]);
    if (report.total() > plan.lower_bound_bytes) {
      plan.lower_bound_bytes = report.total();
      plan.peak_step = report.step;
    }
  }
}

int64_t flash_of(const graph::Graph& graph, const std::string& target) {
  op_params::Build build = op_params::target_build(target);
  int64_t bytes = 0;
  for (const graph::Op& op : graph.ops) bytes += op_params::constant_bytes(graph, op, build).total();
  return bytes;
}

}  // namespace

TrainingPlan prepare_updates(const graph::Graph& graph, std::vector<LayerUpdate> updates,
                             const TrainingOptions& options, const std::string& spec) {
  check_alignment(options.alignment, "alignment");
  TrainingPlan plan;
  plan.options = options;
  plan.spec = spec;
  plan.training = derive_training_graph(graph, std::move(updates));
  plan.flash_bytes = flash_of(plan.training.forward, options.target);
  StepBuffers buffers = step_buffers(plan.training, options);
  plan.liveness = std::move(buffers.liveness);
  plan.buffer_class = std::move(buffers.classes);
  plan.value_buffer = std::move(buffers.value_buffer);
  plan.step_scratch = std::move(buffers.step_scratch);
  plan.forward_steps = static_cast<int32_t>(graph.ops.size());
  plan.problem = liveness::make_problem(plan.liveness, options.alignment);
  report_steps(plan, backward_timeline(plan.training, options.reorder_updates));
  return plan;
}

void place_buffers(TrainingPlan& plan, const std::string& allocator) {
  allocation::AllocatorOptions budget;
  budget.seconds = plan.options.seconds;
  allocation::AllocationResult placed = allocation::run_allocator(plan.problem, allocator, budget);
  std::vector<std::string> wrong = allocation::validate(plan.problem, placed.solution, 1);
  if (!wrong.empty()) throw std::logic_error("training plan: the allocator's plan is invalid: " + wrong[0]);
  plan.solution = std::move(placed.solution);
  plan.allocation_method = placed.method;
  plan.proven_optimal = placed.proven_optimal;
  plan.peak_bytes = plan.solution.height;
  for (StepReport& step : plan.steps) step.arena_top = 0;
  const auto& buffers = plan.problem.buffers;
  for (size_t b = 0; b < buffers.size(); ++b)
    for (int32_t s = buffers[b].first; s <= buffers[b].last; ++s)
      plan.steps[s].arena_top = std::max(plan.steps[s].arena_top, plan.solution.offsets[b] + buffers[b].size);
}

TrainingPlan plan_updates(const graph::Graph& graph, std::vector<LayerUpdate> updates, const TrainingOptions& options,
                          const std::string& spec) {
  TrainingPlan plan = prepare_updates(graph, std::move(updates), options, spec);
  place_buffers(plan, options.allocator);
  return plan;
}

}  // namespace tinyarena::training
