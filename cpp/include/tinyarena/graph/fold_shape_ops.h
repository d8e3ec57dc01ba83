// Compile-time shape computations folded into constants: SHAPE of a tensor
// (every shape in the IR is static), the shape vectors made from it (rank-1
// STRIDED_SLICE, PACK and CONCATENATION of constant int32 / int64 values) and
// FILL of constant dimensions and value become constant tensors, so they take
// no SRAM and need no kernel. A RESHAPE whose shape input is constant (or
// folded) then gets the output shape those values give, as TFLite's Prepare
// computes it (the file may store a placeholder for dimensions it computed at
// run time). The reader applies it to every graph it returns.
#pragma once

#include "tinyarena/graph/graph.h"

namespace tinyarena::graph {

// `graph` with each such op whose inputs are constant (or folded before it)
// replaced by a constant output: the values are appended to a copy of the
// model bytes, the ops dropped (the rest renumbered, links recomputed). An op
// writing a model output is kept, and a FILL of more than 1 MiB.
Graph fold_shape_ops(Graph graph);

}  // namespace tinyarena::graph
