#include <pybind11/stl.h>

#include "bindings.h"
#include "graph_handles.h"
#include "tinyarena/op_params/op_support.h"
#include "tinyarena/op_params/targets.h"

namespace py = pybind11;

namespace tinyarena::bindings {

void bind_op_params(py::module_& m) {
  m.def(
      "unsupported_ops",
      [](const GraphPtr& graph) { return op_params::unsupported_ops(*graph); },
      py::arg("graph"),
      "(op index, reason) of every op the kernel library cannot run, from the library's one op table.");
  py::class_<op_params::Target>(m, "Target", "A code generation target (the one table of kernels/targets.h).")
      .def_readonly("name", &op_params::Target::name)
      .def_property_readonly("simd", [](const op_params::Target& t) { return t.build != op_params::Build::Portable; })
      .def_readonly("gcc_flags", &op_params::Target::gcc_flags)
      .def_readonly("qemu_machine", &op_params::Target::qemu_machine)
      .def_readonly("board_script", &op_params::Target::board_script);
  m.def("targets", &op_params::targets, py::return_value_policy::reference,
        "Every code generation target, host first: name, simd build, gcc flags, QEMU machine, board script.");
}

}  // namespace tinyarena::bindings
