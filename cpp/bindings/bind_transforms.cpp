#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include "bindings.h"
#include "graph_handles.h"
#include "tinyarena/transforms/transforms.h"

namespace py = pybind11;

namespace tinyarena::bindings {

void bind_transforms(py::module_& m) {
  using transforms::Rewrite;
  py::class_<Rewrite>(m, "Rewrite", "One change a transform made: the op of its input graph and what happened.")
      .def_readonly("op", &Rewrite::op)
      .def_readonly("what", &Rewrite::what)
      .def("__repr__", [](const Rewrite& r) { return "<Rewrite op " + std::to_string(r.op) + ": " + r.what + ">"; });
  m.def("transform_names", &transforms::transform_names);
  m.def("apply_transform",
        [](const GraphPtr& graph, const std::string& name, const std::vector<int32_t>& only) {
          transforms::TransformResult result = transforms::apply_transform(*graph, name, only);
          return py::make_tuple(std::make_shared<graph::Graph>(std::move(result.graph)), result.rewrites);
        },
        py::arg("graph"), py::arg("name"), py::arg("only") = std::vector<int32_t>{},
        "(new graph, [Rewrite]) of the named transform, on the ops in `only` (empty: all); the input graph stays.");
}

}  // namespace tinyarena::bindings
