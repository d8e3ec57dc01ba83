// plan_training: a resolved spec is planned as it is; `auto` searches the
// candidate specs (training_plan.h) and keeps the fitting one with the most
// updated parameters.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "tinyarena/common/errors.h"
#include "tinyarena/training/training_plan.h"

namespace tinyarena::training {

namespace {

constexpr double kPartialFractions[] = {0.5, 0.25, 0.125};  // largest first
const char* const kGreedy = "greedy_size_first_fit";

class AutoSearch {
 public:
  AutoSearch(const graph::Graph& graph, const TrainingOptions& options)
      : graph_(graph), options_(options), layers_(weight_layers(graph)) {}

  TrainingPlan run() {
    if (try_spec(UpdateSpec{})) {  // every bias, then whole layers from the classifier back, then part of one more
      int32_t whole = most_layers([this](int32_t n) { return last_layers(n, 1.0); });
      if (whole < static_cast<int32_t>(layers_.size()))
        for (double fraction : kPartialFractions)
          if (try_spec(last_layers(whole + 1, fraction))) break;
    }
    most_layers([](int32_t n) {  // weights and biases of the last layers only
      UpdateSpec spec;
      spec.kind = SpecKind::Last;
      spec.last = n;
      return spec;
    });
    UpdateSpec chosen = best_ ? best_->spec : UpdateSpec{};  // nothing fits: the plan of `bias`, over the limit
    TrainingPlan plan = prepare_updates(graph_, resolve_spec(graph_, chosen), options_, spec_text(chosen));
    place_buffers(plan, options_.allocator);
    if (best_ && !plan.fits()) place_buffers(plan, kGreedy);  // the allocator it was judged by: it fits
    plan.candidates = std::move(candidates_);
    return plan;
  }

 private:
  UpdateSpec last_layers(int32_t n, double fraction) const {
    UpdateSpec spec;
    spec.kind = SpecKind::Layers;
    spec.layers.assign(layers_.end() - n, layers_.end());
    spec.fraction = fraction;
    spec.fraction_given = true;
    return spec;
  }

  // The largest n whose spec(n) fits (0: none): n doubled from 1 until one does
  // not fit, then bisection (memory taken to grow with n).
  template <typename SpecOf>
  int32_t most_layers(SpecOf spec) {
    int32_t count = static_cast<int32_t>(layers_.size());
    int32_t fits = 0, fails = count + 1;
    for (int32_t n = 1; fails > count; n = std::min(2 * n, count)) {
      (try_spec(spec(n)) ? fits : fails) = n;
      if (n == count) break;
    }
    while (fails - fits > 1) {
      int32_t middle = fits + (fails - fits) / 2;
      (try_spec(spec(middle)) ? fits : fails) = middle;
    }
    return fits;
  }

  // Fits the limits; an op without a gradient on the backward path counts as not fitting.
  bool try_spec(const UpdateSpec& spec) {
    AutoCandidate candidate;
    candidate.spec = spec_text(spec);
    std::vector<LayerUpdate> updates = resolve_spec(graph_, spec);
    for (const LayerUpdate& u : updates) candidate.parameters += u.parameters();
    try {
      judge(prepare_updates(graph_, updates, options_, candidate.spec), candidate);
    } catch (const UnsupportedError& e) {
      candidate.error = e.what();
    }
    if (candidate.fits && (!best_ || candidate.parameters > best_->parameters)) best_ = Best{spec, candidate.parameters};
    candidates_.push_back(candidate);
    return candidate.fits;
  }

  // By the lower bound, then greedy first fit's placement, then the allocator asked for.
  void judge(TrainingPlan plan, AutoCandidate& candidate) const {
    candidate.peak_bytes = plan.lower_bound_bytes;
    bool flash_fits = options_.flash_limit <= 0 || plan.flash_bytes <= options_.flash_limit;
    if (!flash_fits || (options_.sram_limit > 0 && plan.lower_bound_bytes > options_.sram_limit)) return;
    place_buffers(plan, kGreedy);
    if (!plan.fits() && options_.allocator != kGreedy) place_buffers(plan, options_.allocator);
    candidate.peak_bytes = plan.peak_bytes;
    candidate.fits = plan.fits();
  }

  const graph::Graph& graph_;
  const TrainingOptions& options_;
  std::vector<int32_t> layers_;
  std::vector<AutoCandidate> candidates_;
  struct Best {
    UpdateSpec spec;
    int64_t parameters = 0;
  };
  std::optional<Best> best_;
};

}  // namespace

TrainingPlan plan_training(const graph::Graph& graph, const UpdateSpec& spec, const TrainingOptions& options) {
  if (spec.kind != SpecKind::Auto) return plan_updates(graph, resolve_spec(graph, spec), options, spec_text(spec));
  if (options.sram_limit <= 0 && options.flash_limit <= 0)
    throw std::invalid_argument("the 'auto' update spec needs a limit to fit (an SRAM limit, --sram)");
  return AutoSearch(graph, options).run();
}

}  // namespace tinyarena::training
