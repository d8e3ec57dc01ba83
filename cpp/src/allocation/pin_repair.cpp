#include "tinyarena/allocation/pin_repair.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "tinyarena/allocation/guillotine.h"
#include "tinyarena/allocation/validator.h"
#include "tinyarena/common/deep_stack.h"

namespace tinyarena::allocation {
namespace {

constexpr int64_t kNodeWork = 20;  // per node of the cut tree built or arranged, per gap-filling choice

// A node of a plan's cut tree: a buffer, a stack of layers (bottom up) or
// parts side by side in time, over the address range [0, height) of its own.
struct CutNode {
  enum Kind { kBuffer, kStack, kSideBySide } kind = kBuffer;
  int32_t buffer = -1;            // kBuffer
  int64_t offset_in_node = 0;     // kBuffer: where the buffer lies in the node
  int64_t height = 0;
  std::vector<int32_t> children;  // node indices
  int64_t lowest_pin = -1;        // the lowest pinned offset inside, -1 if none
  int64_t top_of_pins = -1;       // the highest end of a pinned buffer inside
  bool unaligned = true;          // no buffer inside has an alignment: it goes at any base
  int64_t lowest_base() const { return top_of_pins - height; }  // with pins: the bases that keep
  int64_t highest_base() const { return lowest_pin; }           // every pin inside
};

class Repair {
 public:
  Repair(const Problem& p, const std::vector<int64_t>& relaxed, WorkBudget& budget)
      : p_(p), relaxed_(relaxed), budget_(budget), offsets_(p.buffers.size(), 0) {}

  // The cut tree of the relaxed plan over [0, height); false if it has none
  // (a part the cuts do not split) or the budget ran out.
  bool build(int64_t height) {
    std::vector<int32_t> all;
    for (size_t b = 0; b < p_.buffers.size(); ++b)
      if (p_.buffers[b].size > 0) all.push_back(static_cast<int32_t>(b));
    return !all.empty() && node(all, 0, height) >= 0;
  }

  // Arranges the whole tree at base 0.
  bool arrange() { return arrange(0, 0); }
  const std::vector<int64_t>& offsets() const { return offsets_; }

 private:
  int64_t size(int32_t b) const { return p_.buffers[b].size; }
  bool spend() { return budget_.charge(kNodeWork); }

  // The node of `buffers` over [lo, hi) of the relaxed plan; -1 on failure.
  int32_t node(std::vector<int32_t> buffers, int64_t lo, int64_t hi) {
    if (!spend()) return -1;
    const auto index = static_cast<int32_t>(nodes_.size());
    nodes_.push_back(CutNode{});
    nodes_[index].height = hi - lo;
    if (buffers.size() == 1) {
      nodes_[index].buffer = buffers[0];
      nodes_[index].offset_in_node = relaxed_[buffers[0]] - lo;
    } else if (!split(index, buffers, lo, hi)) {
      return -1;
    }
    summarize(index);
    return index;
  }

  // Splits by address (a stack) where no buffer crosses an offset, else by
  // time; false if neither cuts the buffers.
  bool split(int32_t index, std::vector<int32_t>& buffers, int64_t lo, int64_t hi) {
    std::sort(buffers.begin(), buffers.end(), [&](int32_t a, int32_t b) {
      return std::pair(relaxed_[a], a) < std::pair(relaxed_[b], b);
    });
    std::vector<std::pair<size_t, int64_t>> layers = runs(buffers, [&](int32_t b) { return relaxed_[b]; },
                                                          [&](int32_t b) { return relaxed_[b] + size(b); });
    if (layers.size() > 1) {
      nodes_[index].kind = CutNode::kStack;
      for (size_t k = 0; k < layers.size(); ++k) {
        const int64_t from = k == 0 ? lo : layers[k].second, to = k + 1 < layers.size() ? layers[k + 1].second : hi;
        if (!add_child(index, buffers, layers, k, from, to)) return false;
      }
      return true;
    }
    std::sort(buffers.begin(), buffers.end(), [&](int32_t a, int32_t b) {
      return std::pair(p_.buffers[a].first, a) < std::pair(p_.buffers[b].first, b);
    });
    std::vector<std::pair<size_t, int64_t>> parts = runs(buffers, [&](int32_t b) { return int64_t{p_.buffers[b].first}; },
                                                         [&](int32_t b) { return int64_t{p_.buffers[b].last} + 1; });
    if (parts.size() < 2) return false;
    nodes_[index].kind = CutNode::kSideBySide;
    for (size_t k = 0; k < parts.size(); ++k)
      if (!add_child(index, buffers, parts, k, lo, hi)) return false;
    return true;
  }

