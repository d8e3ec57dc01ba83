// A tiled schedule and its memory plan: the model's ops in schedule order,
// some runs of consecutive ops grouped into row-streamed segments. The
// segments' ring buffers and shared scratch are ordinary buffers (sizes and
// lifetimes) given to the same liveness report and allocators as any plan.
// With in-place ops allowed (LivenessOptions::inplace_elementwise), a row
// segment writes a whole output over a whole input dying in it when its
// schedule never overwrites a byte before its last read (RowStream::overwrites):
// the two share one buffer, as an in-place op's tensors do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/liveness/liveness.h"
#include "tinyarena/op_params/targets.h"
#include "tinyarena/plan/plan.h"
#include "tinyarena/tiling/patches.h"
#include "tinyarena/tiling/row_stream.h"

namespace tinyarena::tiling {

enum class Mode : uint8_t { Rows = 0, Patches = 1 };
Mode parse_mode(const std::string& name);  // "rows" or "patches"; else std::invalid_argument

// One segment: consecutive ops of the schedule and how they run.
struct Segment {
  std::vector<int32_t> ops;  // op indices, in schedule order
  Mode mode = Mode::Rows;
  int32_t stripe_rows = 1;                 // Rows: output rows per round
  int32_t patches_h = 2, patches_w = 2;    // Patches: the grid over the segment's output
  int32_t column_strips = 1;               // Rows: column strips the rounds run over (halos recomputed)

  bool operator==(const Segment& other) const {
    return ops == other.ops && mode == other.mode && stripe_rows == other.stripe_rows &&
           patches_h == other.patches_h && patches_w == other.patches_w && column_strips == other.column_strips;
  }
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

  // Cortex-M instructions predicted by the cost model (op_params/cost_model.h) for the untiled
  // schedule; plan.predicted_instructions is the tiled one's (each segment op as its calls: one
  // per stripe and column strip, or per patch, with its recomputed halos).
  int64_t untiled_predicted_instructions = 0;

  double mac_overhead() const { return untiled_macs ? static_cast<double>(macs) / untiled_macs : 1.0; }
  double latency_overhead() const {
    return untiled_predicted_instructions ? static_cast<double>(plan.predicted_instructions) / untiled_predicted_instructions
                                          : 1.0;
  }
};

// The overwrites a row segment over steps [first, last] of `base` takes (with in-place ops
// allowed): each whole output written over a whole input that dies in the segment (its buffer
// born before the segment and ending in it), the output's buffer starting with it and, unless
// `smaller_outputs`, at least as large (a smaller one keeps the input's larger buffer alive until
// the output dies); the largest saving first, each tensor in one pair at most. `took_smaller`, when
// given, tells whether a pair with a smaller output was chosen (if not, the pairs are those
// without `smaller_outputs`).
std::vector<Overwrite> segment_overwrites(const liveness::Liveness& base, const RowStream& stream, int32_t first,
                                          int32_t last, bool smaller_outputs = false, bool* took_smaller = nullptr);

// The kernel calls op `op` of a row stream makes: its run steps (at least 1) on each of `column_strips`.
double stream_calls(const RowStream& stream, int32_t op, int32_t column_strips);

// Predicted instructions of `op` run in a segment (op_params/cost_model.h): `calls` kernel calls,
// each over `width_share` of the output's width (1 / column strips, 1 / patch grid columns),
// doing `tiled_macs` MACs in all (the untiled op's work scaled by tiled / untiled MACs).
int64_t segment_op_instructions(const graph::Graph& graph, int32_t op, double calls, int64_t tiled_macs,
                                double width_share, op_params::Build build);

// Row segments take their overwrites over smaller outputs too where that lowers the plan's peak
// (every segment both ways at once: the lower of the two plans).
// Throws std::invalid_argument when a segment's ops are not consecutive in
// the schedule, overlap another segment, or cannot be tiled.
TiledPlan make_tiled_plan(const graph::Graph& graph, const std::vector<Segment>& segments,
                          const TilingOptions& options = {});

}  // namespace tinyarena::tiling
