// Row streaming (a cascade, as Vela runs it): a segment of consecutive
// tileable ops produces its outputs a few rows at a time. Every tensor inside
// the segment lives in a ring of just the rows its consumers still need;
// nothing is recomputed. Tensors read or written across the segment's border
// stay whole; the model input may instead be pulled row by row (a camera line
// buffer). The schedule of kernel calls is fixed here, at compile time, so
// the generated code only replays it.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/tiling/op_facts.h"
#include "tinyarena/tiling/receptive_field.h"

namespace tinyarena::tiling {

struct StreamOptions {
  int32_t stripe_rows = 1;    // rows of each segment output produced per round
  bool stream_input = false;  // pull the model input through a row callback when only the segment reads it
  bool record_steps = true;   // false: ring sizes, MACs and scratch only (the search's cost model)
};

// A window of consecutive rows of one tensor, kept contiguous at the start of
// its buffer (row r at (r - first_row) * row_bytes), so kernels address it
// through a virtual row-0 base.
struct Ring {
  int32_t tensor = -1;
  int32_t rows = 0;  // capacity: the most rows ever held at once
  int64_t row_bytes = 0;
  int32_t source = -1;  // a model input whose boundary ops (a TRANSPOSE from NCHW to NHWC, a
                        // QUANTIZE of a float input, or both) the load runs: the ring holds the
                        // output of the last (load_ops); -1 for a plain ring
  int64_t bytes() const { return rows * row_bytes; }
};

enum class StepKind : uint8_t {
  Run = 0,    // op `target` computes its output rows [begin, end) (a row reduction: sums input rows
              // [begin, end), and writes its output when end is the input height)
  Load = 1,   // ring `target` (the streamed model input, or its transpose to NHWC) receives rows [begin, end)
  Shift = 2,  // ring `target` drops its rows below `begin`, moving the rest to the buffer's start
};

struct StreamStep {
  StepKind kind = StepKind::Run;
  int32_t target = 0;
  int32_t begin = 0, end = 0;
};

struct RowStream {
  std::vector<int32_t> ops;           // op indices, in schedule order
  std::vector<int32_t> full_inputs;   // activations read whole (produced before the segment)
  std::vector<int32_t> full_outputs;  // tensors written whole (read after the segment, or model outputs)
  std::vector<Ring> rings;            // tensors living only inside the segment (and a streamed input)
  std::vector<StreamStep> steps;      // the calls, in order
  int64_t scratch_bytes = 0;          // the largest kernel scratch of any call (one shared buffer)
  int64_t macs = 0;                   // multiply-accumulates of all calls
  std::vector<int64_t> op_macs;       // per op of `ops` (rows nobody reads are never computed)
  std::vector<int64_t> op_scratch;    // per op of `ops`: its largest call's kernel scratch
  std::vector<int64_t> op_state;      // per op of `ops`: bytes it keeps across calls (a row reduction's sums)

  int64_t ring_bytes() const;
  // The ring of `tensor`, or -1.
  int32_t ring_of(int32_t tensor) const;
};

// The boundary ops a ring's load runs, from its source input to its tensor (empty without a source).
std::vector<int32_t> load_ops(const graph::Graph& graph, const Ring& ring);
// The tensors a ring stands for: its own, and with a source the input and the loaded chain's (ascending).
std::vector<int32_t> load_tensors(const graph::Graph& graph, const Ring& ring);

// Streams `ops` (op indices in schedule order; every op tileable, the
// segment's internal tensors produced before they are read). Throws
// std::invalid_argument naming the op that cannot be streamed. `facts` (of
// this graph) saves recomputing per-op facts across many calls.
RowStream stream_rows(const graph::Graph& graph, const std::vector<int32_t>& ops, const StreamOptions& options = {});
RowStream stream_rows(const graph::Graph& graph, const GraphFacts& facts, const std::vector<int32_t>& ops,
                      const StreamOptions& options);

}  // namespace tinyarena::tiling
