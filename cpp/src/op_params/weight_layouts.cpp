// Weight layouts per layer and the flash budget's greedy choice among them.
#include "tinyarena/op_params/weight_layouts.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tinyarena/op_params/cost_model.h"
#include "tinyarena/op_params/flash.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::op_params {
namespace {

// A conv's packed int16 SIMD loop against its packed int8 one: with every conv moved to int16,
// benchmarks/flash_bench.py --layout-deltas measured -0.058 / -0.047 instructions per MAC on
// person_detect / kws_ref_model, whose int8 conv loops run 1.10 / 1.09 (Cortex-M4, QEMU counts).
constexpr double kConvInt16OverInt8 = 0.95;
// A fully connected layer's packed int16 SIMD loop against its int8 one, instructions saved per
// MAC: per 16 MACs (4 channels x 4 values) 14 instructions against 23 (fully_connected.c).
constexpr double kFcInt16SavedPerMac = 9.0 / 16.0;

// One layer the budget can move: its layouts (layout_choices), their constant bytes and predicted
// instructions, and the one chosen.
struct Layer {
  const graph::Op* op = nullptr;
  std::vector<WeightLayout> choices;
  std::vector<double> instructions;
  std::vector<int64_t> constant_bytes;
  size_t chosen = 0;
};

// The kernel code the build of `target` links with `layouts` (none for the host).
int64_t code_bytes(const graph::Graph& graph, const std::string& target, const WeightLayouts& layouts,
                   const std::vector<int32_t>& in_place_ops) {
  if (target == "host") return 0;
  KernelCodeTally code;
  int64_t bytes = 0;
  for (const graph::Op& op : graph.ops) {
    const bool in_place = std::binary_search(in_place_ops.begin(), in_place_ops.end(), op.index);
    bytes += code.add(kernel_function(graph, op, in_place, layout_of(layouts, op)));
  }
  return bytes;
}

WeightLayouts non_default(const std::vector<Layer>& layers) {
  WeightLayouts layouts;
  for (const Layer& layer : layers) {
    const WeightLayout layout = layer.choices[layer.chosen];
    if (layout != default_layout(*layer.op)) layouts[layer.op->index] = layout;
  }
  return layouts;
}

double predicted(const std::vector<Layer>& layers) {
  double sum = 0;
  for (const Layer& layer : layers) sum += layer.instructions[layer.chosen];
  return sum;
}

// The layers with a choice in `build`, each at its smallest layout (ties: the faster one).
std::vector<Layer> layers_at_smallest(const graph::Graph& graph, Build build) {
  std::vector<Layer> layers;
  for (const graph::Op& op : graph.ops) {
    Layer layer{&op, layout_choices(op, build), {}, {}, 0};
    if (layer.choices.size() < 2) continue;
    for (WeightLayout layout : layer.choices) {
      layer.instructions.push_back(static_cast<double>(predicted_instructions(graph, op, build, layout)));
      layer.constant_bytes.push_back(constant_bytes(graph, op, build, layout).total());
    }
    for (size_t c = 1; c < layer.choices.size(); ++c)
      if (layer.constant_bytes[c] < layer.constant_bytes[layer.chosen] ||
          (layer.constant_bytes[c] == layer.constant_bytes[layer.chosen] &&
           layer.instructions[c] < layer.instructions[layer.chosen]))
        layer.chosen = c;
    layers.push_back(std::move(layer));
  }
  return layers;
}

// The build's flash (every op's constant arrays and the kernel code it links) with the layers'
// current layouts, the constants of the layers cached.
class FlashOfLayers {
 public:
  FlashOfLayers(const graph::Graph& graph, const std::string& target, const std::vector<int32_t>& in_place_ops,
                const std::vector<Layer>& layers)
      : graph_(graph), target_(target), in_place_ops_(in_place_ops) {
    const Build build = target_build(target);
    std::vector<bool> layer(graph.ops.size(), false);
    for (const Layer& l : layers) layer[l.op->index] = true;
    for (const graph::Op& op : graph.ops)
      if (!layer[op.index]) other_constants_ += constant_bytes(graph, op, build).total();
  }

  int64_t operator()(const std::vector<Layer>& layers) const {
    int64_t bytes = other_constants_;
    for (const Layer& layer : layers) bytes += layer.constant_bytes[layer.chosen];
    return bytes + code_bytes(graph_, target_, non_default(layers), in_place_ops_);
  }

 private:
  const graph::Graph& graph_;
  const std::string& target_;
  const std::vector<int32_t>& in_place_ops_;
  int64_t other_constants_ = 0;
};

}  // namespace

const char* layout_name(WeightLayout layout) {
  switch (layout) {
    case WeightLayout::kPlain: return "plain";
    case WeightLayout::kPackedInt8: return "packed_int8";
    case WeightLayout::kPackedInt16: return "packed_int16";
  }
  return "?";
}

WeightLayout layout_named(const std::string& name) {
  for (WeightLayout layout : {WeightLayout::kPlain, WeightLayout::kPackedInt8, WeightLayout::kPackedInt16})
    if (name == layout_name(layout)) return layout;
  throw std::invalid_argument("unknown weight layout '" + name + "': use plain, packed_int8 or packed_int16");
}

