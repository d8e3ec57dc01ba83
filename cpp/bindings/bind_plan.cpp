#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>

#include "bindings.h"
#include "graph_handles.h"
#include "tinyarena/common/alignment.h"
#include "tinyarena/plan/pipeline.h"
#include "tinyarena/plan/plan.h"

namespace py = pybind11;

namespace tinyarena::bindings {

namespace {

void bind_pipeline(py::module_& m) {
  using plan::PipelineOptions;
  using plan::TransformReport;
  py::class_<PipelineOptions>(m, "PipelineOptions")
      .def(py::init([](const plan::PlanOptions& plan, bool int8_io, bool nhwc_input, std::vector<std::string> transforms,
                       bool force_reorder, const schedule::ScheduleOptions& schedule) {
             return PipelineOptions{plan, {int8_io, nhwc_input}, std::move(transforms), force_reorder, schedule};
           }),
           py::arg("plan") = plan::PlanOptions{}, py::arg("int8_io") = false, py::arg("nhwc_input") = false,
           py::arg("transforms") = PipelineOptions{}.transforms, py::arg("force_reorder") = false,
           py::arg("schedule") = schedule::ScheduleOptions{})
      .def_readonly("plan", &PipelineOptions::plan)
      .def_readonly("transforms", &PipelineOptions::transforms)
      .def_readonly("force_reorder", &PipelineOptions::force_reorder);
  py::class_<TransformReport>(m, "CoreTransformReport", "One transform's effect (tinyarena.transforms.TransformReport).")
      .def_readonly("name", &TransformReport::name)
      .def_readonly("applied", &TransformReport::applied)
      .def_readonly("changes", &TransformReport::changes)
      .def_readonly("lower_bound_before", &TransformReport::lower_bound_before)
      .def_readonly("lower_bound_after", &TransformReport::lower_bound_after)
      .def_readonly("peak_before", &TransformReport::peak_before)
      .def_readonly("peak_after", &TransformReport::peak_after);
  py::class_<plan::PipelineResult>(m, "PipelineResult", "The plan and what each stage kept (the graph comes beside it).")
      .def_readonly("plan", &plan::PipelineResult::plan)
      .def_readonly("interface", &plan::PipelineResult::interface)
      .def_readonly("transforms", &plan::PipelineResult::transforms)
      .def_readonly("schedule", &plan::PipelineResult::schedule);
  m.def("run_pipeline",
        [](const GraphPtr& graph, const PipelineOptions& options) {
          plan::PipelineResult result;
          {
            py::gil_scoped_release release;
            result = plan::run_pipeline(*graph, options);
          }
          auto planned_graph = std::make_shared<graph::Graph>(std::move(result.graph));
          return py::make_tuple(planned_graph, std::move(result));
        },
        py::arg("graph"), py::arg("options") = PipelineOptions{},
        "(graph as planned, PipelineResult): tinyarena.plan's pipeline -- interface, graph rewrites kept when "
        "the peak does not grow, order, plan.");
}

}  // namespace

void bind_plan(py::module_& m) {
  m.def("check_alignment", &check_alignment, py::arg("alignment"), py::arg("what") = "alignment",
        "ValueError unless `alignment` is a power of two up to 2^40 (the planner's rule).");
  using plan::OpReport;
  using plan::Plan;
  using plan::PlanOptions;
  py::class_<PlanOptions>(m, "PlanOptions")
      .def(py::init([](int64_t alignment, std::string allocator, const liveness::LivenessOptions& liveness,
                       int64_t sram_limit, std::vector<int32_t> order, double allocation_seconds, std::string target,
                       int64_t flash_limit) {
             return PlanOptions{alignment, std::move(allocator), allocation_seconds, liveness, sram_limit,
                                std::move(order), std::move(target), flash_limit};
           }),
           py::arg("alignment") = 16, py::arg("allocator") = "auto",
           py::arg("liveness") = liveness::LivenessOptions{}, py::arg("sram_limit") = 0,
           py::arg("order") = std::vector<int32_t>{}, py::arg("allocation_seconds") = 0.3,
           py::arg("target") = "cortex-m4", py::arg("flash_limit") = 0)
      .def_readonly("alignment", &PlanOptions::alignment)
      .def_readonly("allocator", &PlanOptions::allocator)
      .def_readonly("allocation_seconds", &PlanOptions::allocation_seconds)
      .def_readonly("liveness", &PlanOptions::liveness)
      .def_readonly("sram_limit", &PlanOptions::sram_limit)
      .def_readonly("order", &PlanOptions::order)
      .def_readonly("target", &PlanOptions::target)
      .def_readonly("flash_limit", &PlanOptions::flash_limit)
      .def("__repr__", [](const PlanOptions& o) {
        return "<PlanOptions alignment " + std::to_string(o.alignment) + ", allocator " + o.allocator + ", " +
               std::to_string(o.allocation_seconds) + " s, sram_limit " + std::to_string(o.sram_limit) +
               ", target " + o.target + ">";
      });
  py::class_<plan::FlashReport>(m, "FlashReport", "Flash of an op or a model in the plan's target build.")
      .def_property_readonly("weights", [](const plan::FlashReport& f) { return f.constants.weights; })
      .def_property_readonly("biases", [](const plan::FlashReport& f) { return f.constants.biases; })
      .def_property_readonly("requant", [](const plan::FlashReport& f) { return f.constants.requant; })
      .def_property_readonly("tables", [](const plan::FlashReport& f) { return f.constants.tables; })
      .def_property_readonly("constants", [](const plan::FlashReport& f) { return f.constants.total(); })
      .def_readonly("code", &plan::FlashReport::code)
      .def_property_readonly("total", &plan::FlashReport::total)
      .def("__repr__", [](const plan::FlashReport& f) {
        return "<FlashReport " + std::to_string(f.total()) + " B: constants " + std::to_string(f.constants.total()) +
               " B, code " + std::to_string(f.code) + " B>";
      });
  py::class_<op_params::LayoutChoice>(m, "LayoutChoice",
                                      "The weight layouts a flash budget chose (op_params::choose_weight_layouts).")
      .def_property_readonly("layouts",
                             [](const op_params::LayoutChoice& c) {
                               std::map<int32_t, std::string> names;
                               for (const auto& [op, layout] : c.layouts) names[op] = op_params::layout_name(layout);
                               return names;
                             })
      .def_readonly("flash_bytes", &op_params::LayoutChoice::flash_bytes)
      .def_readonly("compact_flash_bytes", &op_params::LayoutChoice::compact_flash_bytes)
      .def_readonly("predicted_instructions", &op_params::LayoutChoice::predicted_instructions)
      .def_readonly("fits", &op_params::LayoutChoice::fits);
  py::class_<OpReport>(m, "OpReport", "One row of the per-op report.")
      .def_readonly("index", &OpReport::index)
      .def_readonly("step", &OpReport::step)
      .def_readonly("type", &OpReport::type)
      .def_property_readonly("output_shape", [](const OpReport& r) { return py::tuple(py::cast(r.output_shape)); })
      .def_readonly("live_bytes", &OpReport::live_bytes)
      .def_readonly("scratch_bytes", &OpReport::scratch_bytes)
      .def_readonly("arena_top", &OpReport::arena_top)
      .def_property_readonly("macs", [](const OpReport& r) { return r.metrics.macs; })
      .def_readonly("flash", &OpReport::flash)
      .def_property_readonly("flash_bytes", [](const OpReport& r) { return r.flash.total(); })
      .def_readonly("predicted_instructions", &OpReport::predicted_instructions)
      .def("__repr__", [](const OpReport& r) {
        return "<OpReport op " + std::to_string(r.index) + " " + r.type + ": live " + std::to_string(r.live_bytes) +
               " B, scratch " + std::to_string(r.scratch_bytes) + " B>";
      });
  py::class_<Plan>(m, "CorePlan", "The planner's result; tinyarena.Plan wraps it with table, JSON and chart.")
      .def_readonly("options", &Plan::options)
      .def_readonly("liveness", &Plan::liveness)
      .def_readonly("problem", &Plan::problem)
      .def_readonly("solution", &Plan::solution)
      .def_readonly("allocation_method", &Plan::allocation_method)
      .def_readonly("proven_optimal", &Plan::proven_optimal)
      .def_readonly("ops", &Plan::ops)
      .def_readonly("peak_bytes", &Plan::peak_bytes)
      .def_readonly("peak_op", &Plan::peak_op)
      .def_readonly("lower_bound_bytes", &Plan::lower_bound_bytes)
      .def_readonly("flash", &Plan::flash)
      .def_property_readonly("flash_bytes", [](const Plan& p) { return p.flash.total(); })
      .def_readonly("inplace_declined", &Plan::inplace_declined)
      .def_readonly("macs", &Plan::macs)
      .def_readonly("predicted_instructions", &Plan::predicted_instructions)
      .def_property_readonly("fits", &Plan::fits)
      .def_readonly("weight_layouts", &Plan::weight_layouts)
      .def_property_readonly("flash_fits", &Plan::flash_fits)
      .def("__repr__", [](const Plan& p) {
        return "<CorePlan peak " + std::to_string(p.peak_bytes) + " B at op " + std::to_string(p.peak_op) +
               ", lower bound " + std::to_string(p.lower_bound_bytes) + " B, " +
               std::to_string(p.problem.buffers.size()) + " buffers, " + p.allocation_method + ">";
      });
  m.def("make_plan",
        [](const GraphPtr& graph, const PlanOptions& options) {
          py::gil_scoped_release release;
          return plan::make_plan(*graph, options);
        },
        py::arg("graph"), py::arg("options") = PlanOptions{});
  m.def("weight_layout",
        [](const GraphPtr& graph, const Plan& plan, int32_t op) {
          if (op < 0 || op >= static_cast<int32_t>(graph->ops.size()))
            throw py::index_error("op " + std::to_string(op) + " is not in the graph");
          return std::string(op_params::layout_name(op_params::layout_of(*graph, plan.weight_layouts.layouts, graph->ops[op])));
        },
        py::arg("graph"), py::arg("plan"), py::arg("op"),
        "The layout of op's weights in the plan's SIMD builds: plain, packed_int8 or packed_int16 (plain for ops "
        "without weights).");
  m.def("with_flash_limit",
        [](const GraphPtr& graph, const Plan& plan, const std::string& target, int64_t flash_limit) {
          py::gil_scoped_release release;
          return plan::with_flash_limit(*graph, plan, target, flash_limit);
        },
        py::arg("graph"), py::arg("plan"), py::arg("target"), py::arg("flash_limit"),
        "The plan with its weight layouts chosen again for target under flash_limit (0: none), flash report redone.");
  m.def("with_weight_layouts",
        [](const GraphPtr& graph, const Plan& plan, const std::map<int32_t, std::string>& names) {
          op_params::WeightLayouts layouts;
          for (const auto& [op, name] : names) layouts[op] = op_params::layout_named(name);
          py::gil_scoped_release release;
          return plan::with_weight_layouts(*graph, plan, layouts);
        },
        py::arg("graph"), py::arg("plan"), py::arg("layouts"),
        "The plan with {op index: layout name} pinned (others at their default), flash report redone.");
  bind_pipeline(m);
}

}  // namespace tinyarena::bindings
