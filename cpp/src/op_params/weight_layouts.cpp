// Weight layouts per layer: their choices, names and predicted instructions.
#include "tinyarena/op_params/weight_layouts.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tinyarena/common/errors.h"
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

namespace {

// A depthwise kernel of more packed words than the SIMD path widens from int8 per channel (false
// for a layer the kernels refuse: its compile issue is reported elsewhere).
bool depthwise_too_large_for_int8(const graph::Graph& graph, const graph::Op& op) {
  if (op.opcode != opcode::kDepthwiseConv2D || op.elided) return false;
  try {
    const ta_dwconv_params& p = depthwise_kernel(graph, op).params;
    return p.kernel_h * ((p.kernel_w + 1) / 2) > TA_DW_INT8_MAX_WORDS;
  } catch (const UnsupportedError&) {
    return false;
  }
}

}  // namespace

WeightLayout default_layout(const graph::Graph& graph, const graph::Op& op) {
  if (!has_weight_layout(op)) return WeightLayout::kPlain;
  return depthwise_too_large_for_int8(graph, op) ? WeightLayout::kPackedInt16 : WeightLayout::kPackedInt8;
}

WeightLayout layout_of(const graph::Graph& graph, const WeightLayouts& layouts, const graph::Op& op) {
  const auto found = layouts.find(op.index);
  return found == layouts.end() ? default_layout(graph, op) : found->second;
}

std::vector<WeightLayout> layout_choices(const graph::Op& op, Build build) {
  if (build == Build::Portable || !has_weight_layout(op)) return {WeightLayout::kPlain};
  return {WeightLayout::kPlain, WeightLayout::kPackedInt8, WeightLayout::kPackedInt16};
}

// A depthwise layer in kPackedInt8 whose kernel is too large for the SIMD path's per-channel
// widening (more than TA_DW_INT8_MAX_WORDS packed words) runs the portable loop.
bool depthwise_int8_runs_portable(const graph::Graph& graph, const graph::Op& op, Build build, WeightLayout layout) {
  return layout == WeightLayout::kPackedInt8 && build == Build::Simd && depthwise_too_large_for_int8(graph, op);
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

}  // namespace tinyarena::op_params
