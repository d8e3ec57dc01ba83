// The kernel variant families a layer reaches in the DSP build (conv.c: its portable path, the
// one-pixel column builder and the int8-weight path's general loop;
// depthwise.c: its row-kernel families, the 3x3 rows' assembly and portable path;
// fully_connected.c: the packed int16 path's 4-channel loop and the portable path): the
// generated Makefile compiles only the families some layer of the model reaches (the others'
// guards set to 0), and the planner counts each family's code once per model. The conditions
// mirror the kernels' dispatch (cpp/kernels/src/depthwise_simd.h and depthwise.c, depthwise_wide.c,
// depthwise_simd.c's asm_layer; fully_connected.c's ta_fully_connected_s8; conv_s8w.c's
// column_mode and doubled_loop_fits).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tinyarena/op_params/flash.h"

#include "tinyarena/common/errors.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::op_params {
namespace {

constexpr const char* kDwSimdPath = "depthwise.c SIMD path";  // what the SIMD families share
constexpr int32_t kSmallPatch = 64;  // TA_SMALL_PATCH (cpp/kernels/src/conv_simd.h)

// ta_dw_simd_weights: packed int16 weights, or int8 ones the SIMD path widens (up to 7x7).
bool dw_simd_weights(const ta_dwconv_params& p, WeightLayout layout) {
  if (layout == WeightLayout::kPackedInt16) return true;
  return layout == WeightLayout::kPackedInt8 && p.kernel_h * ((p.kernel_w + 1) / 2) <= TA_DW_INT8_MAX_WORDS;
}

// ta_dw_fast3x3 and ta_dw_wide_applies (every family compiled).
bool dw_fast3x3(const ta_dwconv_params& p) {
  return p.kernel_h == 3 && p.kernel_w == 3 && p.dilation_h == 1 && p.dilation_w == 1 && p.stride_h == p.stride_w &&
         (p.stride_w == 1 || p.stride_w == 2);
}
bool dw_wide(const ta_dwconv_params& p) {
  return (p.kernel_w == 5 || p.kernel_w == 7) && p.kernel_h == p.kernel_w && (p.stride_w == 1 || p.stride_w == 2) &&
         p.dilation_w == 1 && p.dilation_h == 1 && p.out_w >= 2;
}

// ta_dw_channels_applies: a one-dimensional kernel of at most TA_DW_CHANNELS_MAX_TAPS taps,
// multiplier 1, at least 4 channels, int8 weights.
bool dw_channels(const ta_dwconv_params& p, WeightLayout layout) {
  const int32_t taps = TA_DW_LINE_TAPS(p.kernel_h, p.kernel_w);
  return layout == WeightLayout::kPackedInt8 && p.depth_multiplier == 1 && p.in_c >= 4 && taps >= 1 &&
         taps <= TA_DW_CHANNELS_MAX_TAPS;
}

// A channel the 3x3 assembly runs (dw_chan_prepare's use_asm, in a layer with all of int8 as the
// activation range): the doubled accumulator's requantization (ta_rqd_prep: a dead channel, or
// m > 2^30 with r = -shift in [1, 31]) with the output offset folded (r <= 22, or offset 0) and
// |bias| below the doubling room. (A TA_SINGLE_ROUNDING build runs no channel there: the
// assembly is then linked but unreached.)
bool dw_asm_channel(const DepthwiseKernel& k, size_t c) {
  const ta_dwconv_params& p = k.params;
  const int64_t room = std::max<int64_t>(0, (int64_t{1} << 30) - int64_t{p.kernel_h} * p.kernel_w * 32640);
  const int64_t m = k.requant.mult.at(c), bias = k.bias.empty() ? 0 : k.bias.at(c);
  const int64_t r = m == 0 ? 1 : -int64_t{k.requant.shift.at(c)};
  const bool doubled = (m == 0 || m > (int64_t{1} << 30)) && r >= 1 && r <= 31;
  return doubled && bias < room && bias > -room && (r <= 22 || p.output_offset == 0);
}

bool dw_asm_layer(const DepthwiseKernel& k) {
  if (k.params.act_min != -128 || k.params.act_max != 127) return false;
  for (size_t c = 0; c < k.requant.mult.size(); ++c)
    if (dw_asm_channel(k, c)) return true;
  return false;
}

// A depthwise layer: the portable path without weights the SIMD path reads; else its stride's 3x3
// rows (with their assembly when some channel runs it: dw_asm_layer), or the
// 5x5/7x7 rows with the generic ones (channels off the doubled accumulator), or the generic rows;
// a one-dimensional kernel its channel-parallel rows, with the generic rows for an in-place call
// whose window does not fit the scratch (ta_dw_channels_inplace).
// A tiled schedule's stripes and patches keep kernel, strides and dilation (a 5x5/7x7 patch one
// output wide runs the generic rows, which its layer has anyway).
std::vector<std::string> depthwise_variants(const DepthwiseKernel& k, WeightLayout layout) {
  const ta_dwconv_params& p = k.params;
  if (!dw_simd_weights(p, layout)) return {"TA_DW_PORTABLE"};
  if (dw_channels(p, layout)) return {"TA_DW_CHANNELS", kDwSimdPath, "TA_DW_GENERIC"};
  if (dw_fast3x3(p)) {
    const std::string family = p.stride_w == 1 ? "TA_DW_3X3_S1" : "TA_DW_3X3_S2";
    if (dw_asm_layer(k)) return {kDwSimdPath, family, family + "_ASM"};
    return {kDwSimdPath, family};
  }
  if (dw_wide(p))
    return {kDwSimdPath, std::string(p.kernel_w == 5 ? "TA_DW_WIDE5" : "TA_DW_WIDE7") + (p.stride_w == 1 ? "_S1" : "_S2"),
            "TA_DW_GENERIC"};
  return {kDwSimdPath, "TA_DW_GENERIC"};
}

// A CONV_2D layer in int8 weights with records (kPackedInt8, conv_s8w.c): the one-pixel column
// builder where column_mode picks it (neither pointwise with every tap inside the input nor a
// small patch; a tiled schedule's stripes and patches keep kernel, channels and strides, but a
// region's shifted pads make a 1x1 layer not pointwise: `regions`) and the general loop where doubled_loop_fits fails (not
// doubled, an odd channel count, a narrower activation range, or a channel whose record has no
// fast form: m != 0 and c not TA_CONV_RQ_IS_FAST, read off the records the generated code holds).
std::vector<std::string> conv_s8w_variants(const graph::Graph& graph, const graph::Op& op, bool regions) {
  const ConvKernel k = conv_kernel(graph, op);
  const ta_conv_params& p = k.params;
  std::vector<std::string> variants;
  const bool pointwise = !regions && p.kernel_h == 1 && p.kernel_w == 1 && (p.in_c & 3) == 0 && p.pad_top == 0 &&
                         p.pad_left == 0 && (p.out_h - 1) * p.stride_h < p.in_h && (p.out_w - 1) * p.stride_w < p.in_w;
  if (!pointwise && p.kernel_h * p.kernel_w * p.in_c > kSmallPatch) variants.push_back("TA_CONV_COL_PIXEL");
  bool fits = p.packed_doubled && (p.out_c & 1) == 0 && p.act_min == -128 && p.act_max == 127;
  if (fits) {
    const auto* weights = reinterpret_cast<const int8_t*>(graph.constant_data(*graph.input(op, 1)));
    const std::vector<int32_t> records = conv_rq_records(k, weights);
    for (size_t c = 0; c + TA_CONV_RQ_WORDS <= records.size(); c += TA_CONV_RQ_WORDS)
      fits = fits && (records[c] == 0 || TA_CONV_RQ_IS_FAST(records[c + 1]));  // conv_ch m, c: rq_usable(doubled)
  }
  if (!fits) variants.push_back("TA_CONV_S8W_GENERAL");
  return variants;
}

// A CONV_2D layer: int8 weights without records (kPlain) the portable path; int16 weights
// (kPackedInt16, conv_simd.c) the one-pixel column builder, which its odd pixels always take.
std::vector<std::string> conv_variants(const graph::Graph& graph, const graph::Op& op, WeightLayout layout,
                                       bool regions) {
  if (layout == WeightLayout::kPlain) return {"TA_CONV_PORTABLE"};
  if (layout == WeightLayout::kPackedInt16) return {"TA_CONV_COL_PIXEL"};
  return conv_s8w_variants(graph, op, regions);
}

// A FULLY_CONNECTED layer: int8 weights with no offset (kPackedInt8) the SXTB16 loop; with an
// offset, or in kPlain, the portable path (K > 0; the plain loop otherwise); kPackedInt16 the
// packed path, whose 4-channel loop runs with 4 output channels or more.
std::vector<std::string> fully_connected_variants(const ta_fc_params& p, WeightLayout layout) {
  if (layout == WeightLayout::kPackedInt16) return p.out_depth >= 4 ? std::vector<std::string>{"TA_FC_PACKED16"}
                                                                    : std::vector<std::string>{};
  if (layout == WeightLayout::kPackedInt8 && p.weights_offset == 0) return {};
  return p.in_depth > 0 ? std::vector<std::string>{"TA_FC_PORTABLE"} : std::vector<std::string>{};
}

// kernel_variants, or for the op's calls on the regions of a tiled schedule.
std::vector<std::string> variants_of(const graph::Graph& graph, const graph::Op& op, WeightLayout layout,
                                     bool regions) {
  if (op.opcode != opcode::kConv2D && op.opcode != opcode::kDepthwiseConv2D && op.opcode != opcode::kFullyConnected)
    return {};
  try {
    if (op.opcode == opcode::kConv2D) return conv_variants(graph, op, layout, regions);
    if (op.opcode == opcode::kFullyConnected)
      return fully_connected_variants(fully_connected_kernel(graph, op).params, layout);
    return depthwise_variants(depthwise_kernel(graph, op), layout);
  } catch (const UnsupportedError&) {  // no call the library runs: no code either
    return {};
  }
}

}  // namespace