void check_weight_layouts(const graph::Graph& graph, const WeightLayouts& layouts) {
  for (const auto& [index, layout] : layouts) {
    if (index < 0 || index >= static_cast<int32_t>(graph.ops.size()))
      throw std::invalid_argument("weight layout for op " + std::to_string(index) + ": the graph has " +
                                  std::to_string(graph.ops.size()) + " ops");
    const graph::Op& op = graph.ops[index];
    const auto choices = layout_choices(op, Build::Simd);
    if (std::find(choices.begin(), choices.end(), layout) == choices.end())
      throw std::invalid_argument("op " + std::to_string(index) + " (" + op.type + ") cannot take the " +
                                  layout_name(layout) + " weight layout");
  }
}

bool has_weight_layout(const graph::Op& op) {
  return !op.elided && (op.opcode == opcode::kConv2D || op.opcode == opcode::kDepthwiseConv2D ||
                        op.opcode == opcode::kFullyConnected);
}

WeightLayout default_layout(const graph::Op& op) {
  return has_weight_layout(op) ? WeightLayout::kPackedInt8 : WeightLayout::kPlain;
}

WeightLayout layout_of(const WeightLayouts& layouts, const graph::Op& op) {
  const auto found = layouts.find(op.index);
  return found == layouts.end() ? default_layout(op) : found->second;
}

std::vector<WeightLayout> layout_choices(const graph::Op& op, Build build) {
  if (build == Build::Portable || !has_weight_layout(op)) return {WeightLayout::kPlain};
  if (build == Build::Simd) return {WeightLayout::kPlain, WeightLayout::kPackedInt8, WeightLayout::kPackedInt16};
  return {WeightLayout::kPlain, WeightLayout::kPackedInt16};
}

// A depthwise layer in kPackedInt8 whose kernel is too large for the SIMD path's per-channel
// widening (more than TA_DW_INT8_MAX_WORDS packed words) runs the portable loop.
bool depthwise_int8_runs_portable(const graph::Graph& graph, const graph::Op& op, Build build, WeightLayout layout) {
  if (op.opcode != opcode::kDepthwiseConv2D || layout != WeightLayout::kPackedInt8 || build != Build::Simd)
    return false;
  const ta_dwconv_params& p = depthwise_kernel(graph, op).params;
  return p.kernel_h * ((p.kernel_w + 1) / 2) > TA_DW_INT8_MAX_WORDS;
}

int64_t predicted_instructions(const graph::Graph& graph, const graph::Op& op, Build build, WeightLayout layout) {
  if ((layout == WeightLayout::kPlain && has_weight_layout(op)) || depthwise_int8_runs_portable(graph, op, build, layout))
    return op_params::predicted_instructions(graph, op, Build::Portable);
  const int64_t own = op_params::predicted_instructions(graph, op, build);
  if (layout == WeightLayout::kPackedInt16 && op.opcode == opcode::kConv2D && build == Build::Simd)
    return std::llround(static_cast<double>(own) * kConvInt16OverInt8);
  if (layout == WeightLayout::kPackedInt16 && op.opcode == opcode::kFullyConnected && build == Build::Simd)
    return std::max<int64_t>(0, own - std::llround(cost_terms(graph, op).macs * kFcInt16SavedPerMac));
  return own;
}

LayoutChoice choose_weight_layouts(const graph::Graph& graph, const std::string& target, int64_t budget,
                                   const std::vector<int32_t>& in_place_ops) {
  const Build build = target_build(target);
  if (budget <= 0) return {};
  std::vector<Layer> layers = layers_at_smallest(graph, build);
  const FlashOfLayers flash_of(graph, target, in_place_ops, layers);
  LayoutChoice choice;
  choice.compact_flash_bytes = flash_of(layers);
  int64_t flash = choice.compact_flash_bytes;
  while (flash <= budget) {
    // The move with the most instructions saved per extra byte (a move that adds no bytes first).
    size_t best_layer = layers.size(), best_choice = 0;
    double best_gain = 0;
    int64_t best_extra = 0, best_flash = 0;
    for (size_t l = 0; l < layers.size(); ++l) {
      Layer& layer = layers[l];
      const size_t current = layer.chosen;
      for (size_t c = 0; c < layer.choices.size(); ++c) {
        const double gain = layer.instructions[current] - layer.instructions[c];
        if (gain <= 0) continue;
        layer.chosen = c;
        const int64_t moved = flash_of(layers);
        layer.chosen = current;
        if (moved > budget) continue;
        const int64_t extra = std::max<int64_t>(moved - flash, 0);
        // gain / extra > best_gain / best_extra, without dividing by zero.
        const bool better = best_layer == layers.size() ||
                            gain * static_cast<double>(best_extra) > best_gain * static_cast<double>(extra) ||
                            (extra == 0 && best_extra == 0 && gain > best_gain);
        if (better) best_layer = l, best_choice = c, best_gain = gain, best_extra = extra, best_flash = moved;
      }
    }
    if (best_layer == layers.size()) break;
    layers[best_layer].chosen = best_choice;
    flash = best_flash;
  }
  choice.layouts = non_default(layers);
  choice.flash_bytes = flash_of(layers);
  choice.predicted_instructions = predicted(layers);
  choice.fits = budget <= 0 || choice.flash_bytes <= budget;
  return choice;
}

}  // namespace tinyarena::op_params
