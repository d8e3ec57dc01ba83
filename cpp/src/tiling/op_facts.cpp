#include "tinyarena/tiling/op_facts.h"

#include "tinyarena/op_params/geometry.h"
#include "tinyarena/graph/op_metrics.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::tiling {

TileScratch::TileScratch(const graph::Graph& graph, const graph::Op& op) {
  if (op.opcode == op_params::opcode::kConv2D) {
    const ta_conv_params p = op_params::detail::conv_geometry(graph, op).params;
    fixed_ = op_params::conv_scratch_bytes(p);  // the generated code passes the rq records from flash
  } else if (op.opcode == op_params::opcode::kDepthwiseConv2D) {
    depthwise_ = true;
    depthwise_params_ = op_params::detail::depthwise_geometry(graph, op).params;
  }
}

int64_t TileScratch::bytes(int32_t rows, int32_t cols) const {
  if (!depthwise_) return fixed_;
  ta_dwconv_params p = depthwise_params_;
  p.out_h = rows;  // the region runs as an image of its own (see codegen/lower_tiled.cpp)
  if (cols > 0) p.out_w = cols;
  return static_cast<int64_t>(ta_depthwise_conv_s8_scratch_bytes(&p));
}

GraphFacts::GraphFacts(const graph::Graph& graph) : ops_(graph.ops.size()) {
  const std::vector<bool> placed = placed_storage(graph);
  for (const graph::Op& op : graph.ops) {
    OpFacts& f = ops_[op.index];
    f.tileable = is_tileable(graph, op, placed);
    if (!f.tileable) continue;
    f.rows.resize(op.inputs.size());
    f.cols.resize(op.inputs.size());
    for (size_t position = 0; position < op.inputs.size(); ++position) {
      if (op.inputs[position] < 0 || graph.tensors[op.inputs[position]].is_constant()) continue;
      f.rows[position] = input_map(graph, op, position, Axis::Rows, placed);
      f.cols[position] = input_map(graph, op, position, Axis::Cols, placed);
    }
    f.macs_per_pixel = tile_macs(graph, op, {0, 1}, {0, 1});
    f.scratch = TileScratch(graph, op);
    f.reduces_rows = is_row_reduction(graph, op, placed);
    // PAD streams its rows through a params copy per stripe; a patch region is not dense.
    const bool pad = op.opcode == op_params::opcode::kPad || op.opcode == op_params::opcode::kPadV2;
    f.float_conversion = is_float_conversion(graph, op, placed);
    f.input_transpose = is_input_transpose(graph, op, placed);
    f.rows_only = f.reduces_rows || pad || f.float_conversion || f.input_transpose;
    if (f.reduces_rows) f.state_bytes = int64_t{graph.input(op, 0)->shape[3]} * 4;
  }
}

int64_t output_pixels(const graph::Tensor& out) {
  return out.shape.size() == 4 && out.shape[0] == 1 ? int64_t{out.shape[1]} * out.shape[2] : 1;
}

int64_t tile_macs(const graph::Graph& graph, const graph::Op& op, Range rows, Range cols) {
  const int64_t pixels = output_pixels(*graph.output(op, 0));
  return pixels == 0 ? 0 : graph::op_macs(graph, op) / pixels * rows.size() * cols.size();
}

}  // namespace tinyarena::tiling
