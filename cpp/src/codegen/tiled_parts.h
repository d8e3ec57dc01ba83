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

// One row-streamed segment: the replay loop (C statements) and its step table `table`.
// `lowered` holds the segment ops' ordinary calls (constants, params, kernel names).
std::string row_stream_loop(const graph::Graph& graph, const tiling::RowStream& stream,
                            const std::vector<KernelCall>& lowered, const LoweringContext& tiled,
                            const std::string& table);
ConstArray row_stream_table(const tiling::RowStream& stream, const std::string& name);

// One patch segment: the loop over its patches; the region table is int16_table(run.regions).
std::string patch_loop(const graph::Graph& graph, const tiling::PatchRun& run, const std::vector<KernelCall>& lowered,
                       const LoweringContext& tiled, const std::string& table);

}  // namespace tinyarena::codegen::tiled
