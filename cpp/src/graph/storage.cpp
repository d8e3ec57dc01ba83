#include "tinyarena/graph/storage.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "tinyarena/common/errors.h"

namespace tinyarena::graph {
namespace {

constexpr int32_t kReshape = 22, kSqueeze = 43, kExpandDims = 70;

}  // namespace

bool is_view_op(int32_t opcode) { return opcode == kReshape || opcode == kSqueeze || opcode == kExpandDims; }

StorageGroups::StorageGroups(const std::vector<int64_t>& sizes)
    : parent_(sizes.size()), delta_(sizes.size(), 0), begin_(sizes.size(), 0), end_(sizes),
      placed_(sizes.size(), false) {
  std::iota(parent_.begin(), parent_.end(), 0);
}

int32_t StorageGroups::root(int32_t t) {
  offset(t);
  return parent_[t];
}

int64_t StorageGroups::offset(int32_t t) {
  if (parent_[t] == t) return 0;
  const int32_t p = parent_[t];
  const int64_t above = offset(p);  // compresses p's path: parent_[p] is now the root
  if (parent_[p] != p) {
    delta_[t] += above;
    parent_[t] = parent_[p];
  }
  return delta_[t];
}

bool StorageGroups::join(int32_t a, int32_t b, int64_t delta) {
  int32_t ra = root(a), rb = root(b);
  // Position of rb's first byte relative to ra's.
  int64_t shift = offset(a) + delta - offset(b);
  if (ra == rb) return shift == 0;
  if (rb < ra) {
    std::swap(ra, rb);
    shift = -shift;
  }
  parent_[rb] = ra;
  delta_[rb] = shift;
  begin_[ra] = std::min(begin_[ra], begin_[rb] + shift);
  end_[ra] = std::max(end_[ra], end_[rb] + shift);
  placed_[ra] = placed_[ra] || placed_[rb];
  return true;
}

void join_fixed_storage(const Graph& graph, const std::vector<bool>& active, StorageGroups& groups) {
  for (const Op& op : graph.ops) {
    if (!is_view_op(op.opcode) || op.inputs.empty() || op.outputs.empty()) continue;
    const int32_t in = op.inputs[0], out = op.outputs[0];
    if (in >= 0 && out >= 0 && active[in] && active[out]) groups.join(in, out, 0);
  }
  for (const Tensor& t : graph.tensors) {
    if (!t.placement) continue;
    const Placement& p = *t.placement;
    const std::string what = "tensor " + std::to_string(t.index) + " '" + t.name + "' placed in tensor " +
                             std::to_string(p.base);
    if (p.base < 0 || p.base >= static_cast<int32_t>(graph.tensors.size()) || !active[p.base] || !active[t.index])
      throw ModelError(what + ": both must be activations");
    const int64_t base_bytes = graph.tensors[p.base].byte_size.value_or(0);
    if (p.offset < 0 || p.offset + t.byte_size.value_or(0) > base_bytes) throw ModelError(what + " lies outside it");
    if (!groups.join(p.base, t.index, p.offset)) throw ModelError(what + " contradicts another placement");
    groups.mark_placed(t.index);
  }
}

}  // namespace tinyarena::graph
