// plan_training: a resolved spec is planned as it is; `auto` walks the
// candidate specs (training_plan.h) and keeps the fitting one with the most
// updated parameters.
#include <memory>
#include <stdexcept>

#include "tinyarena/common/errors.h"
#include "tinyarena/training/training_plan.h"

namespace tinyarena::training {

namespace {

constexpr double kFractions[] = {0.125, 0.25, 0.5, 1.0};

bool same_updates(const std::vector<LayerUpdate>& a, const std::vector<LayerUpdate>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].op != b[i].op || a[i].weight_channels != b[i].weight_channels || a[i].bias != b[i].bias) return false;
  return true;
}

class AutoSearch {
 public:
  AutoSearch(const graph::Graph& graph, const TrainingOptions& options) : graph_(graph), options_(options) {}

  TrainingPlan run() {
    try_spec(UpdateSpec{});
    if (!best_) {  // not even every bias fits: report that plan
      TrainingPlan plan = plan_updates(graph_, resolve_spec(graph_, UpdateSpec{}), options_, "bias");
      plan.candidates = std::move(candidates_);
      return plan;
    }
    std::vector<int32_t> layers = weight_layers(graph_);
    for (size_t n = 1; n <= layers.size(); ++n) {
      UpdateSpec spec;
      spec.kind = SpecKind::Layers;
      spec.layers.assign(layers.end() - n, layers.end());
      spec.fraction_given = true;
      bool any = false;
      for (double fraction : kFractions) {
        spec.fraction = fraction;
        if (!try_spec(spec)) break;
        any = true;
      }
      if (!any) break;
    }
    TrainingPlan plan = std::move(*best_);
    plan.candidates = std::move(candidates_);
    return plan;
  }

 private:
  // False when the spec does not fit or cannot be differentiated; a repeat of the previous updates counts as fitting.
  bool try_spec(const UpdateSpec& spec) {
    std::vector<LayerUpdate> updates = resolve_spec(graph_, spec);
    if (same_updates(updates, previous_)) return true;
    previous_ = updates;
    AutoCandidate candidate;
    candidate.spec = spec_text(spec);
    for (const LayerUpdate& u : updates) candidate.parameters += u.parameters();
    try {
      TrainingPlan plan = plan_updates(graph_, updates, options_, candidate.spec);
      candidate.peak_bytes = plan.peak_bytes;
      candidate.fits = plan.fits();
      if (candidate.fits && (!best_ || candidate.parameters > best_->training.updated_parameters))
        best_ = std::make_unique<TrainingPlan>(std::move(plan));
    } catch (const UnsupportedError& e) {
      candidate.error = e.what();
    }
    candidates_.push_back(candidate);
    return candidate.fits;
  }

  const graph::Graph& graph_;
  const TrainingOptions& options_;
  std::vector<LayerUpdate> previous_;
  std::vector<AutoCandidate> candidates_;
  std::unique_ptr<TrainingPlan> best_;
};

}  // namespace

TrainingPlan plan_training(const graph::Graph& graph, const UpdateSpec& spec, const TrainingOptions& options) {
  if (spec.kind != SpecKind::Auto) return plan_updates(graph, resolve_spec(graph, spec), options, spec_text(spec));
  if (options.sram_limit <= 0 && options.flash_limit <= 0)
    throw std::invalid_argument("the 'auto' update spec needs a limit to fit (an SRAM limit, --sram)");
  return AutoSearch(graph, options).run();
}

}  // namespace tinyarena::training
