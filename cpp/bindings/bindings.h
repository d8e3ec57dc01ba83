// One binding function per pipeline stage; module.cpp calls them in order.
// Bindings translate types only: every decision lives in the C++ stages.
#pragma once

#include <pybind11/pybind11.h>

namespace tinyarena::bindings {

void bind_reader(pybind11::module_& m);
void bind_graph(pybind11::module_& m);
void bind_transforms(pybind11::module_& m);
void bind_liveness(pybind11::module_& m);
void bind_allocation(pybind11::module_& m);
void bind_plan(pybind11::module_& m);
void bind_schedule(pybind11::module_& m);
void bind_interchange(pybind11::module_& m);
void bind_op_params(pybind11::module_& m);
void bind_codegen(pybind11::module_& m);
void bind_tiling(pybind11::module_& m);
void bind_training(pybind11::module_& m);

}  // namespace tinyarena::bindings
