#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "graph_handles.h"
#include "numpy_views.h"
#include "tinyarena/liveness/liveness.h"

namespace py = pybind11;

namespace tinyarena::bindings {

void bind_liveness(py::module_& m) {
  using liveness::LiveBuffer;
  using liveness::Liveness;
  using liveness::LivenessOptions;
  py::class_<LivenessOptions>(m, "LivenessOptions")
      .def(py::init([](bool inplace_depthwise, bool inplace_elementwise, bool scratch, bool caller_float_io) {
             return LivenessOptions{inplace_depthwise, inplace_elementwise, scratch, caller_float_io};
           }),
           py::arg("inplace_depthwise") = true, py::arg("inplace_elementwise") = true, py::arg("scratch") = true,
           py::arg("caller_float_io") = true)
      .def_readonly("inplace_depthwise", &LivenessOptions::inplace_depthwise)
      .def_readonly("inplace_elementwise", &LivenessOptions::inplace_elementwise)
      .def_readonly("scratch", &LivenessOptions::scratch)
      .def_readonly("caller_float_io", &LivenessOptions::caller_float_io);
  py::class_<LiveBuffer>(m, "LiveBuffer", "An activation or scratch buffer and its inclusive lifetime in steps.")
      .def_readonly("name", &LiveBuffer::name)
      .def_property_readonly("kind", [](const LiveBuffer& b) {
        return b.kind == liveness::BufferKind::Scratch ? "scratch" : "activation";
      })
      .def_readonly("size", &LiveBuffer::size)
      .def_readonly("first", &LiveBuffer::first)
      .def_readonly("last", &LiveBuffer::last)
      .def_property_readonly("tensors", [](const LiveBuffer& b) { return py::tuple(py::cast(b.tensors)); })
      .def_readonly("op", &LiveBuffer::op)
      .def("__repr__", [](const LiveBuffer& b) {
        return "<LiveBuffer '" + b.name + "' " + std::to_string(b.size) + " B [" + std::to_string(b.first) + ", " +
               std::to_string(b.last) + "]>";
      });
  py::class_<Liveness>(m, "Liveness")
      .def_readonly("buffers", &Liveness::buffers)
      .def_property_readonly("order", [](const Liveness& l) { return readonly_array(l.order); })
      .def_property_readonly("tensor_buffer", [](const Liveness& l) { return readonly_array(l.tensor_buffer); },
                             "Buffer index of each tensor (-1 for constants and unused tensors).")
      .def_property_readonly("tensor_offset", [](const Liveness& l) { return readonly_array(l.tensor_offset); },
                             "Bytes from each tensor's buffer start to the tensor (placed slices), else 0.")
      .def_property_readonly("inplace_ops", [](const Liveness& l) { return py::tuple(py::cast(l.inplace_ops)); })
      .def_property_readonly("caller_tensors", [](const Liveness& l) { return py::tuple(py::cast(l.caller_tensors)); },
                             "Model inputs/outputs left in the caller's arrays (float I/O read by QUANTIZE, "
                             "written by DEQUANTIZE): no buffer.")
      .def("__repr__", [](const Liveness& l) {
        return "<Liveness " + std::to_string(l.buffers.size()) + " buffers over " + std::to_string(l.order.size()) +
               " steps, " + std::to_string(l.inplace_ops.size()) + " in-place ops>";
      });
  m.def("analyze_liveness",
        [](const GraphPtr& graph, const LivenessOptions& options, std::vector<int32_t> order) {
          return liveness::analyze_liveness(*graph, options, std::move(order));
        },
        py::arg("graph"), py::arg("options") = LivenessOptions{}, py::arg("order") = std::vector<int32_t>{},
        "Buffers and their inclusive [first, last] step intervals for a schedule (default: file order).");
}

}  // namespace tinyarena::bindings
