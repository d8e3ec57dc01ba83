// The nested-cut search's loop (guillotine.h states the method): rounds of
// growing work, and per part the look-ups, the time cuts, the stacks and the
// buffers that go on top, before a flat part is split into a layer and the
// rest. Invariant: a part is recorded refuted only when no budget cut its
// search short, so a later round never misses a plan a refuted part had.
#include "tinyarena/allocation/guillotine.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <vector>

#include "guillotine_search.h"
#include "tinyarena/common/deep_stack.h"
#include "tinyarena/common/random.h"

namespace tinyarena::allocation::nested_cuts {

namespace {

// `count` pairs of random 64-bit keys, drawn once from seeds first_seed,
// first_seed + 1, ...: per event of a part (a frontier sums them weighted by
// bytes), per buffer (a set of buffers sums its members').
std::vector<Frontier> random_keys(size_t count, uint64_t first_seed) {
  std::vector<Frontier> keys(count);
  for (size_t i = 0; i < count; ++i) {
    SplitMix64 random{first_seed + i};
    keys[i].a = random.next();
    keys[i].b = random.next();
  }
  return keys;
}

}  // namespace

Search::Search(const Problem& p, int32_t max_choices)
      : p_(p),
      max_choices_(max_choices),
      offsets_(p.buffers.size(), 0),
      frontier_keys_(random_keys(2 * p.buffers.size(), 0)),  // a part of n buffers has at most 2n events
      buffer_keys_(random_keys(p.buffers.size(), 2 * p.buffers.size())) {}

// Searches from scratch in rounds, sweeping the time line forwards and
// backwards in turn (each finds what the other misses), each round with
// more work than the one before (kFirstRoundWork); the parts refuted in
// earlier rounds stay refuted.
bool Search::run(const std::vector<int32_t>& buffers, int64_t height, WorkBudget& total) {
  for (int32_t round = 0;; ++round) {
    WorkBudget budget = total.slice(round == 0 ? kFirstRoundWork : kSecondRoundWork << std::min(round - 1, 37));
    BatchedCharge charge(budget);
    charge_ = &charge;
    backwards_ = round % 2 == 1;
    aborted_ = false;
    const bool packed = solve(buffers, 0, height);
    charge.flush();
    if (packed) return true;
    if (!aborted_ || total.spent()) return false;
  }
}

// Packs `buffers` (ascending) into [base, base + height) with nested cuts.
bool Search::solve(const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
  const auto n = static_cast<int64_t>(buffers.size());
  if (!spend(kFingerprintWork * n)) return false;
  const Fingerprint key = fingerprint(buffers, base, height);
  if (failed_.contains(key)) return false;
  if (const auto known = packings_.find({key.a, key.b}); known != packings_.end()) {
    for (size_t i = 0; i < buffers.size(); ++i) offsets_[buffers[i]] = base + known->second[i];
    return spend(kFingerprintWork * n);
  }
  const bool packed = pins_inside(buffers, base, height) && rooms_below_pins_fillable(buffers, base, height) &&
                      spend(kPartWork * n) && pack(buffers, base, height);
  ++parts_;
  if (!packed && !aborted_) failed_.insert(key);
  if (packed && buffers.size() > 1 && packed_offsets_ + buffers.size() <= kMaxPackedOffsets) {
    std::vector<int64_t>& offsets = packings_[{key.a, key.b}];
    for (int32_t b : buffers) offsets.push_back(offsets_[b] - base);
    packed_offsets_ += buffers.size();
  }
  return packed;
}

// The buffers, the height and, where a pin or an alignment makes it matter, the base.
Fingerprint Search::fingerprint(const std::vector<int32_t>& buffers, int64_t base, int64_t height) const {
  FingerprintBuilder f = set_key(buffers);
  f.add(placed_anywhere(buffers) ? 0 : static_cast<uint64_t>(base));
  f.add(static_cast<uint64_t>(height));
  return f.done();
}

// A set of buffers: the sums of their random keys (mod 2^64, twice), so
// one pass of additions, not a chain of hash rounds per buffer.
FingerprintBuilder Search::set_key(const std::vector<int32_t>& buffers) const {
  Frontier sum;
  for (int32_t b : buffers) {
    sum.a += buffer_keys_[b].a;
    sum.b += buffer_keys_[b].b;
  }
  FingerprintBuilder key;
  key.add(sum.a);
  key.add(sum.b);
  return key;
}

// The least common multiple of the alignments of the unpinned buffers: a
// shift by a multiple of it keeps every one aligned (not only by one of
// the largest: 8 keeps 4, not 3). 0 past 2^40 (no shift then).
int64_t Search::shift_alignment(const std::vector<int32_t>& buffers) const {
  int64_t alignment = 1;
  for (int32_t b : buffers)
    if (!pinned(b) && (alignment = std::lcm(alignment, p_.buffers[b].alignment)) > kMaxShiftAlignment) return 0;
  return alignment;
}

// shift_alignment() of the buffers; 0 if one is pinned.
int64_t Search::unpinned_alignment(const std::vector<int32_t>& buffers) const {
  const bool any_pinned = std::any_of(buffers.begin(), buffers.end(), [&](int32_t b) { return pinned(b); });
  return any_pinned ? 0 : shift_alignment(buffers);
}

// None pinned, and every size a multiple of every alignment: buffers moved
// down by the sizes of others stay aligned.
bool Search::closes_up(const std::vector<int32_t>& buffers) const {
  const int64_t alignment = unpinned_alignment(buffers);
  return alignment > 0 &&
         std::all_of(buffers.begin(), buffers.end(), [&](int32_t b) { return p_.buffers[b].size % alignment == 0; });
}

// Every pin inside [base, base + height).
bool Search::pins_inside(const std::vector<int32_t>& buffers, int64_t base, int64_t height) const {
  return std::all_of(buffers.begin(), buffers.end(), [&](int32_t b) {
    const int64_t pin = pinned(b) ? *p_.buffers[b].fixed_offset : base;
    return base <= pin && pin + p_.buffers[b].size <= base + height;
  });
}

bool Search::pack(const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
  if (buffers.size() == 1) return place(buffers[0], base, height);
  const std::vector<std::vector<int32_t>> components = time_components(p_, buffers);
  if (components.size() > 1) {
    for (const auto& c : components)
      if (!solve(c, base, height)) return false;
    return true;
  }
  if (is_unaligned_stack(buffers)) return pack_stack(buffers, base, height);
  const std::vector<int32_t> spanning = movable_to_top(buffers);
  if (!spanning.empty()) return pack_below(spanning, buffers, base, height);
  return split_layer(make_part(p_, buffers), base, height);
}

// Without pins, a buffer spanning the part's steps, unaligned and of a
// size every alignment there divides, is a layer that moves to the top of
// any nested packing (what lay above it shifts down by its size, aligned
// still): the part packs iff the others do below all such buffers. Empty
// if there are none or they are all the buffers.
std::vector<int32_t> Search::movable_to_top(const std::vector<int32_t>& buffers) const {
  const int64_t alignment = unpinned_alignment(buffers);
  if (alignment == 0) return {};
  int32_t first = p_.buffers[buffers[0]].first, last = p_.buffers[buffers[0]].last;
  for (int32_t b : buffers) {
    first = std::min(first, p_.buffers[b].first);
    last = std::max(last, p_.buffers[b].last);
  }
  std::vector<int32_t> spanning;
  for (int32_t b : buffers) {
    const Buffer& x = p_.buffers[b];
    if (x.first == first && x.last == last && x.alignment <= 1 && x.size % alignment == 0) spanning.push_back(b);
  }
  if (spanning.size() == buffers.size()) spanning.clear();
  return spanning;
}

// `spanning` stacked at the top of [base, base + height), the rest of
// `buffers` packed below them.
bool Search::pack_below(const std::vector<int32_t>& spanning, const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
  int64_t top = base + height;
  for (int32_t b : spanning) offsets_[b] = top -= p_.buffers[b].size;
  if (top < base) return false;
  std::vector<int32_t> rest;
  std::set_difference(buffers.begin(), buffers.end(), spanning.begin(), spanning.end(), std::back_inserter(rest));
  return solve(rest, base, top - base);
}

// All live over the same steps, none with an alignment.
bool Search::is_unaligned_stack(const std::vector<int32_t>& buffers) const {
  const Buffer& first = p_.buffers[buffers[0]];
  return std::all_of(buffers.begin(), buffers.end(), [&](int32_t b) {
    const Buffer& x = p_.buffers[b];
    return x.first == first.first && x.last == first.last && x.alignment <= 1;
  });
}

// One buffer in [base, base + height): at its pin, else aligned above base.
bool Search::place(int32_t b, int64_t base, int64_t height) {
  const Buffer& x = p_.buffers[b];
  const int64_t at = pinned(b) ? *x.fixed_offset : align_up(base, x.alignment);
  if (at % x.alignment != 0 || at + x.size > base + height) return false;
  offsets_[b] = at;
  return true;
}

// A part no step cuts: it must be flat (its height at most `height`, the
// rest waste on top); then a flat layer below or above the rest, taken
// from one event component at a time (a whole component is one).
bool Search::split_layer(const Part& part, int64_t base, int64_t height) {
  if (!spend(kSectionWork * part.sections)) return false;
  const int64_t bytes = flat_bytes(p_, part);
  if (bytes < 0 || bytes > height) return false;
  const std::vector<std::vector<int32_t>> components = event_components(part);
  if (components.size() > 1 && closes_up(part.buffers)) return stack_components(part, components, base);
  const FingerprintBuilder part_key = set_key(part.buffers);
  const bool pinned = std::any_of(part.buffers.begin(), part.buffers.end(), [&](int32_t b) { return this->pinned(b); });
  std::vector<std::vector<int32_t>> live(pinned ? part.sections : 0);
  const std::vector<int32_t> strips = pinned ? free_strips(part) : std::vector<int32_t>{};
  int64_t strip_bytes = 0;
  for (int32_t b : strips) strip_bytes += p_.buffers[b].size;
  for (const std::vector<int32_t>& component : components) {
    if (component.size() == 1 && std::count(strips.begin(), strips.end(), part.buffers[component[0]])) continue;
    Layer layer{part, std::vector<int8_t>(part.buffers.size(), 0), {}, base, bytes, {}, pinned, &live, &strips, strip_bytes};
    for (int32_t u : component) {
      layer.in[u] = -1;
      for (int32_t e : {part.start[u], part.end[u]})
        if (e > 0 && e < part.sections) layer.events.push_back(e);
    }
    std::sort(layer.events.begin(), layer.events.end());
    layer.events.erase(std::unique(layer.events.begin(), layer.events.end()), layer.events.end());
    if (backwards_) std::reverse(layer.events.begin(), layer.events.end());
    if (layer.events.empty()) layer.in[component[0]] = 1;  // a buffer spanning the part
    FingerprintBuilder search = part_key;
    search.add(static_cast<uint64_t>(component[0]) * 2 + backwards_);
    layer.search = search.done();
    if (extend(layer, 0, first_sweep(layer, component)) || aborted_) return !aborted_;
  }
  return false;
}

// A flat part that closes up (closes_up) packs iff each of its event
// components does: each is flat (only its own buffers start or end at its
// events), and taking the other components' buffers out of every layer of
// a nested plan, closing the gaps, leaves a nested plan of one, aligned
// still. So they are packed one above another, the smallest first (refuted
// sooner).
bool Search::stack_components(const Part& part, const std::vector<std::vector<int32_t>>& components, int64_t base) {
  std::vector<size_t> order(components.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return components[x].size() < components[y].size(); });
  std::vector<int32_t> buffers;
  for (size_t i : order) {
    buffers.clear();
    int64_t bytes = 0;  // its live bytes at the part's first step (at every step)
    for (int32_t u : components[i]) {
      buffers.push_back(part.buffers[u]);
      if (part.start[u] == 0) bytes += size(part, u);
    }
    if (!solve(buffers, base, bytes)) return false;
    base += bytes;
  }
  return true;
}

}  // namespace tinyarena::allocation::nested_cuts

namespace tinyarena::allocation {

namespace {

GuillotineResult search_nested_cuts(const Problem& problem, int64_t height, GuillotineOptions options) {
  check_pins(problem);
  nested_cuts::Search search(problem, options.max_choices);
  std::vector<int32_t> sized;
  for (size_t b = 0; b < problem.buffers.size(); ++b) {
    const Buffer& x = problem.buffers[b];
    if (x.size > 0) sized.push_back(static_cast<int32_t>(b));
    else search.offsets()[b] = x.fixed_offset.value_or(0);
  }
  GuillotineResult result;
  const bool found = sized.empty() || search.run(sized, height, options.budget);
  if (found) result.solution = Solution{search.offsets(), solution_height(problem, search.offsets())};
  result.complete = !found && !search.aborted() && !search.gave_up();
  result.parts = search.parts();
  result.work = options.budget.used();
  return result;
}

}  // namespace

GuillotineResult guillotine_search(const Problem& problem, int64_t height, GuillotineOptions options) {
  return on_deep_stack(problem.buffers.size(), [&] { return search_nested_cuts(problem, height, options); });
}

}  // namespace tinyarena::allocation
