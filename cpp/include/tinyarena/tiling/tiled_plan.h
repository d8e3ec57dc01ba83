// A tiled schedule and its memory plan: the model's ops in schedule order,
// some runs of consecutive ops grouped into row-streamed segments. The
// segments' ring buffers and shared scratch are ordinary buffers (sizes and
// lifetimes) given to the same liveness report and allocators as any plan.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/liveness/liveness.h"
#include "tinyarena/plan/plan.h"
#include "tinyarena/tiling/patches.h"
#include "tinyarena/tiling/row_stream.h"

namespace tinyarena::tiling {

enum class Mode : uint8_t { Rows = 0, Patches = 1 };

// One segment: consecutive ops of the schedule and how they run.
struct Segment {
  std::vector<int32_t> ops;  // op indices, in schedule order
  Mode mode = Mode::Rows;
  int32_t stripe_rows = 1;                 // Rows: output rows per round
  int32_t patches_h = 2, patches_w = 2;    // Patches: the grid over the segment's output
};

struct TilingOptions {
  plan::PlanOptions plan;     // alignment, allocator, liveness flags, limit, schedule
  bool stream_input = false;  // pull the model input row by row (or patch by patch) when a segment reads it first
};

struct TiledPlan {
  plan::Plan plan;                   // buffers, allocation and per-op report of the tiled schedule
  std::vector<Segment> segments;
  std::vector<RowStream> streams;    // per segment (Rows mode), else empty
  std::vector<PatchRun> patch_runs;  // per segment (Patches mode), else empty
  int64_t macs = 0;                  // of the tiled schedule (patch halos recomputed)
  int64_t untiled_macs = 0;

  double mac_overhead() const { return untiled_macs ? static_cast<double>(macs) / untiled_macs : 1.0; }
};

// Throws std::invalid_argument when a segment's ops are not consecutive in
// the schedule, overlap another segment, or cannot be tiled.
TiledPlan make_tiled_plan(const graph::Graph& graph, const std::vector<Segment>& segments,
                          const TilingOptions& options = {});

}  // namespace tinyarena::tiling