std::vector<std::string> kernel_variants(const graph::Graph& graph, const graph::Op& op, WeightLayout layout) {
  return variants_of(graph, op, layout, false);
}

std::vector<std::string> region_kernel_variants(const graph::Graph& graph, const graph::Op& op, WeightLayout layout) {
  return variants_of(graph, op, layout, true);
}

const std::vector<std::string>& kernel_variant_guards(const std::string& source) {
  static const std::map<std::string, std::vector<std::string>> kGuards = {
      {"conv.c", {"TA_CONV_PORTABLE", "TA_CONV_COL_PIXEL", "TA_CONV_S8W_GENERAL"}},
      {"depthwise.c",
       {"TA_DW_3X3_S1", "TA_DW_3X3_S1_ASM", "TA_DW_3X3_S2", "TA_DW_3X3_S2_ASM", "TA_DW_WIDE5_S1", "TA_DW_WIDE5_S2", "TA_DW_WIDE7_S1", "TA_DW_WIDE7_S2",
        "TA_DW_GENERIC", "TA_DW_PORTABLE", "TA_DW_CHANNELS"}},
      {"fully_connected.c", {"TA_FC_PACKED16", "TA_FC_PORTABLE"}}};
  static const std::vector<std::string> kNone;
  const auto found = kGuards.find(source);
  return found == kGuards.end() ? kNone : found->second;
}

}  // namespace tinyarena::op_params
