#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "graph_handles.h"
#include "numpy_views.h"
#include "tinyarena/interchange/csv.h"
#include "tinyarena/interchange/normalize.h"
#include "tinyarena/interchange/offline_plan.h"
#include "tinyarena/plan/plan.h"

namespace py = pybind11;

namespace tinyarena::bindings {
namespace {

py::bytes as_bytes(const std::vector<uint8_t>& data) {
  return py::bytes(reinterpret_cast<const char*>(data.data()), data.size());
}

std::vector<uint8_t> from_bytes(const py::bytes& data) {
  const std::string_view view = data;
  return std::vector<uint8_t>(view.begin(), view.end());
}

}  // namespace

void bind_interchange(py::module_& m) {
  m.def(
      "parse_problem_csv",
      [](const std::string& text) {
        auto parsed = interchange::parse_problem_csv(text);
        return py::make_tuple(parsed.problem, readonly_array(parsed.offsets));
      },
      py::arg("text"),
      "Parse MiniMalloc CSV (id,lower,upper,size[,alignment][,offset]; half-open lifetimes) -> (Problem, offsets).");
  m.def(
      "write_problem_csv",
      [](const allocation::Problem& problem, const allocation::Solution* solution) {
        return interchange::write_problem_csv(problem, solution);
      },
      py::arg("problem"), py::arg("solution") = nullptr, "MiniMalloc CSV of a problem, with offsets if a solution is given.");
  m.def(
      "model_with_offline_plan",
      [](const GraphPtr& graph, const plan::Plan& plan) {
        return as_bytes(interchange::model_with_offline_plan(*graph, plan.liveness, plan.solution));
      },
      py::arg("graph"), py::arg("plan"), "The model's bytes with the plan as TFLM OfflineMemoryAllocation metadata.");
  m.def(
      "with_valid_quantized_dimensions",
      [](const py::bytes& model) {
        return as_bytes(interchange::with_valid_quantized_dimensions(from_bytes(model)));
      },
      py::arg("model"),
      "A copy of the model with every quantized_dimension outside its tensor's rank set to 0 (the TFLite "
      "interpreter refuses such files; person_detect.tflite has them on its biases).");
  m.def(
      "with_reference_op_versions",
      [](const py::bytes& model) { return as_bytes(interchange::with_reference_op_versions(from_bytes(model))); },
      py::arg("model"),
      "A copy of the model whose op versions the reference op resolver registers where it runs the same kernel "
      "(TILE version 3 -> 2).");
  m.def(
      "read_offline_plan", [](const py::bytes& model) { return interchange::read_offline_plan(from_bytes(model)); },
      py::arg("model"), "Tensor offsets of a model's OfflineMemoryAllocation metadata (empty if none).");
}

}  // namespace tinyarena::bindings
