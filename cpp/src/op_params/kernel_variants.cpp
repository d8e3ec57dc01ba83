// The kernel variant families a layer reaches in the DSP build (conv.c: its portable path;
// depthwise.c: its row-kernel families and portable path): the generated Makefile compiles
// only the families some layer of the model reaches (the others' guards set to 0), and the
// planner counts each family's code once per model. The conditions mirror the kernels'
// dispatch (cpp/kernels/src/depthwise_simd.h and depthwise.c, depthwise_wide.c).
#include <map>
#include <string>
#include <vector>

#include "tinyarena/op_params/flash.h"

#include "tinyarena/common/errors.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::op_params {
namespace {

constexpr const char* kDwSimdPath = "depthwise.c SIMD path";  // what the SIMD families share

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

// A depthwise layer: the portable path without weights the SIMD path reads; else 3x3 rows, or the
// 5x5/7x7 rows with the generic ones (channels off the doubled accumulator), or the generic rows.
// A tiled schedule's stripes and patches keep kernel, strides and dilation (a 5x5/7x7 patch one
// output wide runs the generic rows, which its layer has anyway).
std::vector<std::string> depthwise_variants(const ta_dwconv_params& p, WeightLayout layout) {
  if (!dw_simd_weights(p, layout)) return {"TA_DW_PORTABLE"};
  if (dw_fast3x3(p)) return {kDwSimdPath, "TA_DW_3X3"};
  if (dw_wide(p)) return {kDwSimdPath, p.kernel_w == 5 ? "TA_DW_WIDE5" : "TA_DW_WIDE7", "TA_DW_GENERIC"};
  return {kDwSimdPath, "TA_DW_GENERIC"};
}

}  // namespace

std::vector<std::string> kernel_variants(const graph::Graph& graph, const graph::Op& op, WeightLayout layout) {
  // CONV_2D: int8 weights without records (kPlain) run the portable path, the packed layouts theirs
  if (op.opcode == opcode::kConv2D) return layout == WeightLayout::kPlain ? std::vector<std::string>{"TA_CONV_PORTABLE"}
                                                                          : std::vector<std::string>{};
  if (op.opcode != opcode::kDepthwiseConv2D) return {};
  try {
    return depthwise_variants(depthwise_kernel(graph, op).params, layout);
  } catch (const UnsupportedError&) {  // no call the library runs: no code either
    return {};
  }
}

const std::vector<std::string>& kernel_variant_guards(const std::string& source) {
  static const std::map<std::string, std::vector<std::string>> kGuards = {
      {"conv.c", {"TA_CONV_PORTABLE"}},
      {"depthwise.c", {"TA_DW_3X3", "TA_DW_WIDE5", "TA_DW_WIDE7", "TA_DW_GENERIC", "TA_DW_PORTABLE"}}};
  static const std::vector<std::string> kNone;
  const auto found = kGuards.find(source);
  return found == kGuards.end() ? kNone : found->second;
}

}  // namespace tinyarena::op_params
