// The memory plan of one training step: forward ops in file order, the loss,
// the backward steps and the SGD update of each updated parameter, as buffers
// with lifetimes on one step axis, placed by the allocators inference uses
// (liveness::make_problem, allocation::run_allocator).
//
// Buffer classes: activation (forward tensors; a saved one lives until its last
// backward reader; a saved 1-bit mask from its forward op to its last reader),
// scratch (forward kernel scratch as inference plans it, and the backward
// scratch of training_graph.h), trainable (int8 weights of the
// updated channels, int32 biases: live for the whole step, as they persist
// across steps) and gradient (int8 activation gradients, int32 parameter
// gradients).
//
// Forward in-place ops are as inference plans them, except that no op writes
// over a saved activation. A backward elementwise step (fused or standalone
// RELU/RELU6 gradient, GRAD_SUM) writes over its input gradient when no later
// step reads it. With reorder_updates, each bias's SGD update runs right after
// its gradient (which then dies at once) and each weight gradient is computed
// and applied per output channel in one step (training_graph.h: one channel's
// int32 gradient as its scratch); without, all updates run after the last
// backward step and every whole parameter gradient lives until then.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/graph/graph.h"
#include "tinyarena/liveness/liveness.h"
#include "tinyarena/training/spec.h"
#include "tinyarena/training/training_graph.h"

namespace tinyarena::training {

struct TrainingOptions {
  int64_t alignment = 16;
  std::string allocator = "auto";
  double seconds = 0.3;          // allocator budget (deterministic work)
  bool reorder_updates = true;
  bool inplace = true;           // forward in-place ops (not over saved activations), in-place backward steps
  bool scratch = true;           // forward and backward kernel scratch
  bool single_pass_requant = false;  // backward requantization in one pass (training_graph.h): more scratch, fewer MACs
  int64_t sram_limit = 0;        // 0: none
  int64_t flash_limit = 0;       // 0: none
  std::string target = "cortex-m4";  // the build whose flash is reported (op_params::targets())
};

constexpr int kClasses = 4;  // ValueClass values

struct StepReport {
  int32_t step = 0;
  StepKind kind = StepKind::Forward;
  int32_t op = -1;       // the forward op (differentiated / updated)
  std::string what;      // the op type for forward steps
  int64_t live[kClasses] = {0, 0, 0, 0};  // aligned bytes live at this step, by ValueClass
  int64_t arena_top = 0;
  int64_t total() const { return live[0] + live[1] + live[2] + live[3]; }
};

// One spec `auto` tried: its parameters, and its peak (the lower bound when that
// was already over the limit), or why it could not be planned.
struct AutoCandidate {
  std::string spec;
  int64_t parameters = 0;
  int64_t peak_bytes = 0;
  bool fits = false;
  std::string error;  // an UnsupportedError's message, else empty
};

struct TrainingPlan {
  TrainingOptions options;
  std::string spec;                      // the spec planned (auto: the one chosen)
  TrainingGraph training;
  liveness::Liveness liveness;           // every buffer of the step (lifetimes in training steps)
  std::vector<ValueClass> buffer_class;  // per buffer
  allocation::Problem problem;           // buffer i = liveness buffer i, size aligned up
  allocation::Solution solution;
  std::string allocation_method;
  bool proven_optimal = false;
  std::vector<StepReport> steps;
  int32_t forward_steps = 0;             // steps [0, forward_steps) run the forward ops in file order
  int64_t peak_bytes = 0;
  int64_t lower_bound_bytes = 0;
  int32_t peak_step = -1;                // first step with the most bytes live
  int64_t trainable_bytes = 0;           // trainable buffers (aligned; all live at every step)
  int64_t gradient_bytes = 0;            // the most gradient bytes live at one step (aligned)
  int64_t class_bytes[kClasses] = {0, 0, 0, 0};  // all buffers of each class (aligned)
  int64_t flash_bytes = 0;               // the inference build's constant data (the trainables' initial copy)
  std::vector<AutoCandidate> candidates; // spec `auto`: every spec tried, in order
  std::vector<int32_t> value_buffer;     // per training value: its buffer (values written in place share one), -1: none
  std::vector<int32_t> step_scratch;     // per backward_timeline step: its scratch buffer, -1: none
  bool fits() const {
    return (options.sram_limit <= 0 || peak_bytes <= options.sram_limit) &&
           (options.flash_limit <= 0 || flash_bytes <= options.flash_limit);
  }
};

// The plan of one training step of `graph` (its file order) updating `spec`.
// `auto` needs a limit (std::invalid_argument otherwise). It tries `bias`; when
// that fits, whole layers from the classifier backwards, layers:{the last n
// weight layers}@1, for the largest n that fits (n doubled from 1 until one does
// not fit, then bisection: memory is taken to grow with n), then
// layers:{the last n+1}@F for F = 0.5, 0.25, 0.125 until one fits; and last:K
// for the largest K that fits (the same search); it keeps the fitting spec with
// the most
// updated parameters. A spec on whose backward path an op has no gradient counts
// as not fitting. A candidate is judged by its lower bound (over the limit: no),
// then greedy first fit's placement (within: yes), then options.allocator's; the
// spec chosen is placed by options.allocator, or by greedy first fit when only
// that one fits. When nothing fits, the plan of `bias` is returned (fits() false). Throws as resolve_spec and derive_training_graph do,
// std::invalid_argument for bad options.
TrainingPlan plan_training(const graph::Graph& graph, const UpdateSpec& spec, const TrainingOptions& options = {});

// The loss, backward and update steps in the order they run after the forward ops
// (reordered: each fused per-channel weight update in place of its weight gradient, each
// other update right after its gradient; else every update after the last backward step).
std::vector<const TrainStep*> backward_timeline(const TrainingGraph& t, bool reorder_updates);

// The plan of explicit layer updates (what plan_training runs for a resolved spec):
// prepare_updates (everything but the placement: buffers, steps, lower bound),
// then place_buffers with options.allocator.
TrainingPlan plan_updates(const graph::Graph& graph, std::vector<LayerUpdate> updates, const TrainingOptions& options,
                          const std::string& spec);
TrainingPlan prepare_updates(const graph::Graph& graph, std::vector<LayerUpdate> updates,
                             const TrainingOptions& options, const std::string& spec);
// Places the buffers with `allocator` (a name of allocation::allocator_names()); sets the
// solution, peak and arena tops.
void place_buffers(TrainingPlan& plan, const std::string& allocator);

}  // namespace tinyarena::training
