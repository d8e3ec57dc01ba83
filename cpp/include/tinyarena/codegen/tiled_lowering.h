// Lowering of a tiled schedule (lower_tiled.cpp, lower_row_stream.cpp,
// lower_patches.cpp): plain ops become one kernel call each, as in
// lower_program; a row-streamed segment becomes a loop replaying its fixed
// schedule of steps (a constant table): each step runs one op on a range of
// output rows, loads input rows (TA_INPUT_ROWS, a user-replaceable row
// callback), or shifts a ring. Kernels get virtual row-0 bases, so a ring
// holding rows [first, first + n) is addressed as base - first * row_bytes.
#pragma once

#include <string>
#include <vector>

#include "tinyarena/allocation/hierarchy.h"
#include "tinyarena/codegen/program.h"
#include "tinyarena/tiling/tiled_plan.h"

namespace tinyarena::codegen {

// Throws UnsupportedError for a patch segment (only row streaming is compiled)
// or an op the kernel library lacks.
Program lower_tiled_program(const graph::Graph& graph, const tiling::TiledPlan& tiled, const std::string& name);

// The same with the tiled plan's buffers (rings, patch buffers, whole tensors,
// scratch) placed across a memory hierarchy: one arena per used memory, as
// lower_program does for an untiled plan.
Program lower_tiled_program(const graph::Graph& graph, const tiling::TiledPlan& tiled, const std::string& name,
                            const std::vector<allocation::Memory>& memories,
                            const allocation::HierarchySolution& placement);

}  // namespace tinyarena::codegen
