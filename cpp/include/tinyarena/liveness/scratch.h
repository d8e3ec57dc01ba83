// Kernel scratch memory: what each kernel asks the planner for. The code
// generator uses the same figures, so scratch lives inside the planned arena.
#pragma once

#include <cstdint>

#include "tinyarena/graph/graph.h"

namespace tinyarena::liveness {

// Scratch bytes `op` needs when it runs out of place: im2col columns for a
// convolution whose kernel is larger than 1x1 or strided (two columns of
// kh*kw*in_c int16 values, as CMSIS-NN's convolve_s8 asks for).
int64_t kernel_scratch_bytes(const graph::Graph& graph, const graph::Op& op);

// Scratch for an in-place depthwise convolution: one input channel plane
// (in_h * in_w bytes), copied aside before its output channel overwrites it.
int64_t inplace_depthwise_scratch_bytes(const graph::Graph& graph, const graph::Op& op);

}  // namespace tinyarena::liveness
