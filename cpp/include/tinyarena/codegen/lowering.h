// Lowering: planned graph -> Program. Each op maps to one call into the
// kernel library, with its parameters computed exactly as TFLite's
// reference kernels prepare them (multipliers, activation ranges, padding).
// Views (RESHAPE, SQUEEZE, EXPAND_DIMS) share their input's buffer and emit
// nothing, as do ops the transforms elided (zero-copy concatenation/split):
// their producers write straight into the slices, at strided addresses.
#pragma once

#include <string>
#include <vector>

#include "tinyarena/allocation/hierarchy.h"
#include "tinyarena/codegen/program.h"
#include "tinyarena/graph/graph.h"
#include "tinyarena/plan/plan.h"

namespace tinyarena::codegen {

// Where a planned buffer lives at run time: an arena (C array) and an offset in it.
struct BufferLocation {
  std::string arena = kSingleArena;
  int64_t offset = 0;
};

// What a per-op lowering function may ask about the planned graph.
class LoweringContext {
 public:
  // Every buffer at its planned offset in the single arena.
  LoweringContext(const graph::Graph& graph, const plan::Plan& plan);
  // Buffer b of the plan at locations[b].
  LoweringContext(const graph::Graph& graph, const plan::Plan& plan, std::vector<BufferLocation> locations);

  const graph::Graph& graph() const { return graph_; }
  const plan::Plan& plan() const { return plan_; }
  // Where tensor `index` lives; throws if it has no planned buffer.
  TensorRef tensor(int32_t index) const;
  // A C expression for the tensor's address, e.g. `(int8_t *)(ta_arena + 4096)`.
  std::string address(int32_t index) const;
  // A C expression for the op's scratch buffer, or `NULL` if it has none.
  std::string scratch_address(int32_t op_index) const;
  int64_t scratch_bytes(int32_t op_index) const;
  // A C expression for the state an op keeps across a row stream's calls (a
  // row reduction's int32 sums: an activation buffer without tensors); throws if none.
  std::string state_address(int32_t op_index) const;
  // Elements between pixels of a tensor stored as a channel slice of a
  // zero-copy concatenation (its placement), 0 when dense.
  int32_t pix_stride(int32_t index) const;
  // True when the plan runs the op in place (its output over its first input).
  bool in_place(const graph::Op& op) const;
  // The layout of the op's weights in the SIMD builds (the plan's weight_layouts).
  op_params::WeightLayout weight_layout(const graph::Op& op) const {
    return op_params::layout_of(graph_, plan_.weight_layouts.layouts, op);
  }

 private:
  const graph::Graph& graph_;
  const plan::Plan& plan_;
  std::vector<BufferLocation> locations_;  // per plan buffer
  std::vector<int32_t> scratch_buffer_of_op_;
};

// `name` becomes the C identifier in tinyarena_<name>_invoke. Throws
// UnsupportedError naming the first op (index and type) the library lacks.
Program lower_program(const graph::Graph& graph, const plan::Plan& plan, const std::string& name);

// The same with the plan's buffers placed across a memory hierarchy
// (`placement` of place_in_hierarchy, one entry per plan buffer): one arena
// per used memory, each buffer at its offset in its memory's arena. Throws
// std::invalid_argument for a placement of other buffers or memory names that
// are not distinct C identifiers.
Program lower_program(const graph::Graph& graph, const plan::Plan& plan, const std::string& name,
                      const std::vector<allocation::Memory>& memories,
                      const allocation::HierarchySolution& placement);

// One op's kernel call; throws UnsupportedError naming the op the library lacks.
KernelCall lower_call(const LoweringContext& context, const graph::Op& op);
// The model input or output `tensor` as the API sees it.
ModelIO model_io(const LoweringContext& context, int32_t tensor);

// Why compile would reject `graph`: one UnsupportedError message per op the
// library cannot run (e.g. "op 3 (ELU) has no kernel in tinyarena's library")
// or model input/output without a buffer, ops in file order; empty when all
// lower. It runs compile's own lowering on a plan of the graph in file order
// with scratch and no in-place ops (the planner merges an op in place only when
// its kernel can run so), discarding the calls.
std::vector<std::string> compile_issues(const graph::Graph& graph);

// Ops the kernel library can run (builtin op names): op_params::supported_ops(),
// each checked to have its lowering.
std::vector<std::string> supported_op_types();

}  // namespace tinyarena::codegen
