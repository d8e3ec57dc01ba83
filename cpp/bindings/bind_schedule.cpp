#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "graph_handles.h"
#include "tinyarena/schedule/schedule.h"

namespace py = pybind11;

namespace tinyarena::bindings {

void bind_schedule(py::module_& m) {
  using schedule::ScheduleOptions;
  using schedule::ScheduleResult;
  py::class_<ScheduleOptions>(m, "ScheduleOptions")
      .def(py::init([](const liveness::LivenessOptions& liveness, int64_t alignment, const std::string& method,
                       int32_t exact_max_ops, int64_t max_states, double time_limit_seconds, int32_t beam_width) {
             return ScheduleOptions{liveness, alignment, schedule::parse_method(method), exact_max_ops, max_states,
                                    time_limit_seconds, beam_width};
           }),
           py::arg("liveness") = liveness::LivenessOptions{}, py::arg("alignment") = 16, py::arg("method") = "auto",
           py::arg("exact_max_ops") = ScheduleOptions{}.exact_max_ops,
           py::arg("max_states") = ScheduleOptions{}.max_states,
           py::arg("time_limit_seconds") = ScheduleOptions{}.time_limit_seconds,
           py::arg("beam_width") = ScheduleOptions{}.beam_width)
      .def_readonly("liveness", &ScheduleOptions::liveness)
      .def_readonly("alignment", &ScheduleOptions::alignment)
      .def_property_readonly("method", [](const ScheduleOptions& o) { return schedule::method_name(o.method); })
      .def_readonly("exact_max_ops", &ScheduleOptions::exact_max_ops)
      .def_readonly("max_states", &ScheduleOptions::max_states)
      .def_readonly("time_limit_seconds", &ScheduleOptions::time_limit_seconds)
      .def_readonly("beam_width", &ScheduleOptions::beam_width);
  py::class_<ScheduleResult>(m, "ScheduleResult", "An op order and its peak (allocation lower bound) against the file order's.")
      .def_property_readonly("order", [](const ScheduleResult& r) { return py::tuple(py::cast(r.order)); })
      .def_readonly("peak_bytes", &ScheduleResult::peak_bytes)
      .def_readonly("file_peak_bytes", &ScheduleResult::file_peak_bytes)
      .def_property_readonly("method", [](const ScheduleResult& r) { return schedule::method_name(r.method); })
      .def_readonly("proven_optimal", &ScheduleResult::proven_optimal)
      .def_readonly("states", &ScheduleResult::states)
      .def_readonly("seconds", &ScheduleResult::seconds)
      .def("__repr__", [](const ScheduleResult& r) {
        return "<ScheduleResult " + std::string(schedule::method_name(r.method)) + ": peak " +
               std::to_string(r.peak_bytes) + " B (file order " + std::to_string(r.file_peak_bytes) + " B)" +
               (r.proven_optimal ? ", optimal" : "") + ">";
      });
  m.def("find_schedule",
        [](const GraphPtr& graph, const ScheduleOptions& options) {
          py::gil_scoped_release release;
          return schedule::find_schedule(*graph, options);
        },
        py::arg("graph"), py::arg("options") = ScheduleOptions{});
  m.def("order_peak_bytes",
        [](const GraphPtr& graph, std::vector<int32_t> order, const liveness::LivenessOptions& liveness,
           int64_t alignment) { return schedule::order_peak_bytes(*graph, order, liveness, alignment); },
        py::arg("graph"), py::arg("order") = std::vector<int32_t>{}, py::arg("liveness") = liveness::LivenessOptions{},
        py::arg("alignment") = 16, "Allocation lower bound of an op order (empty = file order).");
}

}  // namespace tinyarena::bindings
