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
  m.def("io_boundary",
        [](const GraphPtr& graph, bool int8_io, bool nhwc_input) {
          transforms::TransformResult result = transforms::io_boundary(*graph, {int8_io, nhwc_input});
          return py::make_tuple(std::make_shared<graph::Graph>(std::move(result.graph)), result.rewrites);
        },
        py::arg("graph"), py::arg("int8_io"), py::arg("nhwc_input"),
        "(new graph, [Rewrite]) without the boundary ops the flags name (input QUANTIZE and output DEQUANTIZE, "
        "input TRANSPOSE NCHW->NHWC); the input graph stays.");
}

}  // namespace tinyarena::bindings
