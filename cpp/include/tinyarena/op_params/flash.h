// Flash the generated code spends on an op, per build: the constant arrays its
// kernel call carries (weights in the build's layout, biases, requantization
// records, tables) and the kernel library function it links. The code
// generator emits exactly these arrays; the planner reports them before any
// code is generated.
#pragma once

#include <cstdint>
#include <string>

#include "tinyarena/graph/graph.h"
#include "tinyarena/op_params/targets.h"

namespace tinyarena::op_params {

// Build and target_build: tinyarena/op_params/targets.h.

struct ConstantBytes {
  int64_t weights = 0;  // weights in the build's layout, and constant data inputs
  int64_t biases = 0;
  int64_t requant = 0;  // per-channel multipliers and shifts, CONV_2D records, FULLY_CONNECTED double scales
  int64_t tables = 0;   // LOGISTIC / TANH lookup tables, CONCATENATION / SPLIT copy sizes
  int64_t total() const { return weights + biases + requant + tables; }
};

// The constant arrays of the op's kernel call in `build`. Ops that emit no call
// (views, elided ops) have none. An op the library cannot run gets its raw
// constant tensors (the code generator then reports why it cannot run).
ConstantBytes constant_bytes(const graph::Graph& graph, const graph::Op& op, Build build);

// The library function the op's call runs (e.g. "ta_conv_s8"; `in_place`: the
// in-place depthwise kernel) and its source file; empty for ops that emit no call.
struct KernelFunction {
  std::string function, source;
};
KernelFunction kernel_function(const graph::Graph& graph, const graph::Op& op, bool in_place);

// Code bytes of a kernel function, and of all the functions of a source file
// linked together: measured with arm-none-eabi-gcc as the generated Makefile
// builds for Cortex-M4 (-O2, --gc-sections; libc and libgcc helpers not
// counted) by tools/kernel_code_bytes.py. 0 for unknown names.
int64_t kernel_code_bytes(const std::string& function);
int64_t kernel_source_code_bytes(const std::string& source);

}  // namespace tinyarena::op_params
