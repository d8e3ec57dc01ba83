// Row streaming (a cascade, as Vela runs it): a segment of consecutive
// tileable ops produces its outputs a few rows at a time. Every tensor inside
// the segment lives in a ring of just the rows its consumers still need;
// nothing is recomputed. Tensors read or written across the segment's border
// stay whole; the model input may instead be pulled row by row (a camera line
// buffer). The schedule of kernel calls is fixed here, at compile time, so
// the generated code only replays it.
//
// Column strips: a wide map's rings can be narrowed by splitting the segment's
// output into n column strips and replaying the whole row schedule once per
// strip; each ring then holds the widest strip's columns (its halo included),
// and the columns neighbouring strips share are computed twice.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/tiling/op_facts.h"
#include "tinyarena/tiling/receptive_field.h"

namespace tinyarena::tiling {

struct StreamOptions {
  int32_t stripe_rows = 1;    // rows of each segment output produced per round
  bool stream_input = false;  // pull the model input through a row callback when only the segment reads it
  bool record_steps = true;   // false: ring sizes, MACs and scratch only (the search's cost model)
  int32_t column_strips = 1;  // > 1: the output split into column strips, the steps replayed per strip
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
const char* step_kind_name(StepKind kind);  // "run", "load", "shift"

struct StreamStep {
  StepKind kind = StepKind::Run;
  int32_t target = 0;
  int32_t begin = 0, end = 0;
};

// A whole output a segment may write over a tensor it reads, from that tensor's first byte on:
// every write lands on bytes of `input` that no later step reads (an elementwise op may write
// the very elements it reads, as in place). Only worth taking when `input` dies in the segment.
struct Overwrite {
  int32_t output = -1, input = -1;
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
  std::vector<Overwrite> overwrites;  // every such pair over a tensor the segment reads (its reads only)
                                      // (none with column strips: each strip reads its inputs anew)
  int32_t column_strips = 1;          // strips the steps are replayed for (rings sized for the widest)
  std::vector<int32_t> strip_tensors;  // column_strips > 1: every activation the segment touches
  std::vector<int32_t> strip_columns;  // per strip, per strip_tensors entry, its columns [begin, end)
                                       // at strip_columns[(strip * strip_tensors.size() + i) * 2]

  int64_t ring_bytes() const;
  // The ring of `tensor`, or -1.
  int32_t ring_of(int32_t tensor) const;
};

// The columns of every activation of a segment when its output is split into `strips` column
// strips (a 1 x strips patch grid): per strip its columns, per tensor the widest strip's and the
// sum over strips (what the strips compute). `load_ops` (boundary ops a ring's load runs, see
// loaded_ops) run no kernel: the strips load their tensors' columns. Throws
// std::invalid_argument when the ops cannot be split (an op that runs only on whole rows, or
// more than one tensor leaving the segment).
// A tensor's columns, like its ring, depend only on the ops after it: the split of a longer run
// ending with the same op holds them for every segment it covers.
struct ColumnSplit {
  int32_t strips = 1;
  std::vector<int32_t> tensors;  // as PatchRun::tensors
  std::vector<int32_t> columns;  // per strip, per tensor: [begin, end), as RowStream::strip_columns
  std::vector<int32_t> widest, total;  // per tensor
  std::vector<std::pair<int32_t, int32_t>> by_tensor;  // (tensor, its entry), ascending

  // The entry of `tensor`, or -1.
  int32_t entry(int32_t tensor) const;

  // Bytes of one row of `tensor` held for a strip (the widest), or of the whole row when absent.
  int64_t row_bytes(const graph::Graph& graph, int32_t tensor) const;
  // An op's MACs over all strips, from its MACs over whole rows.
  int64_t macs(const graph::Graph& graph, int32_t op, int64_t whole_row_macs) const;
  // An op's kernel scratch on the strips, from its scratch over whole rows: the largest over the
  // strips' widths of its output and calls of 1 to `stripe_rows` rows (a strip's call runs as an
  // image of the strip's width, see codegen/lower_patches.cpp).
  int64_t scratch(const graph::Graph& graph, const GraphFacts& facts, int32_t op, int32_t stripe_rows,
                  int64_t whole_row_scratch) const;
};
ColumnSplit split_columns(const graph::Graph& graph, const GraphFacts& facts, const std::vector<int32_t>& ops,
                          int32_t strips, bool stream_input, const std::vector<int32_t>& load_ops = {});
// The boundary ops the loads of `stream`'s rings run (ascending).
std::vector<int32_t> loaded_ops(const graph::Graph& graph, const RowStream& stream);

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