  // Runs of `sorted` (by `begin`) that no interval [begin, end) joins: each
  // run's first position and its begin.
  template <class Begin, class End>
  static std::vector<std::pair<size_t, int64_t>> runs(const std::vector<int32_t>& sorted, Begin begin, End end) {
    std::vector<std::pair<size_t, int64_t>> found;
    int64_t reach = 0;
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (i == 0 || begin(sorted[i]) >= reach) found.emplace_back(i, begin(sorted[i]));
      reach = std::max(i == 0 ? end(sorted[i]) : reach, end(sorted[i]));
    }
    return found;
  }

  bool add_child(int32_t index, const std::vector<int32_t>& buffers, const std::vector<std::pair<size_t, int64_t>>& runs,
                 size_t k, int64_t lo, int64_t hi) {
    const size_t to = k + 1 < runs.size() ? runs[k + 1].first : buffers.size();
    const int32_t child = node({buffers.begin() + static_cast<std::ptrdiff_t>(runs[k].first),
                                buffers.begin() + static_cast<std::ptrdiff_t>(to)}, lo, hi);
    if (child < 0) return false;
    nodes_[index].children.push_back(child);
    return true;
  }

  // The node's lowest pin, the top of its pins and whether it is unaligned.
  void summarize(int32_t index) {
    CutNode& n = nodes_[index];
    const auto add = [&](int64_t pin, int64_t pin_end) {
      n.lowest_pin = n.lowest_pin < 0 ? pin : std::min(n.lowest_pin, pin);
      n.top_of_pins = std::max(n.top_of_pins, pin_end);
    };
    if (n.kind == CutNode::kBuffer) {
      const Buffer& x = p_.buffers[n.buffer];
      if (x.fixed_offset) add(*x.fixed_offset, *x.fixed_offset + x.size);
      n.unaligned = x.alignment <= 1;
    }
    for (int32_t c : n.children) {
      if (nodes_[c].lowest_pin >= 0) add(nodes_[c].lowest_pin, nodes_[c].top_of_pins);
      n.unaligned = n.unaligned && nodes_[c].unaligned;
    }
  }

  // Places node `index` at `base`, every pin on its offset and every buffer
  // aligned; false if it cannot be.
  bool arrange(int32_t index, int64_t base) {
    if (!spend()) return false;
    const CutNode& n = nodes_[index];
    if (n.lowest_pin >= 0 && (base < n.lowest_base() || base > n.highest_base())) return false;
    switch (n.kind) {
      case CutNode::kBuffer: {
        const Buffer& x = p_.buffers[n.buffer];
        const int64_t at = base + n.offset_in_node;
        offsets_[n.buffer] = at;
        return (!x.fixed_offset || *x.fixed_offset == at) && at % x.alignment == 0;
      }
      case CutNode::kSideBySide:
        return std::all_of(n.children.begin(), n.children.end(), [&](int32_t c) { return arrange(c, base); });
      case CutNode::kStack:
        return arrange_stack(n, base);
    }
    return false;
  }

  // A stack's layers with pins in the order of their lowest pins, the
  // layers without filling the gaps below and between them, the rest on top.
  struct Stack {
    std::vector<int32_t> pinned, free;  // free: largest first
    std::vector<char> used;             // per free layer
  };
  bool arrange_stack(const CutNode& n, int64_t base) {
    Stack s;
    for (int32_t c : n.children) (nodes_[c].lowest_pin >= 0 ? s.pinned : s.free).push_back(c);
    std::stable_sort(s.pinned.begin(), s.pinned.end(),
                     [&](int32_t a, int32_t b) { return nodes_[a].lowest_pin < nodes_[b].lowest_pin; });
    std::stable_sort(s.free.begin(), s.free.end(), [&](int32_t a, int32_t b) { return nodes_[a].height > nodes_[b].height; });
    s.used.assign(s.free.size(), 0);
    return place_pinned(s, 0, base);
  }

