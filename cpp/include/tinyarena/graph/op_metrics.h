// Per-op cost figures derived from the IR: multiply-accumulates and the
// flash bytes the op's constants take.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/graph/graph.h"

namespace tinyarena::graph {

struct OpMetrics {
  int64_t macs = 0;
  int64_t weight_bytes = 0;  // constant inputs other than the bias
  int64_t bias_bytes = 0;
  // Requantization tables the generated code keeps in flash: an int32
  // multiplier and an int32 shift per output channel (or one pair).
  int64_t scale_bytes = 0;

  int64_t flash_bytes() const { return weight_bytes + bias_bytes + scale_bytes; }
};

// Metrics of every op, in op order. A constant read by several ops counts
// at its first reader only, so the totals equal the model's flash use.
std::vector<OpMetrics> op_metrics(const Graph& graph);

// Multiply-accumulates of one op (convolutions, fully connected, matmul).
int64_t op_macs(const Graph& graph, const Op& op);

}  // namespace tinyarena::graph
