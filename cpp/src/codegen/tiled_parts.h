// Internal to the tiled lowering (lower_tiled.cpp, lower_row_stream.cpp,
// lower_patches.cpp): the two segment loops and the helpers they share.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tinyarena/codegen/lowering.h"
#include "tinyarena/codegen/program.h"
#include "tinyarena/tiling/tiled_plan.h"

namespace tinyarena::codegen::tiled {

inline int64_t row_bytes(const graph::Tensor& t) { return tiling::image_row_bytes(t); }
[[noreturn]] void cannot_tile(const graph::Op& op, const std::string& why);
// An elementwise operand: rank 4, or lower with nothing along rows and columns.
void check_operand(const graph::Op& op, const graph::Tensor& t);
// A constant operand's array (the plain lowering emitted it as op<index>_in<position>).
std::string constant_operand(const graph::Op& op, size_t position);
// `kernel` and first argument of a one-input elementwise call `kernel(first, in, out, n)`.
std::pair<std::string, std::string> unary_kernel(const graph::Op& op, const KernelCall& lowered);
// An int16 constant table; throws UnsupportedError for values out of range.
ConstArray int16_table(const std::string& name, const std::vector<int32_t>& values);

// C expressions for the tensors of one call on a region of a segment's output (a patch, or a
// stripe of rows within a column strip). base() is the virtual address of element (0, 0), so
// element (y, x) is base + y * stride + x * channels wherever the tensor lives: a buffer holding
// a region of it (origin at the region's first row and column) or the whole tensor.
class RegionAddresses {
 public:
  RegionAddresses(const graph::Graph& graph, const LoweringContext& tiled) : graph_(graph), tiled_(tiled) {}
  virtual ~RegionAddresses() = default;
  // Bound `k` of `t`'s region in this call: 0/1 its rows [begin, end), 2/3 its columns.
  virtual std::string region(int32_t t, int k) const = 0;
  // Bytes from one row of `t` to the next where it lives.
  virtual std::string stride(int32_t t) const = 0;
  virtual std::string base(int32_t t) const = 0;

  std::string rows(int32_t t) const { return "(" + region(t, 1) + " - " + region(t, 0) + ")"; }
  std::string cols(int32_t t) const { return "(" + region(t, 3) + " - " + region(t, 2) + ")"; }
  std::string channels(int32_t t) const { return std::to_string(graph_.tensors[t].shape[3]); }
  std::string at(int32_t t, const std::string& row, const std::string& col) const {
    return base(t) + " + (" + row + ") * " + stride(t) + " + (" + col + ") * " + channels(t);
  }

 protected:
  const graph::Graph& graph_;
  const LoweringContext& tiled_;
};

// The statement computing `op`'s output region (conv, depthwise, pools, elementwise ops).
std::string region_call(const graph::Graph& graph, const graph::Op& op, const KernelCall& lowered,
                        const RegionAddresses& at, const std::string& scratch);

// One row-streamed segment: the replay loop (C statements) and its step table `table`.
// `lowered` holds the segment ops' ordinary calls (constants, params, kernel names).
std::string row_stream_loop(const graph::Graph& graph, const tiling::RowStream& stream,
                            const std::vector<KernelCall>& lowered, const LoweringContext& tiled,
                            const std::string& table);
ConstArray row_stream_table(const tiling::RowStream& stream, const std::string& name);
// The columns of each tensor per column strip (RowStream::strip_columns), named `name`_columns.
ConstArray row_stream_columns(const tiling::RowStream& stream, const std::string& name);

// One patch segment: the loop over its patches; the region table is int16_table(run.regions).
std::string patch_loop(const graph::Graph& graph, const tiling::PatchRun& run, const std::vector<KernelCall>& lowered,
                       const LoweringContext& tiled, const std::string& table);

}  // namespace tinyarena::codegen::tiled
