// Patch-based execution (MCUNetV2): a segment runs on an n x m grid of
// patches of its output; each patch computes, op by op, just the region its
// output patch needs, recomputing the halos neighbouring patches share, and
// writes into the whole output tensor. Per-patch buffers are sized for the
// largest patch.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/tiling/op_facts.h"

namespace tinyarena::tiling {

// The largest region of one tensor any patch needs.
struct PatchBuffer {
  int32_t tensor = -1;
  int32_t rows = 0, cols = 0;
  int64_t bytes = 0;
};

struct PatchRun {
  std::vector<int32_t> ops;  // op indices, in schedule order
  int32_t grid_h = 1, grid_w = 1;
  std::vector<int32_t> full_inputs;   // activations read whole
  int32_t full_output = -1;           // the segment's only output, written whole patch by patch
  std::vector<PatchBuffer> buffers;   // tensors inside the segment (and a streamed input)
  std::vector<int64_t> op_scratch;    // per op of `ops`: the most scratch one patch needs
  int64_t macs = 0;                   // over all patches, halos included
  std::vector<int64_t> op_macs;       // per op of `ops`, over all patches
  // Every activation the segment touches, and per patch (row-major over the grid) the
  // region of each it computes or reads: {row_begin, row_end, col_begin, col_end}
  // at regions[(patch * tensors.size() + i) * 4].
  std::vector<int32_t> tensors;
  std::vector<int32_t> regions;
};

// Throws std::invalid_argument when the ops cannot run on patches (not
// tileable, more than one tensor leaving the segment, a grid larger than the output).
// Without `record_regions`, `regions` stays empty (the search's cost model).
PatchRun run_patches(const graph::Graph& graph, const std::vector<int32_t>& ops, int32_t grid_h, int32_t grid_w,
                     bool stream_input, bool record_regions = true);
PatchRun run_patches(const graph::Graph& graph, const GraphFacts& facts, const std::vector<int32_t>& ops,
                     int32_t grid_h, int32_t grid_w, bool stream_input, bool record_regions);

// The region of `size` elements patch `index` of `parts` covers (near-equal parts).
Range patch_part(int32_t size, int32_t parts, int32_t index);

}  // namespace tinyarena::tiling
