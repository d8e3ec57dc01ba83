// Liveness: which activation buffers exist and over which steps of the
// schedule they live. Tensors that share memory form one buffer: views
// (RESHAPE, SQUEEZE, EXPAND_DIMS outputs alias their input), placed tensors
// (slices of a zero-copy concatenation or split, at an offset inside their
// base; see graph/storage.h) and, when enabled, in-place ops (an output written over
// an input that dies there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"

namespace tinyarena::liveness {

struct LivenessOptions {
  // Depthwise convolution (depth multiplier 1) writes over its input,
  // TinyEngine-style, using a one-plane scratch buffer.
  bool inplace_depthwise = true;
  // Elementwise ops write over a same-sized input that dies at the op; a
  // QUANTIZE float32 -> int8 writes into the first quarter of its input.
  bool inplace_elementwise = true;
  // Plan kernel scratch buffers: what each kernel of the library asks for
  // (column buffers, widened planes, the in-place depthwise plane).
  bool scratch = true;
  // A float32 model input that only QUANTIZE ops (or LSTMs with their input QUANTIZE folded in)
  // read, and a float32 model output that a DEQUANTIZE writes and no op reads, stay in the
  // caller's arrays (the invoke arguments): the conversion reads or writes them there, so they
  // take no arena bytes.
  bool caller_float_io = true;
  // Ops that never write over their input, whatever the flags above say
  // (e.g. ops a tiled schedule runs on stripes).
  std::vector<int32_t> not_inplace_ops;
};

enum class BufferKind { Activation, Scratch };

struct LiveBuffer {
  std::string name;
  BufferKind kind = BufferKind::Activation;
  int64_t size = 0;            // bytes, before any alignment rounding
  int32_t first = 0, last = 0; // inclusive steps
  std::vector<int32_t> tensors;  // activation tensors stored here, ascending
  int32_t op = -1;               // the op a scratch buffer (or a tensorless state buffer) serves
};

struct Liveness {
  std::vector<int32_t> order;          // op index at each step
  std::vector<LiveBuffer> buffers;     // activation buffers by first tensor, then scratch by step
  std::vector<int32_t> tensor_buffer;  // buffer of each tensor, -1 for constants and unused ones
  std::vector<int64_t> tensor_offset;  // bytes from its buffer's start (placed tensors), else 0
  std::vector<int32_t> inplace_ops;    // ops that write over their input, ascending
  std::vector<int32_t> caller_tensors; // model inputs/outputs left in the caller's arrays, ascending
};

// Elementwise ops that may write over a same-sized input dying at the op.
bool is_inplace_elementwise_op(int32_t opcode);
// QUANTIZE float32 -> int8: with its input dying at the op it runs in place
// (inplace_elementwise), its int8 output over the first quarter of the input.
bool is_inplace_conversion(const graph::Graph& graph, const graph::Op& op);

// The model inputs and outputs `caller_float_io` leaves in the caller's arrays, ascending.
std::vector<int32_t> caller_float_io_tensors(const graph::Graph& graph);

// The schedule is `order` (op indices, each once); empty means file order.
// Graph inputs live from step 0, graph outputs and variables to the last step.
// Throws UnsupportedError for an activation whose type has no fixed size.
Liveness analyze_liveness(const graph::Graph& graph, const LivenessOptions& options = {},
                          std::vector<int32_t> order = {});

}  // namespace tinyarena::liveness
