// The flash budget's choice of weight layouts (choose_weight_layouts, weight_layouts.h): a greedy
// over moves of one layer and moves of a family of layers, every state's flash counted exactly
// (constant arrays and the kernel code its calls link, shared code once).
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tinyarena/op_params/flash.h"
#include "tinyarena/op_params/weight_layouts.h"

namespace tinyarena::op_params {
namespace {

// One layer the budget can move: its layouts (layout_choices) with, per layout, the predicted
// instructions, the constant bytes and the kernel its call links (an index into BuildFlash's kernels).
struct Layer {
  const graph::Op* op = nullptr;
  WeightLayout default_layout = WeightLayout::kPlain;  // op_params::default_layout
  std::vector<WeightLayout> choices;
  std::vector<double> instructions;
  std::vector<int64_t> constant_bytes;
  std::vector<size_t> kernels;
};

// Per layer, the index of its chosen layout in Layer::choices.
using State = std::vector<size_t>;

// Layers and the choice each moves to.
using Move = std::vector<std::pair<size_t, size_t>>;

// The build's flash in any state of its layers: every op's constant arrays and the kernel code its
// calls link (none for the host). Code depends only on the set of distinct kernels the layers
// use, so it is counted once per set (KernelCodeTally: shared families and functions once).
class BuildFlash {
 public:
  BuildFlash(const graph::Graph& graph, const std::string& target, const std::vector<int32_t>& in_place_ops)
      : counts_code_(target != "host") {
    const Build build = target_build(target);
    for (const graph::Op& op : graph.ops) {
      const bool in_place = std::binary_search(in_place_ops.begin(), in_place_ops.end(), op.index);
      Layer layer{&op, default_layout(graph, op), layout_choices(op, build), {}, {}, {}};
      if (layer.choices.size() < 2) {
        other_constants_ += constant_bytes(graph, op, build).total();
        fixed_kernels_.push_back(kernel_function(graph, op, in_place, default_layout(graph, op)));
        continue;
      }
      for (WeightLayout layout : layer.choices) {
        layer.instructions.push_back(static_cast<double>(predicted_instructions(graph, op, build, layout)));
        layer.constant_bytes.push_back(constant_bytes(graph, op, build, layout).total());
        layer.kernels.push_back(kernel_index(kernel_function(graph, op, in_place, layout)));
      }
      layers_.push_back(std::move(layer));
    }
  }

  const std::vector<Layer>& layers() const { return layers_; }

  int64_t operator()(const State& state) const {
    int64_t bytes = other_constants_;
    std::vector<bool> used(kernels_.size(), false);
    for (size_t l = 0; l < layers_.size(); ++l) {
      bytes += layers_[l].constant_bytes[state[l]];
      used[layers_[l].kernels[state[l]]] = true;
    }
    return bytes + code_bytes(used);
  }

 private:
  size_t kernel_index(const KernelFunction& kernel) {
    for (size_t k = 0; k < kernels_.size(); ++k)
      if (kernels_[k].function == kernel.function && kernels_[k].source == kernel.source &&
          kernels_[k].variants == kernel.variants)
        return k;
    kernels_.push_back(kernel);
    return kernels_.size() - 1;
  }

  int64_t code_bytes(const std::vector<bool>& used) const {
    if (!counts_code_) return 0;
    const auto cached = code_.find(used);
    if (cached != code_.end()) return cached->second;
    KernelCodeTally tally;  // the total does not depend on the order of the calls
    int64_t bytes = 0;
    for (const KernelFunction& kernel : fixed_kernels_) bytes += tally.add(kernel);
    for (size_t k = 0; k < kernels_.size(); ++k)
      if (used[k]) bytes += tally.add(kernels_[k]);
    code_.emplace(used, bytes);
    return bytes;
  }

