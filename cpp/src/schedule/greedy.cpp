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
