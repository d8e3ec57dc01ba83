// Per-layer weight layouts of the SIMD builds, and the flash budget that picks them.
//
// A CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED layer of a SIMD build (Cortex-M4/M7/M33/M55)
// can keep its weights in one of three layouts, which decide the kernel path that reads them:
//   kPlain        the model's int8 weights, read by the portable loop (no SIMD path; conv keeps
//                 no per-channel records): the portable build's bytes, the slowest loop.
//   kPackedInt8   CONV_2D: TA_PACKED_S8 (int8, K padded to 4) and the per-channel records instead
//                 of bias, multipliers and shifts; FULLY_CONNECTED: the model's int8 weights; both
//                 widened in the SIMD MAC loop (on the M55: conv TA_PACKED_MVE, fully connected the
//                 int8 weights, in Helium loops). DEPTHWISE_CONV_2D: the model's int8 weights, one
//                 channel's kernel widened to TA_PACKED_S16 words on the stack as the SIMD path
//                 prepares it (kernels up to 7x7; larger ones run the portable loop).
//   kPackedInt16  TA_PACKED_S16 (and conv's records): the fastest SIMD loops, about twice the
//                 weight bytes (2.7x for 3x3 depthwise).
// The M55's depthwise reads the model's int8 weights in every layout (depthwise_mve.c).
// Without a budget the layers take default_layout(); with one, choose_weight_layouts() picks per
// layer the layouts that minimize predicted instructions within it. The portable build (host,
// Cortex-M3) always reads kPlain weights.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/op_params/targets.h"

namespace tinyarena::op_params {

enum class WeightLayout { kPlain, kPackedInt8, kPackedInt16 };

// "plain", "packed_int8", "packed_int16"; layout_named: the inverse (std::invalid_argument otherwise).
const char* layout_name(WeightLayout layout);
WeightLayout layout_named(const std::string& name);

// Op index -> layout, for the layers whose layout differs from default_layout (ordered, so
// plans and generated code are deterministic).
using WeightLayouts = std::map<int32_t, WeightLayout>;

// Whether the op's kernel reads weights in a layout of its own (CONV_2D, DEPTHWISE_CONV_2D,
// FULLY_CONNECTED).
bool has_weight_layout(const graph::Op& op);

// Without a budget: CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED kPackedInt8 (int8 in flash),
// but kPackedInt16 for a depthwise kernel too large for the SIMD path's per-channel widening
// (more than TA_DW_INT8_MAX_WORDS words: in int8 it would run the portable loop, ~2.4x the
// instructions on micro_speech's 10x8); every other op kPlain.
WeightLayout default_layout(const graph::Graph& graph, const graph::Op& op);

// The op's layout in `layouts` (its default when absent).
WeightLayout layout_of(const graph::Graph& graph, const WeightLayouts& layouts, const graph::Op& op);

// The layouts the op can take in `build`: {kPlain} for the portable build and for ops without a
// layout; all three in the SIMD and Helium builds (on the M55 a conv's kPackedInt8 is
// TA_PACKED_MVE, the default and smaller than its kPackedInt16).
std::vector<WeightLayout> layout_choices(const graph::Op& op, Build build);

// Predicted instructions of one call of the op's kernel in `build` with its weights in `layout`
// (cost_model.h): kPlain runs the portable loop (the portable build's coefficients); a CONV_2D in
// kPackedInt16 the SIMD loop at 0.95 of its kPackedInt8 figure (the calibrated default; the
// ratio measured on Cortex-M4, weight_layouts.cpp), a FULLY_CONNECTED in kPackedInt16 9/16
// instructions per MAC below its kPackedInt8 figure; a DEPTHWISE_CONV_2D in kPackedInt8 with a
// kernel of more than TA_DW_INT8_MAX_WORDS packed words the portable loop; every other layout the build's own.
int64_t predicted_instructions(const graph::Graph& graph, const graph::Op& op, Build build, WeightLayout layout);

// `layouts` checked against the SIMD build's layout_choices: std::invalid_argument naming the op
// (index and type) for an op index outside the graph or a layout its kernel has no path for.
void check_weight_layouts(const graph::Graph& graph, const WeightLayouts& layouts);

// The chosen layouts and what they cost.
struct LayoutChoice {
  WeightLayouts layouts;              // layers not at their default layout
  int64_t flash_bytes = 0;            // constants + kernel code of the chosen build
  int64_t compact_flash_bytes = 0;    // the smaller start's (choose_weight_layouts step 1)
  double predicted_instructions = 0;  // sum over the layers of predicted_instructions
  bool fits = true;                   // flash_bytes <= the budget (false: even compact is above it)
};

// Per layer the layouts that minimize predicted instructions with the build's flash (every op's
// constant arrays and the kernel code it links, counted for the Cortex-M targets only, as the
// planner's report does; `in_place_ops`, ascending, run the in-place depthwise kernel) <= budget
// (flash_budget.cpp):
//   1. Three starts: every layer at its smallest layout (ties: the faster), every layer kPlain
//      (the portable kernels' code: person_detect's smallest build since the DSP builds link only
//      the variant families their layers reach, which makes the first start the default), and
//      the default build (every layer at default_layout).
//      The smallest one's flash is compact_flash_bytes (kws_ref_model: the default, as the plain
//      layers link the portable kernel code). When all are above the budget the result keeps
//      the smallest and says fits = false.
//   2. From each start that fits, greedily the move with the most predicted instructions saved
//      per extra flash byte that still fits (a move adding no bytes first; ties: the first in the
//      order below), until none fits. A move is either one layer to a faster layout (op order,
//      then layout order) or a family move: the k layers of one op type that one layout makes
//      faster, those with the most instructions saved per constant byte, moving to it together
//      (every k from 2 to all of them). Each move is priced by the whole build's flash after it,
//      so kernel code shared by a family (TA_CONV_PORTABLE of the plain convs,
//      ta_conv_s8_packed16 of the int16 ones, ...) is seen to fall away when its last layers
//      leave it and to appear once when the first join.
//   3. The run with fewer predicted instructions wins (ties: less flash, then the compact start's).
//      A budget at or above the default's flash thus never predicts more instructions than the
//      default.
// Limits: a greedy, not an exact multiple-choice knapsack (on the models tested, more budget never
// gave more predicted instructions; not proven in general); family moves stay within one op type
// and take a prefix by each layer's own instructions per constant byte; no move makes a layer slower
// to free bytes for another. Deterministic. budget <= 0: no budget, every layer at its default
// layout (the result is empty: no layouts, byte counts and predicted instructions 0, fits).
LayoutChoice choose_weight_layouts(const graph::Graph& graph, const std::string& target, int64_t budget,
                                   const std::vector<int32_t>& in_place_ops);

}  // namespace tinyarena::op_params
