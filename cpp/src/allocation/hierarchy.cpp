#include "tinyarena/allocation/hierarchy.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "tinyarena/allocation/allocators.h"
#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/validator.h"
#include "tinyarena/common/alignment.h"
#include "tinyarena/common/format.h"

namespace tinyarena::allocation {
namespace {

// Components with more optional buffers than this are chosen greedily.
constexpr size_t kExactGroupLimit = 16;

std::string label(const Problem& p, size_t i) {
  return "buffer " + std::to_string(i) + (p.buffers[i].name.empty() ? "" : " '" + p.buffers[i].name + "'");
}

// Buffers grouped by "inside" relations: each family is placed as one root
// buffer that spans its members in time and address.
struct Families {
  std::vector<int32_t> root;             // per buffer
  std::vector<int64_t> offset_in_root;   // per buffer
  std::vector<int32_t> roots;            // the root buffers, ascending
  std::vector<Buffer> unit;              // per buffer: the family's placement unit (valid at roots)
  std::vector<int64_t> accessed;         // per buffer: the family's accessed bytes (valid at roots)
  std::vector<std::vector<bool>> allowed;  // per buffer, per memory (valid at roots)
};

const BufferRules& rules_of(const HierarchyProblem& h, size_t i) {
  static const BufferRules none;
  return i < h.rules.size() ? h.rules[i] : none;
}

void resolve_root(const HierarchyProblem& h, size_t i, Families& f) {
  const size_t n = h.problem.buffers.size();
  int64_t offset = 0;
  size_t at = i;
  for (size_t depth = 0; rules_of(h, at).inside >= 0; ++depth) {
    const int32_t parent = rules_of(h, at).inside;
    if (depth >= n || parent < 0 || static_cast<size_t>(parent) >= n || static_cast<size_t>(parent) == at)
      throw std::invalid_argument(label(h.problem, i) + " has a cyclic or out-of-range 'inside' relation");
    offset += rules_of(h, at).inside_offset;
    at = static_cast<size_t>(parent);
  }
  f.root[i] = static_cast<int32_t>(at);
  f.offset_in_root[i] = offset;
}

// The least common multiple of two alignments: an offset aligned to it is
// aligned to both (the larger alone is not enough: 16 is not a multiple of 3).
int64_t common_alignment(int64_t a, int64_t b, const std::string& what) {
  const int64_t both = std::lcm(std::max<int64_t>(a, 1), std::max<int64_t>(b, 1));
  if (both > kMaxAlignment) throw std::invalid_argument(what + ": alignments with no common multiple up to 2^40");
  return both;
}

void merge_into_root(const HierarchyProblem& h, size_t i, Families& f) {
  const Buffer& b = h.problem.buffers[i];
  const int32_t r = f.root[i];
  Buffer& unit = f.unit[r];
  unit.first = std::min(unit.first, b.first);
  unit.last = std::max(unit.last, b.last);
  unit.size = std::max(unit.size, f.offset_in_root[i] + b.size);
  if (f.offset_in_root[i] % std::max<int64_t>(b.alignment, 1) != 0)
    throw std::invalid_argument(label(h.problem, i) + " lies " + std::to_string(f.offset_in_root[i]) +
                                " bytes into its root buffer, which its alignment of " + std::to_string(b.alignment) +
                                " does not divide");
  unit.alignment = common_alignment(unit.alignment, b.alignment, label(h.problem, i));
  if (b.fixed_offset) {
    const int64_t root_offset = *b.fixed_offset - f.offset_in_root[i];
    if (unit.fixed_offset && *unit.fixed_offset != root_offset)
      throw std::invalid_argument(label(h.problem, i) + " is pinned at an offset its family contradicts");
    unit.fixed_offset = root_offset;
  }
  const BufferRules& rules = rules_of(h, i);
  f.accessed[r] += rules.accessed_bytes >= 0 ? rules.accessed_bytes : b.size;
  for (size_t m = 0; m < h.memories.size(); ++m) {
    const bool blocked = std::find(rules.blocked.begin(), rules.blocked.end(), static_cast<int32_t>(m)) != rules.blocked.end();
    if (blocked || (rules.memory >= 0 && rules.memory != static_cast<int32_t>(m))) f.allowed[r][m] = false;
  }
}

// A buffer pinned to a memory at an offset: aligned there and inside it.
void check_pinned_offset(const HierarchyProblem& h, size_t i) {
  const Buffer& b = h.problem.buffers[i];
  const Memory& memory = h.memories[static_cast<size_t>(rules_of(h, i).memory)];
  const int64_t offset = *b.fixed_offset;
  const std::string where =
      "pin of " + label(h.problem, i) + " at offset " + std::to_string(offset) + " in memory '" + memory.name + "'";
  const int64_t alignment = common_alignment(b.alignment, memory.alignment, where);
  if (offset < 0 || offset % alignment != 0)
    throw std::invalid_argument(where + ": the offset must be a multiple of " + std::to_string(alignment) +
                                " bytes (the buffer's and the memory's alignment)");
  if (offset + b.size > memory.size)
    throw std::invalid_argument(where + ": the buffer (" + with_thousands(b.size) + " B) ends at " +
                                with_thousands(offset + b.size) + " B, past the memory's " +
                                with_thousands(memory.size) + " B");
}

// No two buffers pinned at offsets of one memory overlap in time and address.
void check_pins_apart(const HierarchyProblem& h, const std::vector<size_t>& pinned) {
  for (size_t x = 0; x < pinned.size(); ++x) {
    for (size_t y = x + 1; y < pinned.size(); ++y) {
      const size_t i = pinned[x], j = pinned[y];
      const Buffer &a = h.problem.buffers[i], &b = h.problem.buffers[j];
      if (rules_of(h, i).memory != rules_of(h, j).memory || !pins_collide(a, b)) continue;
      throw std::invalid_argument("buffers " + std::to_string(i) + " and " + std::to_string(j) +
                                  " are pinned at overlapping addresses of memory '" +
                                  h.memories[static_cast<size_t>(rules_of(h, i).memory)].name +
                                  "' while both are live (ops " + std::to_string(std::max(a.first, b.first)) + " to " +
                                  std::to_string(std::min(a.last, b.last)) + ")");
    }
  }
}

// The rules and pins as given, before any family is formed.
void check_rules(const HierarchyProblem& h) {
  for (const Memory& memory : h.memories) check_memory(memory);
  const size_t n = h.problem.buffers.size();
  if (!h.rules.empty() && h.rules.size() != n) throw std::invalid_argument("give one BufferRules per buffer, or none");
  std::vector<size_t> pinned;
  for (size_t i = 0; i < n; ++i) {
    const int32_t memory = rules_of(h, i).memory;
    if (memory >= static_cast<int32_t>(h.memories.size()))
      throw std::invalid_argument(label(h.problem, i) + " is pinned to memory " + std::to_string(memory) +
                                  ", which does not exist");
    if (memory < 0 || !h.problem.buffers[i].fixed_offset || h.problem.buffers[i].size <= 0) continue;
    check_pinned_offset(h, i);
    pinned.push_back(i);
  }
  check_pins_apart(h, pinned);
}

Families resolve_families(const HierarchyProblem& h) {
  const size_t n = h.problem.buffers.size();
  check_rules(h);
  Families f;
  f.root.assign(n, -1);
  f.offset_in_root.assign(n, 0);
  f.unit = h.problem.buffers;
  for (Buffer& unit : f.unit) unit.fixed_offset.reset();
  f.accessed.assign(n, 0);
  f.allowed.assign(n, std::vector<bool>(h.memories.size(), true));
  for (size_t i = 0; i < n; ++i) resolve_root(h, i, f);
  for (size_t i = 0; i < n; ++i) merge_into_root(h, i, f);
  for (size_t i = 0; i < n; ++i) {
    if (f.root[i] == static_cast<int32_t>(i)) f.roots.push_back(static_cast<int32_t>(i));
    if (f.offset_in_root[i] < 0) throw std::invalid_argument(label(h.problem, i) + " lies before the start of its parent");
  }
  return f;
}

// The allocation problem of some roots placed in memory `m`.
Problem unit_problem(const HierarchyProblem& h, const Families& f, const std::vector<int32_t>& roots, size_t m) {
  Problem p;
  for (int32_t r : roots) {
    Buffer unit = f.unit[r];
    const std::string memory = "memory '" + h.memories[m].name + "'";
    unit.alignment = common_alignment(unit.alignment, h.memories[m].alignment, memory);
    if (unit.fixed_offset && *unit.fixed_offset % unit.alignment != 0)
      throw std::invalid_argument(label(h.problem, static_cast<size_t>(r)) + " is pinned at offset " +
                                  std::to_string(*unit.fixed_offset) + " in " + memory + ", which its alignment of " +
                                  std::to_string(unit.alignment) + " there does not divide");
    p.buffers.push_back(unit);
  }
  return p;
}

// The allocator that places each memory's final set of buffers (empty: the greedy placement).
struct Refinement {
  std::string allocator;
  AllocatorOptions options;
};

// Placement of `roots` in memory m within its size, or an empty solution.
Solution fit(const HierarchyProblem& h, const Families& f, const std::vector<int32_t>& roots, size_t m) {
  const Problem p = unit_problem(h, f, roots, m);
  const int64_t size = h.memories[m].size;
  if (lower_bound_bytes(p) > size) return {};
  for (auto allocator : {greedy_size_first_fit, greedy_size_best_fit}) {
    Solution s = allocator(p);
    if (s.height <= size && validate(p, s).empty()) return s;
  }
  return {};
}

// The placement of `roots` in memory m: the refinement's when it is valid, within the memory and no
// higher than the greedy one (or the greedy one overflows), else the greedy one; `result` says which
// and whether it is proven optimal. An empty solution when neither fits.
Solution refined_fit(const HierarchyProblem& h, const Families& f, const std::vector<int32_t>& roots, size_t m,
                     const Refinement& refine, AllocationResult& result) {
  Solution greedy = fit(h, f, roots, m);
  result = AllocationResult{greedy, "greedy", false, 0};
  if (refine.allocator.empty() || roots.empty()) return greedy;
  // No capacity for the allocator: with one it stops at the first plan within it, and here the
  // lowest plan is wanted (the memory's size is checked after).
  const Problem p = unit_problem(h, f, roots, m);
  AllocationResult refined = run_allocator(p, refine.allocator, refine.options);
  const bool fits_memory = refined.solution.height <= h.memories[m].size && validate(p, refined.solution).empty();
  const bool no_worse = greedy.offsets.empty() || refined.solution.height <= greedy.height;
  if (fits_memory && no_worse) result = refined;
  else result.lower_bound = refined.lower_bound;
  return result.solution;
}

bool fits(const HierarchyProblem& h, const Families& f, const std::vector<int32_t>& roots, size_t m) {
  return roots.empty() || !fit(h, f, roots, m).offsets.empty();
}

// Roots connected by overlapping lifetimes: only they compete for addresses.
std::vector<std::vector<int32_t>> components(const Families& f, const std::vector<int32_t>& roots) {
  std::vector<int32_t> sorted = roots;
  std::sort(sorted.begin(), sorted.end(), [&](int32_t a, int32_t b) {
    return std::make_pair(f.unit[a].first, a) < std::make_pair(f.unit[b].first, b);
  });
  std::vector<std::vector<int32_t>> groups;
  int32_t reach = -1;
  for (int32_t r : sorted) {
    if (groups.empty() || f.unit[r].first > reach) groups.emplace_back();
    groups.back().push_back(r);
    reach = std::max(reach, f.unit[r].last);
  }
  return groups;
}

// Exact: the subset of `optional` with the most accessed bytes that fits
// beside `chosen` (branch and bound, most accessed first).
void choose_exact(const HierarchyProblem& h, const Families& f, size_t m, std::vector<int32_t> optional,
                  std::vector<int32_t>& chosen) {
  std::sort(optional.begin(), optional.end(), [&](int32_t a, int32_t b) { return f.accessed[a] > f.accessed[b]; });
  std::vector<int64_t> rest(optional.size() + 1, 0);
  for (size_t i = optional.size(); i-- > 0;) rest[i] = rest[i + 1] + f.accessed[optional[i]];
  std::vector<int32_t> current = chosen, best = chosen;
  int64_t best_accessed = -1;
  const auto search = [&](auto&& self, size_t i, int64_t accessed) -> void {
    if (accessed + rest[i] <= best_accessed) return;
    if (i == optional.size()) {
      best_accessed = accessed;
      best = current;
      return;
    }
    current.push_back(optional[i]);
    if (fits(h, f, current, m)) self(self, i + 1, accessed + f.accessed[optional[i]]);
    current.pop_back();
    self(self, i + 1, accessed);
  };
  search(search, 0, 0);
  chosen = best;
}

// Greedy: add buffers in `order` while they fit beside `chosen`; returns the accessed bytes added.
int64_t add_while_fitting(const HierarchyProblem& h, const Families& f, size_t m, const std::vector<int32_t>& order,
                          std::vector<int32_t>& chosen) {
  int64_t added = 0;
  for (int32_t r : order) {
    chosen.push_back(r);
    if (fits(h, f, chosen, m)) added += f.accessed[r];
    else chosen.pop_back();
  }
  return added;
}

// Greedy, two orders, the one that keeps more accessed bytes: by accessed bytes per byte of size
// (many small, busy buffers), and by accessed bytes (large, busy buffers first).
void choose_greedy(const HierarchyProblem& h, const Families& f, size_t m, std::vector<int32_t> optional,
                   std::vector<int32_t>& chosen) {
  std::vector<int32_t> by_accessed = optional;
  std::stable_sort(optional.begin(), optional.end(), [&](int32_t a, int32_t b) {
    return f.accessed[a] * std::max<int64_t>(f.unit[b].size, 1) > f.accessed[b] * std::max<int64_t>(f.unit[a].size, 1);
  });
  std::stable_sort(by_accessed.begin(), by_accessed.end(),
                   [&](int32_t a, int32_t b) { return f.accessed[a] > f.accessed[b]; });
  std::vector<int32_t> dense = chosen, busy = chosen;
  const int64_t dense_bytes = add_while_fitting(h, f, m, optional, dense);
  const int64_t busy_bytes = add_while_fitting(h, f, m, by_accessed, busy);
  chosen = busy_bytes > dense_bytes ? busy : dense;
}

bool last_allowed(const Families& f, int32_t r, size_t m) {
  for (size_t later = m + 1; later < f.allowed[r].size(); ++later)
    if (f.allowed[r][later]) return false;
  return true;
}

[[noreturn]] void does_not_fit(const HierarchyProblem& h, const Families& f, const std::vector<int32_t>& must, size_t m) {
  const Problem p = unit_problem(h, f, must, m);
  throw std::invalid_argument("the buffers that must live in memory '" + h.memories[m].name + "' need at least " +
                              std::to_string(lower_bound_bytes(p)) + " bytes (greedy placement: " +
                              std::to_string(greedy_size_first_fit(p).height) + "), but it has " +
                              std::to_string(h.memories[m].size));
}

// Roots chosen for memory m: those that must go there, then the most accessed that fit.
std::vector<int32_t> choose_for_memory(const HierarchyProblem& h, const Families& f, size_t m,
                                       const std::vector<int32_t>& unplaced, const Refinement& refine) {
  std::vector<int32_t> must, optional;
  for (int32_t r : unplaced) {
    if (!f.allowed[r][m]) continue;
    const bool pinned = rules_of(h, r).memory == static_cast<int32_t>(m);
    (pinned || last_allowed(f, r, m) ? must : optional).push_back(r);
  }
  AllocationResult must_placed;
  if (!fits(h, f, must, m) && refined_fit(h, f, must, m, refine, must_placed).offsets.empty() && !must.empty())
    does_not_fit(h, f, must, m);
  std::vector<int32_t> chosen = must;
  for (const auto& group : components(f, optional)) {
    std::vector<int32_t> with_group = chosen;
    with_group.insert(with_group.end(), group.begin(), group.end());
    if (fits(h, f, with_group, m)) {
      chosen = with_group;
    } else if (group.size() <= kExactGroupLimit) {
      choose_exact(h, f, m, group, chosen);
    } else {
      choose_greedy(h, f, m, group, chosen);
    }
  }
  return chosen;
}

HierarchySolution expand(const HierarchyProblem& h, const Families& f, const std::vector<std::vector<int32_t>>& chosen,
                         const Refinement& refine) {
  const size_t n = h.problem.buffers.size();
  HierarchySolution s;
  s.memory.assign(n, -1);
  s.offsets.assign(n, 0);
  s.heights.assign(h.memories.size(), 0);
  s.accessed_bytes.assign(h.memories.size(), 0);
  s.proven_optimal.assign(h.memories.size(), false);
  s.lower_bounds.assign(h.memories.size(), 0);
  for (size_t m = 0; m < chosen.size(); ++m) {
    AllocationResult result;
    const Solution placed = refined_fit(h, f, chosen[m], m, refine, result);
    s.proven_optimal[m] = result.proven_optimal || chosen[m].empty();
    s.lower_bounds[m] = std::max(result.lower_bound, lower_bound_bytes(unit_problem(h, f, chosen[m], m)));
    if (placed.offsets.size() != chosen[m].size()) does_not_fit(h, f, chosen[m], m);
    for (size_t k = 0; k < chosen[m].size(); ++k) {
      s.memory[chosen[m][k]] = static_cast<int32_t>(m);
      s.offsets[chosen[m][k]] = placed.offsets[k];
      s.accessed_bytes[m] += f.accessed[chosen[m][k]];
    }
    s.heights[m] = placed.height;
  }
  for (size_t i = 0; i < n; ++i) {
    s.memory[i] = s.memory[f.root[i]];
    s.offsets[i] = s.offsets[f.root[i]] + f.offset_in_root[i];
  }
  return s;
}

void check_placed_all(const HierarchyProblem& h, const Families& f, const std::vector<int32_t>& unplaced) {
  if (unplaced.empty()) return;
  const int32_t r = unplaced.front();
  throw std::invalid_argument(label(h.problem, r) + " (" + std::to_string(f.unit[r].size) +
                              " bytes) fits no memory it is allowed to use");
}

}  // namespace

void check_memory(const Memory& memory) {
  if (memory.size < 0 || memory.alignment < 1)
    throw std::invalid_argument("memory size must be >= 0 and alignment >= 1");
}

HierarchySolution place_in_hierarchy(const HierarchyProblem& h, const std::string& allocator,
                                     const AllocatorOptions& options) {
  const Refinement refine{allocator, options};
  const Families f = resolve_families(h);
  std::vector<int32_t> unplaced = f.roots;
  std::vector<std::vector<int32_t>> chosen(h.memories.size());
  for (size_t m = 0; m < h.memories.size(); ++m) {
    chosen[m] = choose_for_memory(h, f, m, unplaced, refine);
    std::vector<int32_t> left;
    for (int32_t r : unplaced)
      if (std::find(chosen[m].begin(), chosen[m].end(), r) == chosen[m].end()) left.push_back(r);
    unplaced = left;
  }
  check_placed_all(h, f, unplaced);
  return expand(h, f, chosen, refine);
}

HierarchySolution place_fastest_first(const HierarchyProblem& h, const std::string& allocator,
                                      const AllocatorOptions& options) {
  const Families f = resolve_families(h);
  std::vector<int32_t> order = f.roots, unplaced;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return f.unit[a].size > f.unit[b].size; });
  std::vector<std::vector<int32_t>> chosen(h.memories.size());
  for (int32_t r : order) {
    bool placed = false;
    for (size_t m = 0; m < h.memories.size() && !placed; ++m) {
      if (!f.allowed[r][m]) continue;
      chosen[m].push_back(r);
      placed = fits(h, f, chosen[m], m);
      if (!placed) chosen[m].pop_back();
    }
    if (!placed) unplaced.push_back(r);
  }
  check_placed_all(h, f, unplaced);
  return expand(h, f, chosen, Refinement{allocator, options});
}

