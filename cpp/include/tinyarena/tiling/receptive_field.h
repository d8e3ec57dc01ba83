// Receptive-field (halo) algebra: which rows (or columns) of an input an op
// needs to produce a range of output rows (columns). Exact at the borders:
// stride, dilation and padding follow the kernels' geometry, positions in the
// padding need no input, and the result is clipped to the input.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "tinyarena/graph/graph.h"

namespace tinyarena::tiling {

// A half-open range [begin, end) of rows or columns; empty when end <= begin.
struct Range {
  int32_t begin = 0, end = 0;
  bool empty() const { return end <= begin; }
  int32_t size() const { return std::max(end - begin, 0); }
  bool operator==(const Range& other) const { return begin == other.begin && end == other.end; }
};

enum class Axis : int32_t { Rows = 1, Cols = 2 };  // the NHWC dimension
Axis parse_axis(const std::string& name);  // "rows" or "cols"; else std::invalid_argument

// A sliding window along one axis: output index o reads input indices
// o*stride - pad_before + k*dilation for k in [0, kernel).
struct Window1D {
  int32_t in_size = 0, kernel = 1, stride = 1, dilation = 1, pad_before = 0;
};
// The input indices `out` reads, clipped to [0, in_size): the contiguous span
// from the first output's first tap to the last output's last tap (with
// dilation the kernels widen whole windows, so rows between taps count).
Range window_input(const Window1D& window, Range out);

// One int8 image in NHWC (rank 4, batch 1): the tensors tiling works on.
bool is_spatial(const graph::Tensor& tensor);
// Rows of an image of any type (rank 4, batch 1): its height; 1 for other tensors (a reduction's result).
int32_t image_rows(const graph::Tensor& tensor);
// Bytes of one row of an image (width x channels x element bytes).
int64_t image_row_bytes(const graph::Tensor& tensor);

// QUANTIZE float32 -> int8 or DEQUANTIZE int8 -> float32 of one NHWC image
// (per-tensor): elementwise, so row-streamable; the float side is a model
// input or output a row stream can pull or write a few rows at a time.
bool is_float_conversion(const graph::Graph& graph, const graph::Op& op);
// TRANSPOSE NCHW -> NHWC (perm [0, 2, 3, 1]) of a model input (or of its
// QUANTIZE), int8 or float32, as a PyTorch export starts: a row stream loads
// its output rows straight from the streamed input (rows only; no kernel call).
bool is_input_transpose(const graph::Graph& graph, const graph::Op& op);

// Ops whose output rows can be computed from input rows in any order, one range
// at a time, by the kernel library (conv, depthwise, pools, elementwise with
// broadcast, PAD); their activation input and output are spatial. Such ops can be
// row-streamed, and all but PAD run on patches. Row reductions (below), float
// conversions and input transposes (above) are tileable too, on rows only
// (op_facts.h: OpFacts::rows_only).
bool is_tileable(const graph::Graph& graph, const graph::Op& op);
// Per tensor: it shares storage with a zero-copy placement (it is placed, or the
// base of one), so its bytes are laid out whole, never in a ring or a patch buffer.
std::vector<bool> placed_storage(const graph::Graph& graph);
// The tests with placed_storage(graph) computed once (the one-op forms compute it per call).
bool is_tileable(const graph::Graph& graph, const graph::Op& op, const std::vector<bool>& placed);
bool is_row_reduction(const graph::Graph& graph, const graph::Op& op, const std::vector<bool>& placed);
bool is_float_conversion(const graph::Graph& graph, const graph::Op& op, const std::vector<bool>& placed);
bool is_input_transpose(const graph::Graph& graph, const graph::Op& op, const std::vector<bool>& placed);
// MEAN over rows and columns of a spatial input (TFLite axis [1, 2], keep_dims
// or not) or a global AVERAGE_POOL_2D (one unpadded window covering the whole
// input): it reads every input row for its one output row, so it is
// row-streamable only, summing rows as they come (never on patches).
bool is_row_reduction(const graph::Graph& graph, const graph::Op& op);

// How output indices along one axis map to the input indices they read:
// through a window, one to one shifted by `shift` (clipped to `size`), all of
// a broadcast axis, by nearest-neighbour resizing, or all of it (a reduction).
struct InputMap {
  enum class Kind : uint8_t { Window, Shifted, Broadcast, Nearest, All } kind = Kind::Shifted;
  Window1D window;
  int32_t size = 0, shift = 0;
  int32_t out_size = 0;
  bool align_corners = false, half_pixel_centers = false;
};
// The map of `op`'s input at `position` along `axis` (for its first output).
// Conv, depthwise, pools, PAD, RESIZE_NEAREST_NEIGHBOR, elementwise (ADD/MUL
// broadcast a size-1 axis), CONCATENATION along channels and row reductions; throws
// UnsupportedError for other ops.
InputMap input_map(const graph::Graph& graph, const graph::Op& op, size_t position, Axis axis);
// The same with placed_storage(graph) computed once.
InputMap input_map(const graph::Graph& graph, const graph::Op& op, size_t position, Axis axis,
                   const std::vector<bool>& placed);
// The input indices output indices `out` need (empty when all are padding).
Range map_range(const InputMap& map, Range out);

// input_map then map_range.
Range input_range(const graph::Graph& graph, const graph::Op& op, size_t position, Axis axis, Range out);

}  // namespace tinyarena::tiling
