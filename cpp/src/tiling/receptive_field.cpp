#include "tinyarena/tiling/receptive_field.h"

#include <algorithm>
#include <stdexcept>
#include <cmath>
#include <cstring>

#include "tinyarena/op_params/geometry.h"
#include "tinyarena/op_params/op_checks.h"
#include "tinyarena/common/errors.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::tiling {
namespace {

namespace op_code = op_params::opcode;

bool is_unary_elementwise(int32_t opcode) {
  return opcode == op_code::kRelu || opcode == op_code::kRelu6 || opcode == op_code::kReluN1To1 ||
         opcode == op_code::kLogistic || opcode == op_code::kTanh || opcode == op_code::kHardSwish ||
         opcode == op_code::kLeakyRelu || opcode == op_code::kQuantize;
}

bool is_binary_elementwise(int32_t opcode) { return opcode == op_code::kAdd || opcode == op_code::kMul; }

bool is_pad(int32_t opcode) { return opcode == op_code::kPad || opcode == op_code::kPadV2; }

bool is_window_op(int32_t opcode) {
  return opcode == op_code::kConv2D || opcode == op_code::kDepthwiseConv2D ||
         opcode == op_code::kAveragePool2D || opcode == op_code::kMaxPool2D;
}

// The window of a conv / depthwise / pool along `axis`, from the kernels' own geometry.
Window1D op_window(const graph::Graph& graph, const graph::Op& op, Axis axis) {
  const bool rows = axis == Axis::Rows;
  auto from = [&](const auto& p) {
    return rows ? Window1D{p.in_h, p.kernel_h, p.stride_h, p.dilation_h, p.pad_top}
                : Window1D{p.in_w, p.kernel_w, p.stride_w, p.dilation_w, p.pad_left};
  };
  if (op.opcode == op_code::kConv2D) return from(op_params::detail::conv_geometry(graph, op).params);
  if (op.opcode == op_code::kDepthwiseConv2D) return from(op_params::detail::depthwise_geometry(graph, op).params);
  const graph::Tensor& in = op_params::detail::int8_input(graph, op, 0, 4);
  const op_params::detail::Window w =
      op_params::detail::window(op, in, op.options.filter_h, op.options.filter_w, 1, 1);
  return rows ? Window1D{in.shape[1], op.options.filter_h, op.options.stride_h, 1, w.pad_top}
              : Window1D{in.shape[2], op.options.filter_w, op.options.stride_w, 1, w.pad_left};
}

Range clip(Range r, int32_t size) { return {std::max(r.begin, 0), std::min(r.end, size)}; }

// The input index RESIZE_NEAREST_NEIGHBOR reads for output index `o` (TFLite's formula).
int32_t nearest_source(int32_t o, int32_t in_size, int32_t out_size, bool align_corners, bool half_pixel) {
  const float scale = align_corners && out_size > 1 ? static_cast<float>(in_size - 1) / (out_size - 1)
                                                    : static_cast<float>(in_size) / out_size;
  const float value = (static_cast<float>(o) + (half_pixel ? 0.5f : 0.0f)) * scale;
  int32_t i = static_cast<int32_t>(align_corners ? std::round(value) : std::floor(value));
  i = std::min(i, in_size - 1);
  return half_pixel ? std::max(i, 0) : i;
}

std::string label(const graph::Op& op) { return "op " + std::to_string(op.index) + " (" + op.type + ")"; }

const graph::Tensor& input_at(const graph::Graph& graph, const graph::Op& op, size_t position) {
  const graph::Tensor* t = graph.input(op, position);
  if (!t) throw UnsupportedError(label(op) + " has no input " + std::to_string(position));
  return *t;
}

// A global AVERAGE_POOL_2D: one window covering the whole unpadded input, one output pixel.
bool is_global_average_pool(const graph::Graph& graph, const graph::Op& op) {
  const op_params::PoolKernel k = op_params::pool_kernel(graph, op);
  const ta_pool_params& p = k.params;
  return k.images == 1 && p.out_h == 1 && p.out_w == 1 && p.filter_h == p.in_h && p.filter_w == p.in_w &&
         p.pad_top == 0 && p.pad_left == 0;
}

}  // namespace

Axis parse_axis(const std::string& name) {
  if (name == "rows") return Axis::Rows;
  if (name == "cols") return Axis::Cols;
  throw std::invalid_argument("axis must be 'rows' or 'cols', got '" + name + "'");
}

Range window_input(const Window1D& w, Range out) {
  if (out.empty()) return {0, 0};
  // The contiguous span from the first tap of the first output to the last tap
  // of the last one, clipped: what a kernel widening whole windows touches.
  const int64_t first = int64_t{out.begin} * w.stride - w.pad_before;
  const int64_t last = int64_t{out.end - 1} * w.stride - w.pad_before + int64_t{w.kernel - 1} * w.dilation;
  const int64_t begin = std::max<int64_t>(first, 0), end = std::min<int64_t>(last + 1, w.in_size);
  if (end <= begin) return {0, 0};
  return {static_cast<int32_t>(begin), static_cast<int32_t>(end)};
}

