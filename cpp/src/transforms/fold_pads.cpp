// PAD folding: a PAD with the zero point in front of convolutions becomes
// their explicit padding (the kernels read positions outside the input as
// the input zero point), so the padded copy is never made.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "rebuild.h"
#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena/op_params/quantization.h"
#include "tinyarena/transforms/transforms.h"

namespace tinyarena::transforms {
namespace {

using graph::Graph;
using graph::Op;
using graph::Tensor;
namespace op_code = op_params::opcode;

struct SpatialPad {
  int32_t top = 0, bottom = 0, left = 0, right = 0;
  int32_t value = 0;
};

bool is_graph_output(const Graph& graph, int32_t t) {
  return std::find(graph.outputs.begin(), graph.outputs.end(), t) != graph.outputs.end();
}

// The padding of a foldable PAD: int8 NHWC, height/width only, the input's
// zero point as value, quantization unchanged, read only by ops.
std::optional<SpatialPad> spatial_pad(const Graph& graph, const Op& op) {
  if (op.opcode != op_code::kPad && op.opcode != op_code::kPadV2) return std::nullopt;
  const auto params = detail::kernel_params_or_nothing([&] { return op_params::pad_params(graph, op); });
  if (!params) return std::nullopt;  // the op stays; the code generator reports why if it cannot run it
  const ta_pad_params& p = *params;
  const Tensor &in = *graph.input(op, 0), &out = *graph.output(op, 0);
  if (p.ndims != 4 || p.before[0] || p.after[0] || p.before[3] || p.after[3]) return std::nullopt;
  if (!detail::same_quantization(in, out) || p.pad_value != op_params::zero_point_of(in)) return std::nullopt;
  if (out.consumers.empty() || is_graph_output(graph, out.index)) return std::nullopt;
  return SpatialPad{p.before[1], p.after[1], p.before[2], p.after[2], p.pad_value};
}

// Kernel height and width of a window op, from its weights or its options.
std::array<int64_t, 2> window_size(const Graph& graph, const Op& op) {
  if (op.opcode == op_code::kMaxPool2D) return {op.options.filter_h, op.options.filter_w};
  const Tensor* weights = graph.input(op, 1);
  if (!weights || weights->shape.size() != 4) return {0, 0};
  return {weights->shape[1], weights->shape[2]};
}

// `reader`'s options once it reads the PAD's input instead of its output:
// its own padding (on the padded shape) plus the PAD's; nullopt when that
// would change what it computes.
std::optional<graph::OpOptions> folded_options(const Graph& graph, const Op& reader, const Tensor& padded,
                                               const SpatialPad& pad) {
  const bool conv = reader.opcode == op_code::kConv2D || reader.opcode == op_code::kDepthwiseConv2D;
  const bool max_pool = reader.opcode == op_code::kMaxPool2D && pad.value == -128;
  if (!(conv || max_pool) || reader.inputs.empty() || reader.inputs[0] != padded.index) return std::nullopt;
  if (std::count(reader.inputs.begin(), reader.inputs.end(), padded.index) != 1) return std::nullopt;
  const Tensor* out = graph.output(reader, 0);
  const auto [kh, kw] = window_size(graph, reader);
  if (!out || out->shape.size() != 4 || kh < 1 || kw < 1) return std::nullopt;
  const graph::OpOptions& o = reader.options;
  const int64_t dilation_h = max_pool ? 1 : o.dilation_h, dilation_w = max_pool ? 1 : o.dilation_w;
  const op_params::AxisPadding h = op_params::window_padding(o, true, padded.shape[1], kh, dilation_h);
  const op_params::AxisPadding w = op_params::window_padding(o, false, padded.shape[2], kw, dilation_w);
  if (std::max({h.before + pad.top, h.after + pad.bottom, w.before + pad.left, w.after + pad.right}) > INT32_MAX)
    return std::nullopt;
  graph::OpOptions folded = o;
  folded.padding = graph::Padding::Explicit;
  folded.pad_top = static_cast<int32_t>(h.before + pad.top);
  folded.pad_bottom = static_cast<int32_t>(h.after + pad.bottom);
  folded.pad_left = static_cast<int32_t>(w.before + pad.left);
  folded.pad_right = static_cast<int32_t>(w.after + pad.right);
  // A max pool skips padded positions where the PAD offered -128: the same
  // maximum as long as every window keeps one input position.
  if (max_pool && std::max({folded.pad_top, folded.pad_bottom}) >= kh) return std::nullopt;
  if (max_pool && std::max({folded.pad_left, folded.pad_right}) >= kw) return std::nullopt;
  const int64_t in_h = padded.shape[1] - pad.top - pad.bottom, in_w = padded.shape[2] - pad.left - pad.right;
  if (op_params::window_padding(folded, true, in_h, kh, dilation_h).out_size != out->shape[1] ||
      op_params::window_padding(folded, false, in_w, kw, dilation_w).out_size != out->shape[2])
    return std::nullopt;
  return folded;
}

}  // namespace

TransformResult fold_pads(const Graph& graph, const std::vector<int32_t>& only) {
  Graph folded = graph;
  TransformResult result;
  std::vector<bool> drop(graph.ops.size(), false);
  for (const Op& op : graph.ops) {
    if (!detail::selected(only, op.index)) continue;
    const std::optional<SpatialPad> pad = spatial_pad(graph, op);
    if (!pad) continue;
    const Tensor& padded = *graph.output(op, 0);
    std::vector<std::pair<int32_t, graph::OpOptions>> readers;
    for (int32_t c : padded.consumers) {
      std::optional<graph::OpOptions> options = folded_options(graph, graph.ops[c], padded, *pad);
      if (!options) break;
      readers.emplace_back(c, *options);
    }
    if (readers.size() != padded.consumers.size()) continue;
    std::string into;
    for (auto& [c, options] : readers) {
      folded.ops[c].inputs[0] = op.inputs[0];
      folded.ops[c].options = options;
      into += (into.empty() ? "" : ", ") + detail::op_label(graph.ops[c]);
    }
    drop[op.index] = true;
    result.rewrites.push_back({op.index, op.type + " folded into " + into});
  }
  result.graph = detail::without_ops(std::move(folded), drop);
  return result;
}

}  // namespace tinyarena::transforms
