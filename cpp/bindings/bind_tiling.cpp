#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <string>

#include "bindings.h"
#include "graph_handles.h"
#include "tinyarena/codegen/tiled_lowering.h"
#include "tinyarena/tiling/search.h"

namespace py = pybind11;

namespace tinyarena::bindings {
namespace {

// "Segment([3, 4, 5], mode='rows', stripe_rows=1)": the call that makes it.
std::string segment_repr(const tiling::Segment& s) {
  std::string ops;
  for (int32_t op : s.ops) ops += (ops.empty() ? "" : ", ") + std::to_string(op);
  const std::string how = s.mode == tiling::Mode::Rows
                              ? "mode='rows', stripe_rows=" + std::to_string(s.stripe_rows) +
                                    (s.column_strips > 1 ? ", column_strips=" + std::to_string(s.column_strips) : "")
                              : "mode='patches', patches_h=" + std::to_string(s.patches_h) +
                                    ", patches_w=" + std::to_string(s.patches_w);
  return "Segment([" + ops + "], " + how + ")";
}

// "rows 0..5 (1-row stripes), patches 6..9 (2x2)", or "untiled".
std::string segments_summary(const std::vector<tiling::Segment>& segments) {
  std::string text;
  for (const tiling::Segment& s : segments) {
    text += text.empty() ? "" : ", ";
    text += (s.mode == tiling::Mode::Rows ? "rows " : "patches ") + std::to_string(s.ops.front()) + ".." +
            std::to_string(s.ops.back());
    text += s.mode == tiling::Mode::Rows
                ? " (" + std::to_string(s.stripe_rows) + "-row stripes" +
                      (s.column_strips > 1 ? ", " + std::to_string(s.column_strips) + " column strips" : "") + ")"
                : " (" + std::to_string(s.patches_h) + "x" + std::to_string(s.patches_w) + ")";
  }
  return text.empty() ? "untiled" : text;
}

std::string overhead_text(double overhead) {
  char text[32];
  std::snprintf(text, sizeof text, "x%.3f", overhead);
  return text;
}

}  // namespace

void bind_tiling(py::module_& m) {
  using namespace tiling;
  m.def("is_tileable", [](const GraphPtr& g, int32_t op) { return is_tileable(*g, g->op_at(op)); },
        py::arg("graph"), py::arg("op"));
  m.def("input_range",
        [](const GraphPtr& g, int32_t op, size_t position, const std::string& axis, int32_t begin, int32_t end) {
          const Range r = input_range(*g, g->op_at(op), position, tiling::parse_axis(axis), {begin, end});
          return py::make_tuple(r.begin, r.end);
        },
        py::arg("graph"), py::arg("op"), py::arg("position"), py::arg("axis"), py::arg("begin"), py::arg("end"),
        "Input indices [begin, end) that output indices [begin, end) of the op need along 'rows' or 'cols'.");
  m.def("window_input",
        [](int32_t in_size, int32_t kernel, int32_t stride, int32_t dilation, int32_t pad_before, int32_t begin,
           int32_t end) {
          const Range r = window_input({in_size, kernel, stride, dilation, pad_before}, {begin, end});
          return py::make_tuple(r.begin, r.end);
        },
        py::arg("in_size"), py::arg("kernel"), py::arg("stride"), py::arg("dilation"), py::arg("pad_before"),
        py::arg("begin"), py::arg("end"));

  py::class_<Ring>(m, "Ring")
      .def_readonly("tensor", &Ring::tensor)
      .def_readonly("rows", &Ring::rows)
      .def_readonly("row_bytes", &Ring::row_bytes)
      .def_readonly("source", &Ring::source, "The model input a load runs boundary ops on into this ring, or -1.")
      .def_property_readonly("bytes", &Ring::bytes);
  py::class_<RowStream>(m, "RowStream")
      .def_readonly("ops", &RowStream::ops)
      .def_readonly("full_inputs", &RowStream::full_inputs)
      .def_readonly("full_outputs", &RowStream::full_outputs)
      .def_readonly("rings", &RowStream::rings)
      .def_property_readonly("steps", [](const RowStream& s) {
        py::list steps;
        for (const StreamStep& step : s.steps)
          steps.append(py::make_tuple(tiling::step_kind_name(step.kind), step.target, step.begin, step.end));
        return steps;
      })
      .def_readonly("op_state", &RowStream::op_state)
      .def_readonly("scratch_bytes", &RowStream::scratch_bytes)
      .def_readonly("macs", &RowStream::macs)
      .def_readonly("op_macs", &RowStream::op_macs)
      .def_property_readonly("overwrites", [](const RowStream& s) {
        py::list pairs;
        for (const Overwrite& o : s.overwrites) pairs.append(py::make_tuple(o.output, o.input));
        return pairs;
      })
      .def_readonly("column_strips", &RowStream::column_strips)
      .def_readonly("strip_tensors", &RowStream::strip_tensors)
      .def_readonly("strip_columns", &RowStream::strip_columns)
      .def_property_readonly("ring_bytes", &RowStream::ring_bytes)
      .def("__repr__", [](const RowStream& s) {
        return "<RowStream " + std::to_string(s.ops.size()) + " ops, " + std::to_string(s.rings.size()) + " rings of " +
               std::to_string(s.ring_bytes()) + " B, " + std::to_string(s.steps.size()) + " steps>";
      });
  m.def("stream_rows",
        [](const GraphPtr& g, const std::vector<int32_t>& ops, int32_t stripe_rows, bool stream_input,
           int32_t column_strips) { return stream_rows(*g, ops, {stripe_rows, stream_input, true, column_strips}); },
        py::arg("graph"), py::arg("ops"), py::arg("stripe_rows") = 1, py::arg("stream_input") = false,
        py::arg("column_strips") = 1);

  py::class_<PatchBuffer>(m, "PatchBuffer")
      .def_readonly("tensor", &PatchBuffer::tensor)
      .def_readonly("rows", &PatchBuffer::rows)
      .def_readonly("cols", &PatchBuffer::cols)
      .def_readonly("bytes", &PatchBuffer::bytes);
  py::class_<PatchRun>(m, "PatchRun")
      .def_readonly("ops", &PatchRun::ops)
      .def_readonly("grid_h", &PatchRun::grid_h)
      .def_readonly("grid_w", &PatchRun::grid_w)
      .def_readonly("full_inputs", &PatchRun::full_inputs)
      .def_readonly("full_output", &PatchRun::full_output)
      .def_readonly("buffers", &PatchRun::buffers)
      .def_readonly("op_scratch", &PatchRun::op_scratch)
      .def_readonly("macs", &PatchRun::macs)
      .def("__repr__", [](const PatchRun& r) {
        return "<PatchRun " + std::to_string(r.ops.size()) + " ops on " + std::to_string(r.grid_h) + "x" +
               std::to_string(r.grid_w) + " patches, " + std::to_string(r.macs) + " MACs>";
      });
  m.def("run_patches",
        [](const GraphPtr& g, const std::vector<int32_t>& ops, int32_t grid_h, int32_t grid_w, bool stream_input) {
          return run_patches(*g, ops, grid_h, grid_w, stream_input);
        },
        py::arg("graph"), py::arg("ops"), py::arg("grid_h"), py::arg("grid_w"), py::arg("stream_input") = false);

  py::class_<Segment>(m, "Segment",
                      "A run of consecutive ops of the schedule and how it runs: mode 'rows' (row stripes of "
                      "stripe_rows output rows; rings hold only the rows still needed, no recompute; with column_strips > 1 "
                      "the rows run once per column strip, rings as narrow as the widest strip, shared columns "
                      "recomputed) or "
                      "'patches' (a patches_h x patches_w grid of output patches, halos recomputed). Op indices "
                      "are those of the graph the plan or search works on (after its transforms).")
      .def(py::init([](std::vector<int32_t> ops, const std::string& mode, int32_t stripe_rows, int32_t patches_h,
                       int32_t patches_w, int32_t column_strips) {
             return Segment{std::move(ops), tiling::parse_mode(mode), stripe_rows, patches_h, patches_w, column_strips};
           }),
           py::arg("ops"), py::arg("mode") = "rows", py::arg("stripe_rows") = 1, py::arg("patches_h") = 2,
           py::arg("patches_w") = 2, py::arg("column_strips") = 1)
      .def_readonly("ops", &Segment::ops)
      .def_property_readonly("mode", [](const Segment& s) { return s.mode == Mode::Rows ? "rows" : "patches"; })
      .def_readonly("stripe_rows", &Segment::stripe_rows)
      .def_readonly("patches_h", &Segment::patches_h)
      .def_readonly("patches_w", &Segment::patches_w)
      .def_readonly("column_strips", &Segment::column_strips)
      .def("__eq__", [](const Segment& a, const Segment& b) {
        return a.ops == b.ops && a.mode == b.mode && a.stripe_rows == b.stripe_rows && a.patches_h == b.patches_h &&
               a.patches_w == b.patches_w && a.column_strips == b.column_strips;
      })
      .def("__repr__", &segment_repr);
  m.def("describe_segments", &segments_summary, py::arg("segments"),
        "One line naming each segment's mode, ops and stripe height or grid ('untiled' when there are none).");
  py::class_<TilingOptions>(m, "TilingOptions")
      .def(py::init([](const plan::PlanOptions& plan, bool stream_input) { return TilingOptions{plan, stream_input}; }),
           py::arg("plan") = plan::PlanOptions{}, py::arg("stream_input") = false)
      .def_readonly("plan", &TilingOptions::plan)
      .def_readonly("stream_input", &TilingOptions::stream_input)
      .def("__repr__", [](const TilingOptions& o) {
        return "<TilingOptions alignment " + std::to_string(o.plan.alignment) + ", allocator " + o.plan.allocator +
               ", stream_input " + (o.stream_input ? "True" : "False") + ">";
      });
  py::class_<TiledPlan>(m, "CoreTiledPlan", "A tiled schedule's plan; tinyarena.tiling.TiledPlan wraps it.")
      .def_readonly("plan", &TiledPlan::plan)
      .def_readonly("segments", &TiledPlan::segments)
      .def_readonly("streams", &TiledPlan::streams)
      .def_readonly("patch_runs", &TiledPlan::patch_runs)
      .def_readonly("macs", &TiledPlan::macs)
      .def_readonly("untiled_macs", &TiledPlan::untiled_macs)
      .def_property_readonly("mac_overhead", &TiledPlan::mac_overhead)
      .def_readonly("untiled_predicted_instructions", &TiledPlan::untiled_predicted_instructions)
      .def_property_readonly("latency_overhead", &TiledPlan::latency_overhead)
      .def("__repr__", [](const TiledPlan& t) {
        return "<CoreTiledPlan peak " + std::to_string(t.plan.peak_bytes) + " B, MACs " +
               overhead_text(t.mac_overhead()) + ", " + segments_summary(t.segments) + ">";
      });
  m.def("make_tiled_plan",
        [](const GraphPtr& g, const std::vector<Segment>& segments, const TilingOptions& options) {
          py::gil_scoped_release release;
          return make_tiled_plan(*g, segments, options);
        },
        py::arg("graph"), py::arg("segments"), py::arg("options") = TilingOptions{});

  py::class_<SearchOptions>(m, "TilingSearchOptions")
      .def(py::init([](const TilingOptions& tiling, bool rows, bool patches, double max_mac_overhead,
                       std::vector<int32_t> stripe_rows, std::vector<int32_t> patch_grids, int32_t max_front,
                       std::vector<int32_t> column_strips, double max_latency_overhead, const std::string& objective) {
             return SearchOptions{tiling,      rows, patches, max_mac_overhead, std::move(stripe_rows),
                                  std::move(patch_grids), max_front, std::move(column_strips), max_latency_overhead,
                                  tiling::parse_objective(objective)};
           }),
           py::arg("tiling") = TilingOptions{}, py::arg("rows") = true, py::arg("patches") = false,
           py::arg("max_mac_overhead") = 1.0, py::arg("stripe_rows") = SearchOptions{}.stripe_rows,
           py::arg("patch_grids") = SearchOptions{}.patch_grids, py::arg("max_front") = SearchOptions{}.max_front,
           py::arg("column_strips") = SearchOptions{}.column_strips, py::arg("max_latency_overhead") = 0.0,
           py::arg("objective") = "size");
  py::class_<ParetoPoint>(m, "CoreParetoPoint",
                          "A point of the search's front; tinyarena.tiling.ParetoPoint wraps it with a plan of the graph.")
      .def_readonly("peak_bytes", &ParetoPoint::peak_bytes)
      .def_readonly("macs", &ParetoPoint::macs)
      .def_readonly("mac_overhead", &ParetoPoint::mac_overhead)
      .def_readonly("segments", &ParetoPoint::segments)
      .def_readonly("plan", &ParetoPoint::plan)
      .def("__repr__", [](const ParetoPoint& p) {
        return "<CoreParetoPoint peak " + std::to_string(p.peak_bytes) + " B, MACs " + overhead_text(p.mac_overhead) +
               ", " + segments_summary(p.segments) + ">";
      });
  py::class_<TilingSearch>(m, "TilingSearch")
      .def_readonly("best_point", &TilingSearch::best_point)
      .def_readonly("front", &TilingSearch::front)
      .def_readonly("untiled_peak_bytes", &TilingSearch::untiled_peak_bytes)
      .def_readonly("candidates", &TilingSearch::candidates)
      .def_readonly("seconds", &TilingSearch::seconds)
      .def("__repr__", [](const TilingSearch& t) {
        return "<TilingSearch " + std::to_string(t.front.size()) + " Pareto points, best peak " +
               std::to_string(t.best().plan.peak_bytes) + " B, untiled " + std::to_string(t.untiled_peak_bytes) + " B>";
      });
  m.def("search_tiling",
        [](const GraphPtr& g, const SearchOptions& options) {
          py::gil_scoped_release release;
          return search_tiling(*g, options);
        },
        py::arg("graph"), py::arg("options") = SearchOptions{});
  m.def("lower_tiled_program",
        [](const GraphPtr& g, const TiledPlan& tiled, const std::string& name) {
          return codegen::lower_tiled_program(*g, tiled, name);
        },
        py::arg("graph"), py::arg("tiled"), py::arg("name"));
  m.def("lower_tiled_program",
        [](const GraphPtr& g, const TiledPlan& tiled, const std::string& name,
           const std::vector<allocation::Memory>& memories, const allocation::HierarchySolution& placement) {
          return codegen::lower_tiled_program(*g, tiled, name, memories, placement);
        },
        py::arg("graph"), py::arg("tiled"), py::arg("name"), py::arg("memories"), py::arg("placement"),
        "The same with the buffers placed across memories (a place_in_hierarchy solution): one arena per used memory.");
}

}  // namespace tinyarena::bindings
