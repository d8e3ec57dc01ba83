// The transforms stage: graph rewrites that lower the memory a model needs
// before it is scheduled and planned. Each takes a graph and returns a new
// one plus a record of what it changed; the input graph is never modified.
// Both rewrites keep the model's outputs bit for bit:
//   fold_pads  a PAD in front of convolutions becomes their explicit padding
//   zero_copy  concatenations and contiguous splits stop copying: tensors are
//              placed inside one another (graph::Placement) and the op is elided
// io_boundary is no such rewrite: it changes the model's interface (int8 I/O,
// NHWC input) as the user asks, before anything is planned.
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
// A STRIDED_SLICE that takes the last step of a one-batch
// UNIDIRECTIONAL_SEQUENCE_LSTM's sequence output (its only reader, not a graph
// output) goes instead: the LSTM writes only that step, into the slice's
// output, and the sequence is never stored (ops after it move down one index).
// A QUANTIZE (float32 -> int8) whose only reader is such an LSTM's input goes
// too: the LSTM reads the float sequence and quantizes one step's row at a
// time into its scratch (the int8 tensor stays as its last intermediate, the
// carrier of the input's scale and zero point).
// `only`: consider just these ops (empty = all).
TransformResult zero_copy(const graph::Graph& graph, const std::vector<int32_t>& only = {});

// The model's interface, chosen by the user (not kept or dropped by the peak
// as the rewrites above): which boundary ops io_boundary removes.
struct IoBoundaryOptions {
  bool int8_io = false;     // drop the QUANTIZE (float32 -> int8) of each input and the
                            // DEQUANTIZE (int8 -> float32) of each output
  bool nhwc_input = false;  // drop the TRANSPOSE (perm [0, 2, 3, 1], NCHW -> NHWC) of each input
};

// Boundary ops at the graph's edges go; the tensors they produced (inputs) or
// read (outputs) become the graph's inputs and outputs, in the same positions.
// An input op goes when it is its input's only reader, an output DEQUANTIZE
// when its int8 input is no other input or output; at an input the rewrite
// repeats, so a QUANTIZE and a TRANSPOSE in either order both go. The int8
// tensors keep their scale and zero point (the generated model.h states them).
// Throws UnsupportedError when int8_io leaves a float32 input or output.
TransformResult io_boundary(const graph::Graph& graph, const IoBoundaryOptions& options);

// "fold_pads", "zero_copy": the rewrites in the order a pipeline applies them.
std::vector<std::string> transform_names();
// Throws std::invalid_argument for an unknown name.
TransformResult apply_transform(const graph::Graph& graph, const std::string& name,
                                const std::vector<int32_t>& only = {});

}  // namespace tinyarena::transforms
