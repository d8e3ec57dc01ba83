// The memory a partial schedule holds, in the liveness stage's terms, so a
// search over op orders optimises exactly what the planner will measure.
// Tensors joined by views or placements form one component (one buffer for
// its whole life); an in-place op writes its output component over a dying input one.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/liveness/liveness.h"

namespace tinyarena::schedule {

// A set of ops as bits: bit i of word i / 64 is op i.
inline bool has_op(const uint64_t* set, int32_t op) { return (set[op >> 6] >> (op & 63)) & 1; }
inline void add_op(uint64_t* set, int32_t op) { set[op >> 6] |= uint64_t{1} << (op & 63); }

// A group of activation tensors sharing storage (views, placements): one
// buffer, one lifetime, made by the first of its writers to run.
struct Component {
  int64_t size = 0;               // bytes the group covers, aligned up
  bool pinned = false;            // holds a graph output or a variable: lives to the end
  bool source = false;            // its base has no producer: live from step 0
  std::vector<int32_t> consumers; // ops reading any member, ascending, each once
  std::vector<int32_t> writers;   // ops writing a member that no view or elided op joined, ascending
};

struct OpInfo {
  std::vector<int32_t> preds;    // ops that must run before it, ascending, each once
  std::vector<int32_t> uses;     // components it reads, each once
  std::vector<int32_t> births;   // components whose base tensor it writes
  std::vector<int32_t> victims;  // components it may write over, liveness's preference first
  int32_t out = -1;              // the component an in-place write lands in
  int64_t scratch = 0;           // aligned kernel scratch when it runs out of place
  int64_t inplace_scratch = 0;   // aligned scratch when it runs in place
};

struct MemoryModel {
  int32_t ops = 0;
  int32_t words = 0;  // uint64_t words of an op set
  std::vector<Component> components;
  std::vector<OpInfo> op;
  int64_t start_bytes = 0;       // sources live before the first op
  int64_t first_step_only = 0;   // part of start_bytes nobody reads: freed after step 0
  // False when a view changes byte size, which the liveness charges back in time.
  bool exact = true;
};

// A live component whose buffer is larger than its own tensors: it was
// written in place over a larger input (a strided depthwise, for one).
struct Inflation {
  int32_t component = 0;
  int64_t size = 0;
};

// What a search knows after some ops ran: the set, the oversized buffers
// (ascending by component) and the bytes live before the next op.
struct MemoryState {
  std::vector<uint64_t> done;
  std::vector<Inflation> inflated;
  int64_t bytes = 0;
};

MemoryModel build_memory_model(const graph::Graph& graph, const liveness::LivenessOptions& options,
                               int64_t alignment);

MemoryState initial_state(const MemoryModel& model);
// All of `op`'s predecessors are in `done` and `op` is not.
bool is_ready(const MemoryModel& model, const uint64_t* done, int32_t op);

// Bytes live while `op` runs from the state (`done`, `inflated`, `bytes`):
// buffers still needed, its new outputs and its scratch. Fills `after`'s
// inflated list and bytes (not its op set).
int64_t run_op(const MemoryModel& model, const uint64_t* done, const std::vector<Inflation>& inflated,
               int64_t bytes, int32_t op, MemoryState& after);

// The model's peak for a full order (op indices, each once, topological).
int64_t model_peak(const MemoryModel& model, const std::vector<int32_t>& order);

}  // namespace tinyarena::schedule