  bool counts_code_;
  std::vector<Layer> layers_;
  std::vector<KernelFunction> kernels_;        // the distinct kernels of the layers' choices
  std::vector<KernelFunction> fixed_kernels_;  // the kernels of the ops without a choice
  int64_t other_constants_ = 0;                // the constants of the ops without a choice
  mutable std::map<std::vector<bool>, int64_t> code_;
};

// gain_a / extra_a > gain_b / extra_b for gains > 0 and extras >= 0, without dividing by zero.
bool saves_more_per_byte(double gain_a, int64_t extra_a, double gain_b, int64_t extra_b) {
  return gain_a * static_cast<double>(extra_b) > gain_b * static_cast<double>(extra_a) ||
         (extra_a == 0 && extra_b == 0 && gain_a > gain_b);
}

double instructions_saved(const std::vector<Layer>& layers, const State& state, const Move& move) {
  double gain = 0;
  for (const auto& [l, c] : move) gain += layers[l].instructions[state[l]] - layers[l].instructions[c];
  return gain;
}

// The family moves towards `layout` of the layers of one op type (`family`) it makes faster: the
// k of them with the most instructions saved per constant byte (ties: the lower op index), every
// k from 2 to all of them (k = 1 is a single move).
void add_family_moves(const std::vector<Layer>& layers, const State& state, const std::vector<size_t>& family,
                      WeightLayout layout, std::vector<Move>& moves) {
  Move eligible;
  for (size_t l : family) {
    const auto& choices = layers[l].choices;
    const size_t c = static_cast<size_t>(std::find(choices.begin(), choices.end(), layout) - choices.begin());
    if (c < choices.size() && layers[l].instructions[c] < layers[l].instructions[state[l]]) eligible.push_back({l, c});
  }
  const auto gain = [&](const std::pair<size_t, size_t>& m) { return instructions_saved(layers, state, {m}); };
  const auto extra = [&](const std::pair<size_t, size_t>& m) {
    return std::max<int64_t>(layers[m.first].constant_bytes[m.second] - layers[m.first].constant_bytes[state[m.first]],
                             0);
  };
  std::stable_sort(eligible.begin(), eligible.end(), [&](const auto& a, const auto& b) {
    return saves_more_per_byte(gain(a), extra(a), gain(b), extra(b));
  });
  for (size_t k = 2; k <= eligible.size(); ++k) moves.emplace_back(eligible.begin(), eligible.begin() + k);
}

// Every move from `state` that saves instructions: single layers first (op order, then layout
// order), then the families of each op type (in the order the types first appear) per layout.
std::vector<Move> moves_from(const std::vector<Layer>& layers, const State& state) {
  std::vector<Move> moves;
  std::vector<std::pair<int32_t, std::vector<size_t>>> families;  // op code -> its layers
  for (size_t l = 0; l < layers.size(); ++l) {
    for (size_t c = 0; c < layers[l].choices.size(); ++c)
      if (layers[l].instructions[c] < layers[l].instructions[state[l]]) moves.push_back({{l, c}});
    const int32_t code = layers[l].op->opcode;
    auto family = std::find_if(families.begin(), families.end(), [&](const auto& f) { return f.first == code; });
    if (family == families.end()) {
      families.emplace_back(code, std::vector<size_t>{});
      family = families.end() - 1;
    }
    family->second.push_back(l);
  }
  for (const auto& [code, family] : families)
    for (WeightLayout layout : {WeightLayout::kPlain, WeightLayout::kPackedInt8, WeightLayout::kPackedInt16})
      add_family_moves(layers, state, family, layout, moves);
  return moves;
}

// Step 2 of choose_weight_layouts from `state` (at most `budget`): the move with the most
// instructions saved per extra byte that fits (one adding no bytes first), until none fits.
State improve(const BuildFlash& flash_of, State state, int64_t budget) {
  const std::vector<Layer>& layers = flash_of.layers();
  int64_t flash = flash_of(state);
  for (;;) {
    const Move* best = nullptr;
    double best_gain = 0;
    int64_t best_extra = 0, best_flash = 0;
    const std::vector<Move> moves = moves_from(layers, state);
    for (const Move& move : moves) {
      State moved = state;
      for (const auto& [l, c] : move) moved[l] = c;
      const int64_t moved_flash = flash_of(moved);
      if (moved_flash > budget) continue;
      const double gain = instructions_saved(layers, state, move);
      const int64_t extra = std::max<int64_t>(moved_flash - flash, 0);
      if (!best || saves_more_per_byte(gain, extra, best_gain, best_extra))
        best = &move, best_gain = gain, best_extra = extra, best_flash = moved_flash;
    }
    if (!best) return state;
    for (const auto& [l, c] : *best) state[l] = c;
    flash = best_flash;
  }
}

// Every layer at its smallest layout (ties: the faster one).
State compact_state(const std::vector<Layer>& layers) {
  State state(layers.size(), 0);
  for (size_t l = 0; l < layers.size(); ++l) {
    const Layer& layer = layers[l];
    for (size_t c = 1; c < layer.choices.size(); ++c)
      if (layer.constant_bytes[c] < layer.constant_bytes[state[l]] ||
          (layer.constant_bytes[c] == layer.constant_bytes[state[l]] &&
           layer.instructions[c] < layer.instructions[state[l]]))
        state[l] = c;
  }
  return state;
}

// Every layer at default_layout, or (`plain`) at kPlain: the portable kernels, whose code can
// make that build smaller than compact_state's, which weighs constants only (empty if some layer
// could not take it; every build's can).
State uniform_state(const std::vector<Layer>& layers, bool plain) {
  State state;
  for (const Layer& layer : layers) {
    const WeightLayout layout = plain ? WeightLayout::kPlain : layer.default_layout;
    const auto found = std::find(layer.choices.begin(), layer.choices.end(), layout);
    if (found == layer.choices.end()) return {};
    state.push_back(static_cast<size_t>(found - layer.choices.begin()));
  }
  return state;
}

double predicted(const std::vector<Layer>& layers, const State& state) {
  double sum = 0;
  for (size_t l = 0; l < layers.size(); ++l) sum += layers[l].instructions[state[l]];
  return sum;
}

WeightLayouts non_default(const std::vector<Layer>& layers, const State& state) {
  WeightLayouts layouts;
  for (size_t l = 0; l < layers.size(); ++l) {
    const WeightLayout layout = layers[l].choices[state[l]];
    if (layout != layers[l].default_layout) layouts[layers[l].op->index] = layout;
  }
  return layouts;
}

}  // namespace

LayoutChoice choose_weight_layouts(const graph::Graph& graph, const std::string& target, int64_t budget,
                                   const std::vector<int32_t>& in_place_ops) {
  if (budget <= 0) return {};
  const BuildFlash flash_of(graph, target, in_place_ops);
  const std::vector<Layer>& layers = flash_of.layers();
  // the starts: compact, all plain, then default (when every layer can take them)
  std::vector<State> starts{compact_state(layers)};
  for (bool plain : {true, false})
    if (State start = uniform_state(layers, plain); !start.empty()) starts.push_back(std::move(start));
  LayoutChoice choice;
  State chosen = starts.front();
  bool improved = false;
  for (const State& start : starts) {
    const int64_t bytes = flash_of(start);
    if (choice.compact_flash_bytes == 0 || bytes < choice.compact_flash_bytes) {
      choice.compact_flash_bytes = bytes;
      if (!improved) chosen = start;  // until one fits: the smallest
    }
    if (bytes > budget) continue;
    State run = improve(flash_of, start, budget);
    const double a = predicted(layers, run), b = predicted(layers, chosen);
    if (!improved || a < b || (a == b && flash_of(run) < flash_of(chosen))) chosen = std::move(run);
    improved = true;
  }
  choice.layouts = non_default(layers, chosen);
  choice.flash_bytes = flash_of(chosen);
  choice.predicted_instructions = predicted(layers, chosen);
  choice.fits = choice.flash_bytes <= budget;
  return choice;
}

}  // namespace tinyarena::op_params
