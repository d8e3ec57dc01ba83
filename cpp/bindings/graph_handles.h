// Python handles on one tensor or op of a shared, immutable Graph: cheap to
// create, keep the graph alive, expose fields read-only.
#pragma once

#include <memory>

#include "tinyarena/graph/graph.h"

namespace tinyarena::bindings {

using GraphPtr = std::shared_ptr<graph::Graph>;  // never modified after reading

struct TensorHandle {
  GraphPtr graph;
  int32_t index;
  const graph::Tensor& get() const { return graph->tensors[index]; }
};

struct OpHandle {
  GraphPtr graph;
  int32_t index;
  const graph::Op& get() const { return graph->ops[index]; }
};

}  // namespace tinyarena::bindings