bool is_spatial(const graph::Tensor& t) {
  return t.shape.size() == 4 && t.shape[0] == 1 && t.dtype == graph::DType::Int8;
}

std::vector<bool> placed_storage(const graph::Graph& graph) {
  std::vector<bool> placed(graph.tensors.size(), false);
  for (const graph::Tensor& t : graph.tensors)
    if (t.placement) placed[t.index] = placed[t.placement->base] = true;
  return placed;
}

int32_t image_rows(const graph::Tensor& t) { return t.shape.size() == 4 && t.shape[0] == 1 ? t.shape[1] : 1; }

int64_t image_row_bytes(const graph::Tensor& t) {
  return int64_t{t.shape[2]} * t.shape[3] * graph::dtype_bytes(t.dtype, 1).value_or(1);
}

bool is_float_conversion(const graph::Graph& graph, const graph::Op& op) {
  return is_float_conversion(graph, op, placed_storage(graph));
}

bool is_float_conversion(const graph::Graph& graph, const graph::Op& op, const std::vector<bool>& placed) {
  if (op.elided || op.outputs.size() != 1 || (op.opcode != op_code::kQuantize && op.opcode != op_code::kDequantize))
    return false;
  const graph::Tensor *in = graph.input(op, 0), *out = graph.output(op, 0);
  if (!in || !out || in->is_constant() || in->shape != out->shape) return false;
  const graph::Tensor& float_side = op.opcode == op_code::kQuantize ? *in : *out;
  const graph::Tensor& int8_side = op.opcode == op_code::kQuantize ? *out : *in;
  if (float_side.dtype != graph::DType::Float32 || !is_spatial(int8_side)) return false;
  if (placed[in->index] || placed[out->index]) return false;
  try {
    op_params::float_conversion(graph, op);
  } catch (const UnsupportedError&) {
    return false;
  }
  return true;
}

bool is_input_transpose(const graph::Graph& graph, const graph::Op& op) {
  return is_input_transpose(graph, op, placed_storage(graph));
}

bool is_input_transpose(const graph::Graph& graph, const graph::Op& op, const std::vector<bool>& placed) {
  if (op.elided || op.opcode != op_code::kTranspose || op.outputs.size() != 1) return false;
  const graph::Tensor *in = graph.input(op, 0), *perm = graph.input(op, 1), *out = graph.output(op, 0);
  if (!in || !perm || !out || in->is_constant() || !perm->is_constant()) return false;
  if (in->producer >= 0) {  // a QUANTIZE of a model input may come first
    const graph::Op& quantize = graph.ops[in->producer];
    if (quantize.opcode != op_code::kQuantize || !is_float_conversion(graph, quantize, placed)) return false;
    if (graph.input(quantize, 0)->producer >= 0) return false;
  }
  if (in->shape.size() != 4 || in->shape[0] != 1 || in->dtype != out->dtype || placed[out->index]) return false;
  if (in->dtype != graph::DType::Int8 && in->dtype != graph::DType::Float32) return false;
  if (perm->dtype != graph::DType::Int32 || perm->element_count != 4) return false;
  const int32_t nchw_to_nhwc[4] = {0, 2, 3, 1};
  return std::memcmp(graph.constant_data(*perm), nchw_to_nhwc, sizeof nchw_to_nhwc) == 0;
}

bool is_row_reduction(const graph::Graph& graph, const graph::Op& op) {
  return is_row_reduction(graph, op, placed_storage(graph));
}

bool is_row_reduction(const graph::Graph& graph, const graph::Op& op, const std::vector<bool>& placed) {
  if (op.elided || (op.opcode != op_code::kMean && op.opcode != op_code::kAveragePool2D) || op.outputs.size() != 1)
    return false;
  const graph::Tensor* in = graph.input(op, 0);
  if (!in || in->is_constant() || !is_spatial(*in) || placed[in->index]) return false;
  const graph::Tensor* out = graph.output(op, 0);
  if (!out || placed[out->index]) return false;
  try {
    if (op.opcode == op_code::kAveragePool2D) return is_global_average_pool(graph, op);
    return op_params::mean_params(graph, op).reduce_mask == 0b0110;
  } catch (const UnsupportedError&) {
    return false;
  }
}

bool is_tileable(const graph::Graph& graph, const graph::Op& op) { return is_tileable(graph, op, placed_storage(graph)); }

