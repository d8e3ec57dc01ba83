#include <algorithm>

#include "tinyarena/schedule/search.h"

namespace tinyarena::schedule {

Found greedy_order(const MemoryModel& model, bool step_first) {
  std::vector<int32_t> waiting(model.ops);            // predecessors not yet run
  std::vector<std::vector<int32_t>> successors(model.ops);
  std::vector<int32_t> ready;                         // ascending op indices
  for (int32_t op = 0; op < model.ops; ++op) {
    waiting[op] = static_cast<int32_t>(model.op[op].preds.size());
    for (int32_t p : model.op[op].preds) successors[p].push_back(op);
    if (waiting[op] == 0) ready.push_back(op);
  }
  MemoryState state = initial_state(model), trial, chosen;
  Found found;
  found.peak = model.ops == 0 ? state.bytes : 0;
  while (!ready.empty()) {
    size_t best = 0;
    int64_t best_key[2] = {0, 0};
    for (size_t i = 0; i < ready.size(); ++i) {
      const int64_t step = run_op(model, state.done.data(), state.inflated, state.bytes, ready[i], trial);
      const int64_t key[2] = {step_first ? step : trial.bytes, step_first ? trial.bytes : step};
      if (i > 0 && !std::lexicographical_compare(key, key + 2, best_key, best_key + 2)) continue;
      best = i;
      std::copy(key, key + 2, best_key);
      std::swap(chosen, trial);
    }
    const int32_t op = ready[best];
    found.peak = std::max(found.peak, step_first ? best_key[0] : best_key[1]);
    found.order.push_back(op);
    add_op(state.done.data(), op);
    state.inflated.swap(chosen.inflated);
    state.bytes = chosen.bytes;
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
    for (int32_t s : successors[op])
      if (--waiting[s] == 0) ready.insert(std::upper_bound(ready.begin(), ready.end(), s), s);
  }
  return found;
}

}  // namespace tinyarena::schedule

namespace tinyarena::schedule {

Found demand_order(const MemoryModel& model) {
  // The file order is topological, so a predecessor's index is below its op's.
  std::vector<int32_t> depth(model.ops, 1);
  std::vector<bool> read(model.ops, false), placed(model.ops, false);
  for (int32_t op = 0; op < model.ops; ++op)
    for (int32_t p : model.op[op].preds) {
      depth[op] = std::max(depth[op], depth[p] + 1);
      read[p] = true;
    }
  std::vector<std::vector<int32_t>> preds(model.ops);  // deepest first, then by index
  for (int32_t op = 0; op < model.ops; ++op) {
    preds[op] = model.op[op].preds;
    std::stable_sort(preds[op].begin(), preds[op].end(), [&](int32_t a, int32_t b) { return depth[a] > depth[b]; });
  }
  Found found;
  std::vector<std::pair<int32_t, size_t>> stack;  // (op, predecessors visited)
  for (int32_t root = 0; root < model.ops; ++root) {
    if (read[root]) continue;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [op, next] = stack.back();
      if (next < preds[op].size()) {
        const int32_t p = preds[op][next++];
        if (!placed[p]) stack.push_back({p, 0});
        continue;
      }
      if (!placed[op]) {
        placed[op] = true;
        found.order.push_back(op);
      }
      stack.pop_back();
    }
  }
  found.peak = model_peak(model, found.order);
  return found;
}

}  // namespace tinyarena::schedule
