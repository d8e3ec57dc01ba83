#include "tinyarena/plan/pipeline.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "tinyarena/common/format.h"

namespace tinyarena::plan {
namespace {

using graph::Graph;
using transforms::Rewrite;

const char* const kReorder = "reorder";

// What one path of steps 3-4 plans with: in-place flags fixed, the reorder search when asked for.
struct PathOptions {
  PlanOptions plan;
  std::optional<schedule::ScheduleOptions> schedule;  // set when "reorder" is named
  bool force_reorder = false;
};

// A graph planned in file order, and as it will be planned (reordered when that is kept).
struct Planned {
  Graph graph;
  Plan file;
  std::optional<schedule::ScheduleResult> schedule;  // the reorder search, if one ran
  std::optional<Plan> in_schedule_order;             // set when the search's order is not the file's
  bool reordered = false;                            // the plan kept is in_schedule_order

  const Plan& best() const { return reordered ? *in_schedule_order : file; }
  Plan take_best() && { return std::move(reordered ? *in_schedule_order : file); }
};

bool is_file_order(const std::vector<int32_t>& order) {
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int32_t>(i)) return false;
  return true;
}

Plan plan_in_order(const PathOptions& path, const Graph& graph, std::vector<int32_t> order) {
  PlanOptions options = path.plan;
  options.order = std::move(order);
  return make_plan(graph, options);
}

// The graph planned in file order and, when reordering is asked for, in the order found (kept when no higher).
Planned planned_graph(const PathOptions& path, Graph graph) {
  Plan file = plan_in_order(path, graph, {});
  Planned planned{std::move(graph), std::move(file), std::nullopt, std::nullopt, false};
  if (!path.schedule) return planned;
  planned.schedule = schedule::find_schedule(planned.graph, *path.schedule);
  if (is_file_order(planned.schedule->order)) return planned;
  planned.in_schedule_order = plan_in_order(path, planned.graph, planned.schedule->order);
  planned.reordered = path.force_reorder || planned.in_schedule_order->peak_bytes <= planned.file.peak_bytes;
  return planned;
}

// Step 3b: each rewrite alone, from the last op back, kept when the final peak does not grow.
std::vector<Rewrite> one_at_a_time(const PathOptions& path, Planned& current, const std::string& name,
                                   std::vector<Rewrite> rewrites) {
  std::stable_sort(rewrites.begin(), rewrites.end(), [](const Rewrite& a, const Rewrite& b) { return a.op > b.op; });
  std::vector<Rewrite> kept;
  for (const Rewrite& rewrite : rewrites) {
    transforms::TransformResult single = transforms::apply_transform(current.graph, name, {rewrite.op});
    if (single.rewrites.empty()) continue;
    Planned trial = planned_graph(path, std::move(single.graph));
    if (trial.best().peak_bytes > current.best().peak_bytes) continue;
    current = std::move(trial);
    kept.insert(kept.begin(), single.rewrites.begin(), single.rewrites.end());
  }
  return kept;
}

TransformReport report_of(const std::string& name, bool applied, std::vector<std::string> changes,
                          const Plan& before, const Plan& after) {
  return {name, applied, std::move(changes), before.lower_bound_bytes, after.lower_bound_bytes,
          before.peak_bytes, after.peak_bytes};
}

// Step 3: one graph rewrite, kept on `current` when it does not raise the peak.
TransformReport keep_if_no_higher(const PathOptions& path, Planned& current, const std::string& name) {
  transforms::TransformResult all = transforms::apply_transform(current.graph, name);
  if (all.rewrites.empty()) return report_of(name, false, {}, current.file, current.file);
  Planned candidate = planned_graph(path, std::move(all.graph));
  std::vector<Rewrite> kept;
  if (candidate.best().peak_bytes <= current.best().peak_bytes) {
    kept = all.rewrites;
  } else if (all.rewrites.size() > 1 && all.rewrites.size() <= kMaxSingleTrials) {
    Planned single = current;
    kept = one_at_a_time(path, single, name, all.rewrites);
    if (!kept.empty()) candidate = std::move(single);
  }
  std::vector<std::string> changes;
  for (const Rewrite& r : kept.empty() ? all.rewrites : kept) changes.push_back("op " + std::to_string(r.op) + ": " + r.what);
  TransformReport report = report_of(name, !kept.empty(), std::move(changes), current.file, candidate.file);
  if (!kept.empty()) current = std::move(candidate);
  return report;
}

// Step 4: the reorder transform's report on the final graph.
TransformReport reorder_report(const Planned& current) {
  const schedule::ScheduleResult& found = *current.schedule;
  if (!current.in_schedule_order) return report_of(kReorder, current.reordered, {}, current.file, current.file);
  std::vector<std::string> changes = {std::string(schedule::method_name(found.method)) + " search: lower bound " +
                                      with_thousands(found.file_peak_bytes) + " -> " +
                                      with_thousands(found.peak_bytes) + " B"};
  return report_of(kReorder, current.reordered, std::move(changes), current.file, *current.in_schedule_order);
}

struct PathEnd {
  Planned planned;
  std::vector<TransformReport> reports;
  std::optional<schedule::ScheduleResult> kept_schedule;
};

// Steps 3-4 on one path.
PathEnd follow_path(const PathOptions& path, const Graph& graph, const std::vector<std::string>& rewrite_names) {
  PathEnd end{planned_graph(path, graph), {}, std::nullopt};
  for (const std::string& name : rewrite_names) end.reports.push_back(keep_if_no_higher(path, end.planned, name));
  if (!path.schedule) return end;
  end.reports.push_back(reorder_report(end.planned));
  if (end.planned.reordered || path.force_reorder) end.kept_schedule = end.planned.schedule;
  return end;
}

// True when op i + 1 reads an output of op i for every i: the file order is the only order.
bool only_one_order(const Graph& graph) {
  for (size_t i = 1; i < graph.ops.size(); ++i) {
    bool reads_previous = false;
    for (int32_t t : graph.ops[i].inputs)
      reads_previous |= t >= 0 && graph.tensors[static_cast<size_t>(t)].producer == static_cast<int32_t>(i - 1);
    if (!reads_previous) return false;
  }
  return true;
}

// Step 5 can only end lower on another graph or order: make_plan is never above the plan
// without in-place ops of the same graph and order. With no rewrite found (the path without
// in-place ops meets the same graphs) and one possible order, it meets neither.
bool other_path_can_differ(const PathEnd& end, bool reorder) {
  for (const TransformReport& report : end.reports)
    if (report.name != kReorder && !report.changes.empty()) return true;
  return reorder && !only_one_order(end.planned.graph);
}

PathOptions path_options(const PipelineOptions& options, bool reorder, bool inplace) {
  PathOptions path{options.plan, std::nullopt, options.force_reorder};
  if (!inplace) path.plan.liveness.inplace_depthwise = path.plan.liveness.inplace_elementwise = false;
  if (reorder) {
    path.schedule = options.schedule;
    path.schedule->liveness = path.plan.liveness;
    path.schedule->alignment = path.plan.alignment;
  }
  return path;
}

// The transform names asked for, checked, in pipeline order; reorder added when it is forced.
std::vector<std::string> checked_transforms(const PipelineOptions& options) {
  if (options.force_reorder && !options.plan.order.empty())
    throw std::invalid_argument("give either order or reorder=True, not both");
  std::vector<std::string> known = transforms::transform_names();
  known.push_back(kReorder);
  for (const std::string& name : options.transforms) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string all;
    for (const std::string& k : known) all += (all.empty() ? "" : ", ") + k;
    throw std::invalid_argument("unknown transform '" + name + "': use " + all);
  }
  std::vector<std::string> names;
  for (const std::string& name : known) {
    const bool asked = std::find(options.transforms.begin(), options.transforms.end(), name) != options.transforms.end();
    if (asked || (name == kReorder && options.force_reorder)) names.push_back(name);
  }
  if (!options.plan.order.empty() && !names.empty())
    throw std::invalid_argument("give either order or transforms (they renumber and reorder ops), not both");
  return names;
}

}  // namespace

