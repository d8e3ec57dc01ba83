#include "tinyarena/tiling/patches.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tinyarena::tiling {
namespace {

std::string label(const graph::Op& op) { return "op " + std::to_string(op.index) + " (" + op.type + ")"; }

struct Region {
  Range rows, cols;
};

Region merge(const Region& a, const Region& b) {
  if (a.rows.empty() || a.cols.empty()) return b;
  if (b.rows.empty() || b.cols.empty()) return a;
  return {{std::min(a.rows.begin, b.rows.begin), std::max(a.rows.end, b.rows.end)},
          {std::min(a.cols.begin, b.cols.begin), std::max(a.cols.end, b.cols.end)}};
}

}  // namespace

Range patch_part(int32_t size, int32_t parts, int32_t index) {
  return {static_cast<int32_t>(int64_t{size} * index / parts), static_cast<int32_t>(int64_t{size} * (index + 1) / parts)};
}

PatchRun run_patches(const graph::Graph& graph, const std::vector<int32_t>& ops, int32_t grid_h, int32_t grid_w,
                     bool stream_input, bool record_regions) {
  return run_patches(graph, GraphFacts(graph), ops, grid_h, grid_w, stream_input, record_regions);
}

PatchRun run_patches(const graph::Graph& graph, const GraphFacts& facts, const std::vector<int32_t>& ops,
                     int32_t grid_h, int32_t grid_w, bool stream_input, bool record_regions) {
  if (ops.empty()) throw std::invalid_argument("a patch segment needs at least one op");
  std::vector<bool> in_segment(graph.ops.size(), false);
  for (int32_t index : ops) {
    if (index < 0 || index >= static_cast<int32_t>(graph.ops.size()))
      throw std::invalid_argument("op " + std::to_string(index) + " does not exist");
    if (!facts.op(index).tileable || streams_rows_only(facts.op(index), graph.ops[index]))
      throw std::invalid_argument(label(graph.ops[index]) + " cannot run on patches");
    in_segment[index] = true;
  }
  PatchRun run;
  run.ops = ops;
  run.grid_h = grid_h;
  run.grid_w = grid_w;
  auto is_io = [&](const std::vector<int32_t>& list, int32_t t) { return std::find(list.begin(), list.end(), t) != list.end(); };
  auto inside_only = [&](const graph::Tensor& t) {
    return !t.consumers.empty() && std::all_of(t.consumers.begin(), t.consumers.end(), [&](int32_t c) { return in_segment[c]; });
  };
  std::vector<bool> patched(graph.tensors.size(), false);  // tensors held as per-patch regions
  for (int32_t index : ops) {
    const graph::Op& op = graph.ops[index];
    for (int32_t t : op.inputs) {
      if (t < 0 || graph.tensors[t].is_constant() || patched[t] || is_io(run.full_inputs, t)) continue;
      const graph::Tensor& tensor = graph.tensors[t];
      if (tensor.producer >= 0 && in_segment[tensor.producer]) continue;
      if (stream_input && is_io(graph.inputs, t) && !is_io(graph.outputs, t) && inside_only(tensor)) patched[t] = true;
      else run.full_inputs.push_back(t);
    }
    const int32_t out = op.outputs[0];
    if (!is_io(graph.outputs, out) && inside_only(graph.tensors[out])) {
      patched[out] = true;
    } else {
      if (run.full_output >= 0)
        throw std::invalid_argument(label(op) + ": a patch segment may write only one tensor read after it");
      run.full_output = out;
    }
  }
  if (run.full_output < 0 || run.full_output != graph.ops[ops.back()].outputs[0])
    throw std::invalid_argument("a patch segment must end with the op whose output leaves it");
  const graph::Tensor& final_out = graph.tensors[run.full_output];
  if (grid_h < 1 || grid_w < 1 || grid_h > final_out.shape[1] || grid_w > final_out.shape[2])
    throw std::invalid_argument("the patch grid " + std::to_string(grid_h) + "x" + std::to_string(grid_w) +
                                " does not fit the segment output " + std::to_string(final_out.shape[1]) + "x" +
                                std::to_string(final_out.shape[2]));

  // Tensors the segment touches, numbered locally.
  std::vector<int32_t> local(graph.tensors.size(), -1), tensors;
  auto number = [&](int32_t t) {
    if (local[t] < 0) local[t] = static_cast<int32_t>(tensors.size()), tensors.push_back(t);
  };
  for (int32_t index : ops) {
    const graph::Op& op = graph.ops[index];
    for (int32_t t : op.inputs)
      if (t >= 0 && !graph.tensors[t].is_constant()) number(t);
    number(op.outputs[0]);
  }
  std::vector<Region> largest(tensors.size());
  run.op_scratch.assign(ops.size(), 0);
  run.op_macs.assign(ops.size(), 0);
  for (int32_t ph = 0; ph < grid_h; ++ph) {
    for (int32_t pw = 0; pw < grid_w; ++pw) {
      // Backwards from the output patch: the region of every tensor the patch needs.
      std::vector<Region> need(tensors.size());
      need[local[run.full_output]] = {patch_part(final_out.shape[1], grid_h, ph),
                                      patch_part(final_out.shape[2], grid_w, pw)};
      for (size_t i = ops.size(); i-- > 0;) {
        const graph::Op& op = graph.ops[ops[i]];
        const OpFacts& f = facts.op(op.index);
        const Region out = need[local[op.outputs[0]]];
        if (out.rows.empty() || out.cols.empty()) continue;
        run.op_macs[i] += f.macs_per_pixel * out.rows.size() * out.cols.size();
        run.op_scratch[i] = std::max(run.op_scratch[i], f.scratch.bytes(out.rows.size(), out.cols.size()));
        for (size_t position = 0; position < op.inputs.size(); ++position) {
          const int32_t u = op.inputs[position];
          if (u < 0 || graph.tensors[u].is_constant()) continue;
          const Region in{map_range(f.rows[position], out.rows), map_range(f.cols[position], out.cols)};
          need[local[u]] = merge(need[local[u]], in);
        }
      }
      if (record_regions)
        for (const Region& r : need) run.regions.insert(run.regions.end(), {r.rows.begin, r.rows.end, r.cols.begin, r.cols.end});
      for (size_t l = 0; l < tensors.size(); ++l) {
        const int64_t area = int64_t{need[l].rows.size()} * need[l].cols.size();
        if (patched[tensors[l]] && area > int64_t{largest[l].rows.size()} * largest[l].cols.size()) largest[l] = need[l];
      }
    }
  }
  for (size_t l = 0; l < tensors.size(); ++l) {
    if (!patched[tensors[l]]) continue;
    const Region& r = largest[l];
    run.buffers.push_back({tensors[l], r.rows.size(), r.cols.size(),
                           int64_t{r.rows.size()} * r.cols.size() * graph.tensors[tensors[l]].shape[3]});
  }
  for (int64_t m : run.op_macs) run.macs += m;
  run.tensors = tensors;
  std::sort(run.buffers.begin(), run.buffers.end(),
            [](const PatchBuffer& a, const PatchBuffer& b) { return a.tensor < b.tensor; });
  return run;
}

}  // namespace tinyarena::tiling
