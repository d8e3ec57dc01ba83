#include <pybind11/stl.h>

#include "bindings.h"
#include "graph_handles.h"
#include "tinyarena/kernels/op_support.h"
#include "tinyarena/kernels/targets.h"

namespace py = pybind11;

namespace tinyarena::bindings {

void bind_kernels(py::module_& m) {
  m.def(
      "unsupported_ops",
      [](const GraphPtr& graph) { return kernels::unsupported_ops(*graph); },
      py::arg("graph"),
      "(op index, reason) of every op the kernel library cannot run, from the library's one op table.");
  py::class_<kernels::Target>(m, "Target", "A code generation target (the one table of kernels/targets.h).")
      .def_readonly("name", &kernels::Target::name)
      .def_property_readonly("simd", [](const kernels::Target& t) { return t.build == kernels::Build::Simd; })
      .def_readonly("gcc_flags", &kernels::Target::gcc_flags)
      .def_readonly("qemu_machine", &kernels::Target::qemu_machine)
      .def_readonly("board_script", &kernels::Target::board_script);
  m.def("targets", &kernels::targets, py::return_value_policy::reference,
        "Every code generation target, host first: name, simd build, gcc flags, QEMU machine, board script.");
}

}  // namespace tinyarena::bindings
