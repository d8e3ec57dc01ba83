// The shape half of the conv / depthwise / fully-connected params: every
// field the scratch sizes depend on, checked against the tensors' shapes,
// with no quantization read or checked (liveness plans scratch from shapes
// alone). The *_kernel() builders complete these with the quantization.
#pragma once

#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::op_params::detail {

ConvKernel conv_geometry(const graph::Graph& graph, const graph::Op& op);
DepthwiseKernel depthwise_geometry(const graph::Graph& graph, const graph::Op& op);
FullyConnectedKernel fully_connected_geometry(const graph::Graph& graph, const graph::Op& op);

}  // namespace tinyarena::op_params::detail
