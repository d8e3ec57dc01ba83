#include "rebuild.h"

#include <algorithm>
#include <string>

namespace tinyarena::transforms::detail {

graph::Graph without_ops(graph::Graph graph, const std::vector<bool>& drop) {
  std::vector<graph::Op> kept;
  for (graph::Op& op : graph.ops) {
    if (drop[op.index]) continue;
    op.index = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(op));
  }
  graph.ops = std::move(kept);
  return graph::link_graph(std::move(graph));
}

std::string op_label(const graph::Op& op) { return "op " + std::to_string(op.index) + " (" + op.type + ")"; }

bool selected(const std::vector<int32_t>& only, int32_t op) {
  return only.empty() || std::find(only.begin(), only.end(), op) != only.end();
}

bool same_quantization(const graph::Tensor& a, const graph::Tensor& b) {
  const graph::Quantization &qa = a.quantization, &qb = b.quantization;
  const float sa = qa.scale.empty() ? 0.0f : qa.scale[0], sb = qb.scale.empty() ? 0.0f : qb.scale[0];
  const int64_t za = qa.zero_point.empty() ? 0 : qa.zero_point[0], zb = qb.zero_point.empty() ? 0 : qb.zero_point[0];
  return a.dtype == b.dtype && sa == sb && za == zb;
}

}  // namespace tinyarena::transforms::detail
