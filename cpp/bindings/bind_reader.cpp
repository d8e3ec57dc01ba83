#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "graph_handles.h"
#include "tinyarena/reader/tflite_reader.h"

namespace py = pybind11;

namespace tinyarena::bindings {

void bind_reader(py::module_& m) {
  m.def(
      "read_tflite",
      [](py::bytes data) {
        const std::string_view view = data;
        std::vector<uint8_t> bytes(view.begin(), view.end());
        py::gil_scoped_release release;
        return GraphPtr(std::make_shared<graph::Graph>(reader::read_tflite(std::move(bytes))));
      },
      py::arg("data"), "Read a .tflite flatbuffer (bytes) into a Graph; raises ModelError if malformed.");
  m.def(
      "read_tflite_file",
      [](const std::string& path) {
        py::gil_scoped_release release;
        return GraphPtr(std::make_shared<graph::Graph>(reader::read_tflite_file(path)));
      },
      py::arg("path"), "Read a .tflite file into a Graph; raises ModelError if malformed.");
}

}  // namespace tinyarena::bindings
