// Shared by the rewrites: a graph without some of its ops, relinked.
#pragma once

#include <vector>

#include "tinyarena/graph/graph.h"

namespace tinyarena::transforms::detail {

// `graph` without the ops marked in `drop`; the others keep their order and
// are renumbered, producer/consumer links recomputed.
graph::Graph without_ops(graph::Graph graph, const std::vector<bool>& drop);

// "op 7 (DEPTHWISE_CONV_2D)".
std::string op_label(const graph::Op& op);

// Same scale and zero point (per-tensor view: the first of each).
bool same_quantization(const graph::Tensor& a, const graph::Tensor& b);

}  // namespace tinyarena::transforms::detail
