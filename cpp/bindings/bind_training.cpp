#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "graph_handles.h"
#include "numpy_views.h"
#include "tinyarena/training/training_plan.h"

namespace py = pybind11;

namespace tinyarena::bindings {

namespace {

using namespace training;

py::dict class_dict(const int64_t (&bytes)[kClasses]) {
  py::dict out;
  for (int c = 0; c < kClasses; ++c) out[value_class_name(static_cast<ValueClass>(c))] = bytes[c];
  return out;
}

void bind_spec(py::module_& m) {
  py::class_<LayerUpdate>(m, "LayerUpdate", "What one weight layer updates.")
      .def_readonly("op", &LayerUpdate::op)
      .def_readonly("type", &LayerUpdate::type)
      .def_readonly("out_channels", &LayerUpdate::out_channels)
      .def_readonly("channel_weights", &LayerUpdate::channel_weights)
      .def_readonly("weight_channels", &LayerUpdate::weight_channels)
      .def_readonly("bias", &LayerUpdate::bias)
      .def_property_readonly("parameters", &LayerUpdate::parameters);
  m.def("canonical_spec", [](const std::string& text) { return spec_text(parse_spec(text)); }, py::arg("spec"),
        "The update spec in canonical form; ValueError naming the bad part.");
  m.def("weight_layers", [](const GraphPtr& graph) { return weight_layers(*graph); }, py::arg("graph"));
  m.def("resolve_spec", [](const GraphPtr& graph, const std::string& spec) { return resolve_spec(*graph, parse_spec(spec)); },
        py::arg("graph"), py::arg("spec"));
}

void bind_training_graph(py::module_& m) {
  py::class_<TrainValue>(m, "TrainValue")
      .def_readonly("name", &TrainValue::name)
      .def_property_readonly("cls", [](const TrainValue& v) { return value_class_name(v.cls); })
      .def_readonly("bytes", &TrainValue::bytes)
      .def_readonly("tensor", &TrainValue::tensor)
      .def_readonly("parameter_gradient", &TrainValue::parameter_gradient)
      .def_readonly("forward_op", &TrainValue::forward_op);
  py::class_<TrainStep>(m, "TrainStep")
      .def_property_readonly("kind", [](const TrainStep& s) { return step_kind_name(s.kind); })
      .def_property_readonly("math", [](const TrainStep& s) { return step_math_name(s.math); },
                             "What the step computes: loss, activation_grad, input_grad, weight_grad, bias_grad, "
                             "grad_sum, sgd_update or channel_update.")
      .def_readonly("op", &TrainStep::op)
      .def_readonly("what", &TrainStep::what)
      .def_readonly("reads", &TrainStep::reads)
      .def_readonly("saved", &TrainStep::saved)
      .def_readonly("writes", &TrainStep::writes)
      .def_readonly("scratch_bytes", &TrainStep::scratch_bytes)
      .def_readonly("single_pass_scratch_bytes", &TrainStep::single_pass_scratch_bytes);
  py::class_<TrainingGraph>(m, "TrainingGraph")
      .def_readonly("updates", &TrainingGraph::updates)
      .def_readonly("values", &TrainingGraph::values)
      .def_readonly("backward", &TrainingGraph::backward)
      .def_readonly("sgd_updates", &TrainingGraph::sgd_updates)
      .def_readonly("update_after", &TrainingGraph::update_after)
      .def_readonly("channel_updates", &TrainingGraph::channel_updates)
      .def_readonly("channel_update_replaces", &TrainingGraph::channel_update_replaces)
      .def_readonly("saved", &TrainingGraph::saved)
      .def_readonly("masks", &TrainingGraph::masks)
      .def_readonly("backward_ops", &TrainingGraph::backward_ops)
      .def_readonly("loss_tensor", &TrainingGraph::loss_tensor)
      .def_readonly("updated_parameters", &TrainingGraph::updated_parameters)
      .def_property_readonly("forward", [](const TrainingGraph& t) { return std::make_shared<graph::Graph>(t.forward); });
  m.def("derive_training_graph",
        [](const GraphPtr& graph, const std::string& spec) {
          return derive_training_graph(*graph, resolve_spec(*graph, parse_spec(spec)));
        },
        py::arg("graph"), py::arg("spec"));
}

void bind_training_plan(py::module_& m) {
  py::class_<TrainingOptions>(m, "TrainingOptions")
      .def(py::init([](int64_t alignment, std::string allocator, double seconds, bool reorder_updates, bool inplace,
                       bool scratch, bool single_pass_requant, int64_t sram_limit, int64_t flash_limit,
                       std::string target) {
             return TrainingOptions{alignment, std::move(allocator), seconds, reorder_updates, inplace, scratch,
                                    single_pass_requant, sram_limit, flash_limit, std::move(target)};
           }),
           py::arg("alignment") = 16, py::arg("allocator") = "auto", py::arg("seconds") = 0.3,
           py::arg("reorder_updates") = true, py::arg("inplace") = true, py::arg("scratch") = true,
           py::arg("single_pass_requant") = false, py::arg("sram_limit") = 0, py::arg("flash_limit") = 0,
           py::arg("target") = "cortex-m4")
      .def_readonly("alignment", &TrainingOptions::alignment)
      .def_readonly("allocator", &TrainingOptions::allocator)
      .def_readonly("reorder_updates", &TrainingOptions::reorder_updates)
      .def_readonly("single_pass_requant", &TrainingOptions::single_pass_requant)
      .def_readonly("sram_limit", &TrainingOptions::sram_limit)
      .def_readonly("flash_limit", &TrainingOptions::flash_limit)
      .def_readonly("target", &TrainingOptions::target);
  py::class_<StepReport>(m, "TrainingStepReport")
      .def_readonly("step", &StepReport::step)
      .def_property_readonly("kind", [](const StepReport& s) { return step_kind_name(s.kind); })
      .def_readonly("op", &StepReport::op)
      .def_readonly("what", &StepReport::what)
      .def_property_readonly("live", [](const StepReport& s) { return class_dict(s.live); })
      .def_readonly("arena_top", &StepReport::arena_top)
      .def_property_readonly("total", &StepReport::total);
  py::class_<AutoCandidate>(m, "AutoCandidate")
      .def_readonly("spec", &AutoCandidate::spec)
      .def_readonly("parameters", &AutoCandidate::parameters)
      .def_readonly("peak_bytes", &AutoCandidate::peak_bytes)
      .def_readonly("fits", &AutoCandidate::fits)
      .def_readonly("error", &AutoCandidate::error);
  py::class_<TrainingPlan>(m, "CoreTrainingPlan")
      .def_readonly("options", &TrainingPlan::options)
      .def_readonly("spec", &TrainingPlan::spec)
      .def_readonly("training", &TrainingPlan::training)
      .def_readonly("liveness", &TrainingPlan::liveness)
      .def_property_readonly("buffer_class", [](const TrainingPlan& p) {
        py::list out;
        for (ValueClass c : p.buffer_class) out.append(value_class_name(c));
        return out;
      })
      .def_readonly("problem", &TrainingPlan::problem)
      .def_readonly("solution", &TrainingPlan::solution)
      .def_readonly("allocation_method", &TrainingPlan::allocation_method)
      .def_readonly("proven_optimal", &TrainingPlan::proven_optimal)
      .def_readonly("steps", &TrainingPlan::steps)
      .def_readonly("forward_steps", &TrainingPlan::forward_steps)
      .def_readonly("peak_bytes", &TrainingPlan::peak_bytes)
      .def_readonly("lower_bound_bytes", &TrainingPlan::lower_bound_bytes)
      .def_readonly("peak_step", &TrainingPlan::peak_step)
      .def_readonly("trainable_bytes", &TrainingPlan::trainable_bytes)
      .def_readonly("gradient_bytes", &TrainingPlan::gradient_bytes)
      .def_property_readonly("class_bytes", [](const TrainingPlan& p) { return class_dict(p.class_bytes); })
      .def_readonly("flash_bytes", &TrainingPlan::flash_bytes)
      .def_readonly("candidates", &TrainingPlan::candidates)
      .def_readonly("value_buffer", &TrainingPlan::value_buffer)
      .def_property_readonly("fits", &TrainingPlan::fits);
  m.def("plan_training",
        [](const GraphPtr& graph, const std::string& spec, const TrainingOptions& options) {
          UpdateSpec parsed = parse_spec(spec);
          py::gil_scoped_release release;
          return plan_training(*graph, parsed, options);
        },
        py::arg("graph"), py::arg("spec"), py::arg("options") = TrainingOptions{},
        "The memory plan of one training step updating `spec` (training::plan_training).");
}

}  // namespace

void bind_training(py::module_& m) {
  bind_spec(m);
  bind_training_graph(m);
  bind_training_plan(m);
}

}  // namespace tinyarena::bindings