PipelineResult run_pipeline(const graph::Graph& model, const PipelineOptions& options) {
  std::vector<std::string> names = checked_transforms(options);
  PipelineResult result;
  if (options.interface.int8_io || options.interface.nhwc_input) {
    transforms::TransformResult chosen = transforms::io_boundary(model, options.interface);
    result.graph = std::move(chosen.graph);
    result.interface = std::move(chosen.rewrites);
  } else {
    result.graph = model;
  }
  if (!options.plan.order.empty() || names.empty()) {
    result.plan = make_plan(result.graph, options.plan);
    return result;
  }
  const bool reorder = names.back() == kReorder;
  if (reorder) names.pop_back();
  const bool inplace = options.plan.liveness.inplace_depthwise || options.plan.liveness.inplace_elementwise;
  PathEnd end = follow_path(path_options(options, reorder, inplace), result.graph, names);
  if (inplace && other_path_can_differ(end, reorder)) {  // step 5
    PathEnd without = follow_path(path_options(options, reorder, false), result.graph, names);
    if (without.planned.best().peak_bytes < end.planned.best().peak_bytes) {
      PlanOptions with_inplace = options.plan;
      with_inplace.order = without.planned.best().liveness.order;
      without.planned.file = make_plan(without.planned.graph, with_inplace);
      without.planned.reordered = false;
      end = std::move(without);
    }
  }
  result.graph = std::move(end.planned.graph);
  result.plan = std::move(end.planned).take_best();
  result.transforms = std::move(end.reports);
  result.schedule = std::move(end.kept_schedule);
  return result;
}

}  // namespace tinyarena::plan