  // Places s.pinned[k..] from `floor` up.
  bool place_pinned(Stack& s, size_t k, int64_t floor) {
    if (k == s.pinned.size()) {
      for (size_t j = 0; j < s.free.size(); ++j) {
        if (s.used[j]) continue;
        if (!arrange(s.free[j], floor)) return false;
        floor += nodes_[s.free[j]].height;
      }
      return true;
    }
    return fill_gap(s, k, 0, floor);
  }

  // Stacks unused free layers from j on at `top` up to a base of
  // s.pinned[k], places it there and the rest above it.
  bool fill_gap(Stack& s, size_t k, size_t j, int64_t top) {
    if (!spend()) return false;
    const CutNode& pinned = nodes_[s.pinned[k]];
    if (top > pinned.highest_base()) return false;
    if (top >= pinned.lowest_base() && arrange(s.pinned[k], top) && place_pinned(s, k + 1, top + pinned.height)) return true;
    int64_t reach = top;  // the unused free layers from j on cannot lift the next base past it
    for (size_t i = j; i < s.free.size(); ++i) reach += s.used[i] ? 0 : nodes_[s.free[i]].height;
    if (reach < pinned.lowest_base()) return false;
    int64_t failed_height = -1;  // a layer like the last one tried (same height, unaligned) fails alike
    for (; j < s.free.size(); ++j) {
      const CutNode& layer = nodes_[s.free[j]];
      if (s.used[j] || top + layer.height > pinned.highest_base()) continue;
      if (layer.unaligned && layer.height == failed_height) continue;
      if (!arrange(s.free[j], top)) continue;
      s.used[j] = 1;
      if (fill_gap(s, k, j + 1, top + layer.height)) return true;
      s.used[j] = 0;
      if (budget_.spent()) return false;
      failed_height = layer.unaligned ? layer.height : -1;
    }
    return false;
  }

  const Problem& p_;
  const std::vector<int64_t>& relaxed_;
  WorkBudget& budget_;
  std::vector<CutNode> nodes_;
  std::vector<int64_t> offsets_;
};

// The relaxed plan rearranged to honour the pins, if that works (validated:
// a slip in the rearrangement can cost the plan, never give a wrong one).
std::optional<Solution> rearranged(const Problem& problem, const Solution& relaxed, int64_t height, WorkBudget& budget) {
  Repair repair(problem, relaxed.offsets, budget);
  if (!repair.build(height) || !repair.arrange()) return std::nullopt;
  std::vector<int64_t> offsets = repair.offsets();
  for (size_t b = 0; b < problem.buffers.size(); ++b)
    if (problem.buffers[b].size == 0) offsets[b] = problem.buffers[b].fixed_offset.value_or(0);
  Solution plan{offsets, solution_height(problem, offsets)};
  if (!validate(problem, plan, 1).empty()) return std::nullopt;
  return plan;
}

PinRepairResult repair_pins(const Problem& problem, int64_t height, WorkBudget budget) {
  check_pins(problem);
  PinRepairResult result;
  Problem relaxed = problem;
  bool any_pin = false;
  for (Buffer& b : relaxed.buffers) any_pin |= std::exchange(b.fixed_offset, std::nullopt).has_value();
  if (any_pin) {
    GuillotineOptions options;
    options.budget = budget.share(1.0);
    const GuillotineResult nested = guillotine_search(relaxed, height, options);
    if (nested.solution) result.solution = rearranged(problem, *nested.solution, height, budget);
  }
  result.work = budget.used();
  return result;
}

}  // namespace

PinRepairResult pin_repair_search(const Problem& problem, int64_t height, WorkBudget budget) {
  return on_deep_stack(problem.buffers.size(), [&] { return repair_pins(problem, height, budget); });
}

}  // namespace tinyarena::allocation
