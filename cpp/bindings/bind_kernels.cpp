#include <pybind11/stl.h>

#include "bindings.h"
#include "graph_handles.h"
#include "tinyarena/kernels/op_support.h"

namespace py = pybind11;

namespace tinyarena::bindings {

void bind_kernels(py::module_& m) {
  m.def(
      "unsupported_ops",
      [](const GraphPtr& graph) { return kernels::unsupported_ops(*graph); },
      py::arg("graph"),
      "(op index, reason) of every op the kernel library cannot run, from the library's one op table.");
}

}  // namespace tinyarena::bindings
