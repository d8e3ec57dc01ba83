#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "graph_handles.h"
#include "tinyarena/codegen/emit.h"
#include "tinyarena/codegen/lowering.h"
#include "tinyarena/codegen/training_lowering.h"

namespace py = pybind11;

namespace tinyarena::bindings {

void bind_codegen(py::module_& m) {
  using codegen::KernelCall;
  using codegen::Program;
  py::class_<KernelCall>(m, "KernelCall", "One op lowered to a kernel library call.")
      .def_readonly("op_index", &KernelCall::op_index)
      .def_readonly("op_type", &KernelCall::op_type)
      .def_readonly("kernel_source", &KernelCall::kernel_source)
      .def_readonly("params_type", &KernelCall::params_type)
      .def_readonly("call", &KernelCall::call)
      .def_property_readonly("const_bytes", [](const KernelCall& c) {
        size_t bytes = 0;
        for (const auto& a : c.arrays) bytes += a.bytes.size();
        return bytes;
      });
  py::class_<codegen::Arena>(m, "Arena", "One memory's arena: a C array in linker section .tinyarena.<memory>.")
      .def_readonly("memory", &codegen::Arena::memory)
      .def_readonly("symbol", &codegen::Arena::symbol)
      .def_readonly("bytes", &codegen::Arena::bytes)
      .def_readonly("alignment", &codegen::Arena::alignment)
      .def_readonly("base_address", &codegen::Arena::base_address);
  py::class_<Program>(m, "Program", "A planned model lowered to kernel calls, ready to emit as C.")
      .def_readonly("name", &Program::name)
      .def_readonly("arena_bytes", &Program::arena_bytes)
      .def_readonly("arenas", &Program::arenas)
      .def("const_array_bytes", &codegen::const_array_bytes, py::arg("target"),
           "Bytes of constant arrays the build of `target` (a name of tinyarena.codegen.TARGETS) holds.")
      .def_readonly("calls", &Program::calls)
      .def_property_readonly("kernel_sources", [](const Program& p) {
        const auto used = codegen::kernel_sources_used(p);
        return std::vector<std::string>(used.begin(), used.end());
      })
      .def("__repr__", [](const Program& p) {
        return "<Program " + p.name + ": " + std::to_string(p.calls.size()) + " kernel calls, arena " +
               std::to_string(p.arena_bytes) + " B>";
      });
  m.def(
      "lower_program",
      [](const GraphPtr& graph, const plan::Plan& plan, const std::string& name) {
        return codegen::lower_program(*graph, plan, name);
      },
      py::arg("graph"), py::arg("plan"), py::arg("name"),
      "Lower a planned graph to kernel calls; raises UnsupportedError naming an op the library lacks.");
  m.def(
      "lower_program",
      [](const GraphPtr& graph, const plan::Plan& plan, const std::string& name,
         const std::vector<allocation::Memory>& memories, const allocation::HierarchySolution& placement) {
        return codegen::lower_program(*graph, plan, name, memories, placement);
      },
      py::arg("graph"), py::arg("plan"), py::arg("name"), py::arg("memories"), py::arg("placement"),
      "The same with the buffers placed across memories (a place_in_hierarchy solution): one arena per used memory.");
  m.def("lower_training_program", &codegen::lower_training_program, py::arg("plan"), py::arg("name"),
        "Lower a training plan to a Program with tinyarena_<name>_train_init/_train_step beside invoke; raises "
        "UnsupportedError naming an op or option training code generation lacks.");
  m.def(
      "emit_sources",
      [](const Program& program, const std::string& target) {
        std::vector<std::pair<std::string, std::string>> files;
        for (const auto& f : codegen::emit_sources(program, target)) files.emplace_back(f.path, f.contents);
        return files;
      },
      py::arg("program"), py::arg("target") = "host",
      "The generated files as (path, contents) pairs: model.h, model.c, main.c, Makefile (plain `make` builds "
      "`target`; and with arenas per memory tinyarena_memory.ld, tinyarena_sections.ld).");
  m.def(
      "compile_issues", [](const GraphPtr& graph) { return codegen::compile_issues(*graph); }, py::arg("graph"),
      "Why compile would reject the graph: one message per op the kernel library cannot run (empty: it compiles).");
  m.def("supported_op_types", &codegen::supported_op_types);
}

}  // namespace tinyarena::bindings