HierarchySolution place_fewest_bytes(const HierarchyProblem& h, const std::string& allocator,
                                     const AllocatorOptions& options) {
  if (h.memories.size() == 1) return place_in_hierarchy(h, allocator, options);  // one memory: one assignment
  std::vector<HierarchySolution> plans;
  std::string first_error;
  for (auto place : {place_in_hierarchy, place_fastest_first}) {
    try {
      plans.push_back(place(h, allocator, options));
    } catch (const std::invalid_argument& e) {
      if (first_error.empty()) first_error = e.what();
    }
  }
  if (plans.empty()) throw std::invalid_argument(first_error);
  const auto total = [](const HierarchySolution& s) { return std::accumulate(s.heights.begin(), s.heights.end(), int64_t{0}); };
  const auto better = [&](const HierarchySolution& a, const HierarchySolution& b) {
    if (total(a) != total(b)) return total(a) < total(b);
    return a.accessed_bytes > b.accessed_bytes;  // lexicographic: the fastest memory first
  };
  return std::min_element(plans.begin(), plans.end(), better) == plans.begin() ? plans.front() : plans.back();
}

std::vector<std::string> validate_hierarchy(const HierarchyProblem& h, const HierarchySolution& s) {
  std::vector<std::string> errors;
  const Problem& p = h.problem;
  if (s.memory.size() != p.buffers.size() || s.offsets.size() != p.buffers.size())
    return {"solution does not cover every buffer"};
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const int32_t m = s.memory[i];
    const BufferRules& rules = rules_of(h, i);
    if (m < 0 || static_cast<size_t>(m) >= h.memories.size()) {
      errors.push_back(label(p, i) + " is in no memory");
      continue;
    }
    const Memory& memory = h.memories[m];
    if (s.offsets[i] < 0 || s.offsets[i] + p.buffers[i].size > memory.size)
      errors.push_back(label(p, i) + " lies outside memory '" + memory.name + "'");
    if (rules.memory >= 0 && rules.memory != m) errors.push_back(label(p, i) + " is not in its pinned memory");
    if (std::find(rules.blocked.begin(), rules.blocked.end(), m) != rules.blocked.end())
      errors.push_back(label(p, i) + " is in a memory it is blocked from");
    if (p.buffers[i].fixed_offset && *p.buffers[i].fixed_offset != s.offsets[i])
      errors.push_back(label(p, i) + " is not at its pinned offset");
    const int64_t memory_alignment = rules.inside >= 0 ? 1 : std::max<int64_t>(memory.alignment, 1);
    if (s.offsets[i] % std::max<int64_t>(p.buffers[i].alignment, 1) != 0 || s.offsets[i] % memory_alignment != 0)
      errors.push_back(label(p, i) + " is misaligned");
    if (rules.inside >= 0) {
      const size_t parent = static_cast<size_t>(rules.inside);
      if (s.memory[parent] != m || s.offsets[i] != s.offsets[parent] + rules.inside_offset)
        errors.push_back(label(p, i) + " is not at its offset inside " + label(p, parent));
    }
  }
  // Overlaps between families, memory by memory (members share their root's space by design).
  const Families f = resolve_families(h);
  for (size_t m = 0; m < h.memories.size(); ++m) {
    std::vector<int32_t> roots;
    for (int32_t r : f.roots)
      if (s.memory[r] == static_cast<int32_t>(m)) roots.push_back(r);
    Problem sub = unit_problem(h, f, roots, m);
    Solution placed;
    for (int32_t r : roots) placed.offsets.push_back(s.offsets[r]);
    placed.height = solution_height(sub, placed.offsets);
    for (const std::string& e : validate(sub, placed)) errors.push_back("memory '" + h.memories[m].name + "': " + e);
  }
  return errors;
}

}  // namespace tinyarena::allocation