bool is_tileable(const graph::Graph& graph, const graph::Op& op, const std::vector<bool>& placed) {
  if (op.elided) return false;  // moves no data: a segment stops there
  if (is_row_reduction(graph, op, placed) || is_float_conversion(graph, op, placed) ||
      is_input_transpose(graph, op, placed))
    return true;
  if (!is_window_op(op.opcode) && !is_binary_elementwise(op.opcode) && !is_unary_elementwise(op.opcode) &&
      !is_pad(op.opcode))
    return false;
  const graph::Tensor* out = graph.output(op, 0);
  if (!out || op.outputs.size() != 1 || !is_spatial(*out) || placed[out->index]) return false;
  const size_t activations = is_binary_elementwise(op.opcode) ? 2 : 1;
  bool any_activation = false;
  for (size_t position = 0; position < activations; ++position) {
    const graph::Tensor* in = graph.input(op, position);
    if (!in) return false;
    if (in->is_constant()) {
      if (!is_binary_elementwise(op.opcode)) return false;
      continue;
    }
    any_activation = true;
    if (!is_spatial(*in) || placed[in->index]) return false;
    if (!is_window_op(op.opcode) && !is_pad(op.opcode) && in->shape != out->shape && in->shape[1] != 1) return false;
  }
  if (!any_activation) return false;
  try {
    if (is_window_op(op.opcode)) op_window(graph, op, Axis::Rows);
    if (is_pad(op.opcode)) op_params::pad_params(graph, op);
  } catch (const UnsupportedError&) {
    return false;
  }
  return true;
}

InputMap input_map(const graph::Graph& graph, const graph::Op& op, size_t position, Axis axis) {
  return input_map(graph, op, position, axis, placed_storage(graph));
}

InputMap input_map(const graph::Graph& graph, const graph::Op& op, size_t position, Axis axis,
                   const std::vector<bool>& placed) {
  const graph::Tensor& in = input_at(graph, op, position);
  const int32_t dim = static_cast<int32_t>(axis);
  InputMap map;
  if (in.shape.size() != 4) {
    if (!is_binary_elementwise(op.opcode))
      throw UnsupportedError(label(op) + " has no spatial input " + std::to_string(position));
    const int32_t d = dim - (4 - static_cast<int32_t>(in.shape.size()));  // lower ranks align right
    map.size = d < 0 ? 1 : in.shape[d];
    map.kind = map.size == 1 ? InputMap::Kind::Broadcast : InputMap::Kind::Shifted;
    return map;
  }
  map.size = in.shape[dim];
  if (is_input_transpose(graph, op, placed)) {  // NCHW: rows and columns are dimensions 2 and 3
    map.size = in.shape[dim + 1];
  } else if (is_row_reduction(graph, op, placed)) {  // before windows: a global average pool is one
    map.kind = InputMap::Kind::All;
  } else if (is_window_op(op.opcode)) {
    map.kind = InputMap::Kind::Window;
    map.window = op_window(graph, op, axis);
  } else if (is_binary_elementwise(op.opcode) || is_unary_elementwise(op.opcode) ||
             op.opcode == op_code::kConcatenation || op.opcode == op_code::kDequantize) {
    map.kind = map.size == 1 ? InputMap::Kind::Broadcast : InputMap::Kind::Shifted;
  } else if (is_pad(op.opcode)) {
    map.shift = -op_params::pad_params(graph, op).before[dim];
  } else if (op.opcode == op_code::kResizeNearestNeighbor) {
    const ta_resize_params p = op_params::resize_nearest_params(graph, op);
    map.kind = InputMap::Kind::Nearest;
    map.out_size = axis == Axis::Rows ? p.out_h : p.out_w;
    map.align_corners = p.align_corners != 0;
    map.half_pixel_centers = p.half_pixel_centers != 0;
  } else {
    throw UnsupportedError(label(op) + " has no receptive-field rule");
  }
  return map;
}

Range map_range(const InputMap& map, Range out) {
  if (out.empty()) return {0, 0};
  switch (map.kind) {
    case InputMap::Kind::Window: return window_input(map.window, out);
    case InputMap::Kind::Broadcast: return {0, 1};
    case InputMap::Kind::All: return {0, map.size};
    case InputMap::Kind::Nearest: {
      auto source = [&](int32_t o) {
        return nearest_source(o, map.size, map.out_size, map.align_corners, map.half_pixel_centers);
      };
      return {source(out.begin), source(out.end - 1) + 1};
    }
    case InputMap::Kind::Shifted: break;
  }
  const Range r = clip({out.begin + map.shift, out.end + map.shift}, map.size);
  return r.empty() ? Range{0, 0} : r;
}

Range input_range(const graph::Graph& graph, const graph::Op& op, size_t position, Axis axis, Range out) {
  return map_range(input_map(graph, op, position, axis), out);
}

}  // namespace tinyarena::tiling
