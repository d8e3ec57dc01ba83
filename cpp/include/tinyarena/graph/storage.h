// Tensors that share memory whatever the schedule: a view's output (RESHAPE,
// SQUEEZE, EXPAND_DIMS) aliases its input, a placed tensor sits at a byte
// offset inside its base (zero-copy concatenation and splitting). Kept as a
// weighted union-find: each tensor knows its offset from its group's root,
// each root the byte range its group covers. A fact of the graph, below every
// stage that needs it: zero-copy transforms, the schedule's memory model and
// liveness all start from these groups.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/graph/graph.h"

namespace tinyarena::graph {

// RESHAPE, SQUEEZE, EXPAND_DIMS: the output aliases input 0.
bool is_view_op(int32_t opcode);

class StorageGroups {
 public:
  // One group per tensor, covering [0, sizes[t]).
  explicit StorageGroups(const std::vector<int64_t>& sizes);

  int32_t root(int32_t t);
  int64_t offset(int32_t t);  // bytes from the root's first byte
  // Puts `b` at `delta` bytes after `a`; false (nothing changes) when they
  // already share a group at another distance. The lower root index stays root.
  bool join(int32_t a, int32_t b, int64_t delta);
  // The group of `t` holds a placed tensor (no in-place writes into it).
  void mark_placed(int32_t t) { placed_[root(t)] = true; }
  bool placed(int32_t t) { return placed_[root(t)]; }
  // Bytes covered by the group of root `r`, relative to its first byte.
  int64_t begin(int32_t r) const { return begin_[r]; }
  int64_t end(int32_t r) const { return end_[r]; }

 private:
  std::vector<int32_t> parent_;
  std::vector<int64_t> delta_;  // offset from the parent
  std::vector<int64_t> begin_, end_;
  std::vector<bool> placed_;
};

// Joins every view op's output to its input 0 and every placed tensor to its
// base, among `active` tensors (those that get memory). Throws ModelError for
// a placement on an inactive tensor, outside its base, or contradicting another.
void join_fixed_storage(const Graph& graph, const std::vector<bool>& active, StorageGroups& groups);

}  // namespace tinyarena::graph
