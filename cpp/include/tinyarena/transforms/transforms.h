// The transforms stage: graph rewrites that lower the memory a model needs
// before it is scheduled and planned. Each takes a graph and returns a new
// one plus a record of what it changed; the input graph is never modified.
// Both rewrites keep the model's outputs bit for bit:
//   fold_pads  a PAD in front of convolutions becomes their explicit padding
//   zero_copy  concatenations and contiguous splits stop copying: tensors are
//              placed inside one another (graph::Placement) and the op is elided
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"

namespace tinyarena::transforms {

struct Rewrite {
  int32_t op = -1;   // the op of the input graph it removed or elided
  std::string what;  // e.g. "PAD folded into op 7 (DEPTHWISE_CONV_2D)"
};

struct TransformResult {
  graph::Graph graph;
  std::vector<Rewrite> rewrites;  // in op order; empty when nothing applied
};

// PAD / PADV2 on an int8 NHWC tensor, padding height and width only with the
// input's zero point (same quantization in and out), whose every reader takes
// it as input 0 and is a CONV_2D or DEPTHWISE_CONV_2D -- or a MAX_POOL_2D when
// the pad value is -128 and every window keeps an input position -- becomes
// explicit padding of those readers (their own SAME padding added); the PAD op
// goes (ops after it move down one index). AVERAGE_POOL_2D never takes a PAD:
// TFLite leaves padded positions out of the average, a PAD counts them.
// `only`: rewrite just these ops of the input graph (PADs here; empty = all).
TransformResult fold_pads(const graph::Graph& graph, const std::vector<int32_t>& only = {});

// CONCATENATION whose inputs can be written into their slice of its output,
// and SPLIT / STRIDED_SLICE taking contiguous slices of their input, become
// elided ops: the slices are placed inside the big tensor. A concatenation
// needs equal quantization on every input and the output, and either slices
// that are contiguous (every dimension before the axis is 1), or channel
// slices of one NHWC image, each written by a CONV_2D, DEPTHWISE_CONV_2D,
// pool or int8 elementwise op (RELU*, QUANTIZE, LOGISTIC, TANH, HARD_SWISH)
// and read by nothing else. No tensor is placed twice; constants never.
// `only`: consider just these ops (empty = all).
TransformResult zero_copy(const graph::Graph& graph, const std::vector<int32_t>& only = {});

// "fold_pads", "zero_copy": the rewrites in the order a pipeline applies them.
std::vector<std::string> transform_names();
// Throws std::invalid_argument for an unknown name.
TransformResult apply_transform(const graph::Graph& graph, const std::string& name,
                                const std::vector<int32_t>& only = {});

}  // namespace tinyarena::transforms
