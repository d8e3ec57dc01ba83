#include <pybind11/stl.h>

#include "bindings.h"
#include "graph_handles.h"
#include "tinyarena/op_params/cost_model.h"
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
  py::class_<op_params::CostTerms>(m, "CostTerms", "The quantities an op's kernel loops over (op_params/cost_model.h).")
      .def_readonly("macs", &op_params::CostTerms::macs)
      .def_readonly("live_macs", &op_params::CostTerms::live_macs)
      .def_readonly("clamped_macs", &op_params::CostTerms::clamped_macs)
      .def_readonly("inputs", &op_params::CostTerms::inputs)
      .def_readonly("outputs", &op_params::CostTerms::outputs)
      .def_readonly("pixels", &op_params::CostTerms::pixels)
      .def_readonly("calls", &op_params::CostTerms::calls);
  py::class_<op_params::CallTerms>(m, "CallTerms",
                                   "What a tiled op's kernel calls beyond the first repeat (op_params/cost_model.h).")
      .def_readonly("calls", &op_params::CallTerms::calls)
      .def_readonly("channels", &op_params::CallTerms::channels)
      .def_readonly("window", &op_params::CallTerms::window)
      .def_readonly("leftover_macs", &op_params::CallTerms::leftover_macs)
      .def_readonly("strip_macs", &op_params::CallTerms::strip_macs)
      .def_readonly("strip_channels", &op_params::CallTerms::strip_channels);
  m.def(
      "call_terms",
      [](const GraphPtr& graph, int32_t op, double calls, double width_share, double work_scale) {
        return op_params::call_terms(*graph, graph->ops.at(op), calls, width_share, work_scale);
      },
      py::arg("graph"), py::arg("op"), py::arg("calls"), py::arg("width_share") = 1.0, py::arg("work_scale") = 1.0,
      "The call terms of op `op` run as `calls` kernel calls, each over `width_share` of the output's width,\n"
      "doing `work_scale` times its untiled MACs.");
  m.def(
      "cost_kernel", [](const GraphPtr& graph, int32_t op) { return op_params::cost_kernel(*graph, graph->ops.at(op)); },
      py::arg("graph"), py::arg("op"), "The kernel variant whose cost-model coefficients op `op` uses.");
  m.def(
      "cost_terms", [](const GraphPtr& graph, int32_t op) { return op_params::cost_terms(*graph, graph->ops.at(op)); },
      py::arg("graph"), py::arg("op"), "The cost model's terms of op `op`.");
  m.def(
      "predicted_instructions",
      [](const GraphPtr& graph, int32_t op, const std::string& target) {
        return op_params::predicted_instructions(*graph, graph->ops.at(op), op_params::target_build(target));
      },
      py::arg("graph"), py::arg("op"), py::arg("target"),
      "Cortex-M instructions of op `op` in `target`'s build, predicted by the cost model.");
  m.def("targets", &op_params::targets, py::return_value_policy::reference,
        "Every code generation target, host first: name, simd build, gcc flags, QEMU machine, board script.");
}

}  // namespace tinyarena::bindings
