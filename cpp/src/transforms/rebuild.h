// Shared by the rewrites: a graph without some of its ops, relinked, and small checks.
#pragma once

#include <optional>
#include <vector>

#include "tinyarena/common/errors.h"
#include "tinyarena/graph/graph.h"

namespace tinyarena::transforms::detail {

// `graph` without the ops marked in `drop`; the others keep their order and
// are renumbered, producer/consumer links recomputed.
graph::Graph without_ops(graph::Graph graph, const std::vector<bool>& drop);

// "op 7 (DEPTHWISE_CONV_2D)".
std::string op_label(const graph::Op& op);

// What `derive()` (a kernel params builder) returns, or nullopt when the
// library cannot run the op: a rewrite then leaves it as it is.
template <typename Derive>
auto kernel_params_or_nothing(Derive derive) -> std::optional<decltype(derive())> {
  try {
    return derive();
  } catch (const UnsupportedError&) {
    return std::nullopt;
  }
}

// `op` is among `only` (or `only` is empty: every op is).
bool selected(const std::vector<int32_t>& only, int32_t op);

// Same scale and zero point (per-tensor view: the first of each).
bool same_quantization(const graph::Tensor& a, const graph::Tensor& b);

}  // namespace tinyarena::transforms::detail
