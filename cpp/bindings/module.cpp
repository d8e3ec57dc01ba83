#include <pybind11/pybind11.h>

#include "bindings.h"
#include "tinyarena/common/errors.h"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "tinyarena's C++ core: reader, graph IR, transforms, liveness, allocation, planning, interchange, C code generation, tiling and training plans.";
  py::register_exception<tinyarena::ModelError>(m, "ModelError", PyExc_ValueError);
  py::register_exception<tinyarena::UnsupportedError>(m, "UnsupportedError", PyExc_ValueError);
  tinyarena::bindings::bind_graph(m);
  tinyarena::bindings::bind_reader(m);
  tinyarena::bindings::bind_transforms(m);
  tinyarena::bindings::bind_liveness(m);
  tinyarena::bindings::bind_allocation(m);
  tinyarena::bindings::bind_schedule(m);
  tinyarena::bindings::bind_plan(m);
  tinyarena::bindings::bind_interchange(m);
  tinyarena::bindings::bind_op_params(m);
  tinyarena::bindings::bind_codegen(m);
  tinyarena::bindings::bind_tiling(m);
  tinyarena::bindings::bind_training(m);
}
