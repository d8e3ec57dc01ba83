// What the tiling stages ask of each op again and again -- whether it is
// tileable, its input maps along rows and columns, its MACs per output pixel
// and its kernel scratch by region -- computed once per graph.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/tiling/receptive_field.h"
#include "tinyarena_kernels.h"

namespace tinyarena::tiling {

// Kernel scratch of one op by the size of the region a call computes
// (conv: fixed; depthwise: the widened input plane of the region).
class TileScratch {
 public:
  TileScratch() = default;
  TileScratch(const graph::Graph& graph, const graph::Op& op);
  // Bytes for `rows` output rows of `cols` columns (0 = all) in one call.
  int64_t bytes(int32_t rows, int32_t cols = 0) const;

 private:
  int64_t fixed_ = 0;
  bool depthwise_ = false;
  ta_dwconv_params depthwise_params_{};
};

struct OpFacts {
  bool tileable = false;
  bool reduces_rows = false;  // a row reduction (is_row_reduction): rows only, with an int32 sum per channel
  bool rows_only = false;     // never on patches: a row reduction, PAD, float conversion or input transpose
  bool float_conversion = false;  // is_float_conversion
  bool input_transpose = false;   // is_input_transpose
  int64_t state_bytes = 0;    // reduces_rows: bytes of its sums, kept for the whole segment
  std::vector<InputMap> rows, cols;  // per input position (activations only; tileable ops)
  int64_t macs_per_pixel = 0;
  TileScratch scratch;
};

class GraphFacts {
 public:
  explicit GraphFacts(const graph::Graph& graph);
  const OpFacts& op(int32_t index) const { return ops_[index]; }

 private:
  std::vector<OpFacts> ops_;
};

// Output positions along rows and columns: H * W of a spatial tensor, else 1 (a reduction's result).
int64_t output_pixels(const graph::Tensor& out);

// Multiply-accumulates of `op` computing output rows `rows` x columns `cols`.
int64_t tile_macs(const graph::Graph& graph, const graph::Op& op, Range rows, Range cols);

}  // namespace tinyarena::tiling
