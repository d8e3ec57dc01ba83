// What pins rule out in the nested-cut search: rooms below pins no subset
// fills, layer places a pinned buffer cannot be flush in, and where the
// free strips of a pinned part go (under a pinned layer or on top). A stack
// of buffers live over the same steps packs as one subset sum per gap
// between its pins. Invariant: each check only rules out what no plan
// without waste can have (searches cut short count as fillable).
#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <vector>

#include "guillotine_search.h"
#include "tinyarena/allocation/subset_sums.h"

namespace tinyarena::allocation::nested_cuts {

// Where a pinned buffer's first step is full (its live bytes are the
// height), the other buffers live there tile the room down to the base:
// some of them sum to it. Checked before a part is searched.
bool Search::rooms_below_pins_fillable(const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
  std::vector<int32_t> beside;
  for (int32_t u : buffers) {
    const Buffer& x = p_.buffers[u];
    if (!x.fixed_offset || *x.fixed_offset == base) continue;
    beside.clear();
    int64_t live = x.size;
    for (int32_t v : buffers)
      if (v != u && p_.buffers[v].first <= x.first && x.first <= p_.buffers[v].last) {
        beside.push_back(v);
        live += p_.buffers[v].size;
      }
    if (!spend(kChoiceWork * static_cast<int64_t>(buffers.size()))) return false;
    if (live == height && !room_fillable(u, *x.fixed_offset - base, beside)) return false;
  }
  return true;
}

// Some of `beside` sum to `room` next to pinned buffer `pin` (may_fill_room:
// a short depth-first search; remembered); false once the budget is spent.
bool Search::room_fillable(int32_t pin, int64_t room, const std::vector<int32_t>& beside) {
  FingerprintBuilder key;
  key.add(static_cast<uint64_t>(pin));
  key.add(static_cast<uint64_t>(room));
  for (int32_t b : beside) key.add(static_cast<uint64_t>(b));
  const Fingerprint room_key = key.done();
  if (fillable_rooms_.contains(room_key)) return true;
  if (unfillable_rooms_.contains(room_key)) return false;
  sizes_.clear();
  for (int32_t b : beside)
    if (p_.buffers[b].size <= room) sizes_.push_back(p_.buffers[b].size);
  int64_t nodes = 0;
  const bool fills = may_fill_room(sizes_, room, nodes);
  if (!spend(kNodeWork * (nodes + static_cast<int64_t>(sizes_.size())))) return false;
  (fills ? fillable_rooms_ : unfillable_rooms_).insert(room_key);
  return fills;
}

// The part's buffers live at `section`, largest first (listed once per part).
const std::vector<int32_t>& Search::live_at(const Layer& layer, int32_t section) {
  std::vector<int32_t>& live = (*layer.live)[section];
  if (!live.empty()) return live;
  const Part& part = layer.part;
  for (size_t v = 0; v < part.buffers.size(); ++v)
    if (part.start[v] <= section && section < part.end[v]) live.push_back(static_cast<int32_t>(v));
  std::sort(live.begin(), live.end(), [&](int32_t u, int32_t v) { return larger_first(size(part, u), u, size(part, v), v); });
  spend(kChoiceWork * static_cast<int64_t>(part.buffers.size() + 2 * live.size()));
  return live;
}

// A pinned buffer decided at `event` (the sweep's first event of it): at
// its step next to the event the part is full, so on its side (the layer,
// or the rest) the buffers there tile the room below it down to that
// side's base and the room above it up to its top. The side's base or top
// is the part's for one of the layer's two places (a layer below the
// rest, above it): the buffers on that side or undecided must fill that
// room, or that place is ruled out.
void Search::check_pin_rooms(const Layer& layer, int32_t event, LayerBytes& bytes) {
  const Part& part = layer.part;
  for (const auto& side : {part.ending[event], part.starting[event]})
    for (int32_t u : side) {
      const Buffer& x = p_.buffers[part.buffers[u]];
      const int32_t decided_at = backwards_ ? (part.end[u] < part.sections ? part.end[u] : part.start[u])
                                            : (part.start[u] > 0 ? part.start[u] : part.end[u]);
      if (!x.fixed_offset || decided_at != event) continue;
      const int32_t section = part.start[u] == event ? event : event - 1;
      const int64_t room_below = *x.fixed_offset - layer.base, room_above = layer.height - room_below - x.size;
      // In the layer: below the rest its base is the part's (less the free
      // strips it floats on), above it its top; out: the other way round.
      const bool in = layer.in[u] > 0;
      if (bytes.can_be_below() && !side_fills(layer, section, u, in, in ? room_below : room_above)) bytes.rule_out(true);
      if (bytes.can_be_above() && !side_fills(layer, section, u, false, in ? room_above : room_below)) bytes.rule_out(false);
    }
}

// Some of the buffers live at `section` on part buffer u's side of the
// layer or undecided (and the free strips, `with_strips`) sum to `room`:
// sums_to() within kPinNodes nodes, true if they ran out.
bool Search::side_fills(const Layer& layer, int32_t section, int32_t u, bool with_strips, int64_t room) {
  const std::vector<int32_t>& live = live_at(layer, section);
  sizes_.clear();
  for (int32_t v : live)
    if (v != u && (layer.in[v] == layer.in[u] || layer.in[v] < 0) && size(layer, v) <= room) sizes_.push_back(size(layer, v));
  const auto merged = static_cast<std::ptrdiff_t>(sizes_.size());
  if (with_strips) {
    for (int32_t b : *layer.strips)
      if (p_.buffers[b].size <= room) sizes_.push_back(p_.buffers[b].size);
    std::inplace_merge(sizes_.begin(), sizes_.begin() + merged, sizes_.end(), std::greater<>());
  }
  int64_t nodes = kPinNodes;
  const std::optional<bool> fills = sums_to(sizes_, room, nodes);
  spend(kNodeWork * (kPinNodes - std::max<int64_t>(nodes, 0) + static_cast<int64_t>(live.size() + sizes_.size())));
  return fills.value_or(true);
}

// A pinned part's free strips: buffers live over all its steps, unpinned,
// unaligned, of sizes every unpinned buffer's alignment divides; largest
// first. In a plan without waste a run of them directly below a layer
// without pins can trade places with it (the layer moves down by their
// bytes, aligned still), so some plan has each run directly below a layer
// with a pin, or at the top: they are not layers of their own, a layer
// with a pin floats above some of them (float_below), and the others stay
// in the rest (on top once no pin is left: movable_to_top).
std::vector<int32_t> Search::free_strips(const Part& part) const {
  const int64_t alignment = shift_alignment(part.buffers);
  std::vector<int32_t> strips;
  if (alignment == 0) return strips;
  for (size_t u = 0; u < part.buffers.size(); ++u) {
    const Buffer& x = p_.buffers[part.buffers[u]];
    if (part.start[u] == 0 && part.end[u] == part.sections && !x.fixed_offset && x.alignment <= 1 &&
        x.size % alignment == 0)
      strips.push_back(part.buffers[u]);
  }
  std::stable_sort(strips.begin(), strips.end(), [&](int32_t x, int32_t y) { return p_.buffers[x].size > p_.buffers[y].size; });
  return strips;
}

// The layer `chosen` (with a pin) below the rest, floating on some of the
// part's free strips at the base: each set of them (of distinct sizes in
// turn) whose bytes put every pin of the layer inside it and every pin of
// the rest above it.
bool Search::float_below(const Layer& layer, const std::vector<int32_t>& chosen, const std::vector<int32_t>& rest, int64_t bytes) {
  Float f{layer, chosen, rest, bytes, 0, layer.height - bytes, {}, std::vector<int64_t>(layer.strips->size() + 1, 0)};
  for (size_t i = layer.strips->size(); i-- > 0;) f.left[i] = f.left[i + 1] + p_.buffers[(*layer.strips)[i]].size;
  for (int32_t b : chosen)
    if (pinned(b)) {
      const int64_t at = *p_.buffers[b].fixed_offset - layer.base;
      f.lowest = std::max(f.lowest, at + p_.buffers[b].size - bytes);
      f.highest = std::min(f.highest, at);
    }
  for (int32_t b : rest)
    if (pinned(b)) f.highest = std::min(f.highest, *p_.buffers[b].fixed_offset - layer.base - bytes);
  return f.lowest <= f.highest && float_on(f, 0, 0);
}

// Strips i.. in or out of those below the layer (`height` bytes so far);
// with a set in range, packs the layer and the rest above it.
bool Search::float_on(Float& f, size_t i, int64_t height) {
  if (!spend(kChoiceWork)) return false;
  const std::vector<int32_t>& strips = *f.layer.strips;
  if (height > f.highest || height + f.left[i] < f.lowest) return false;
  if (i == strips.size()) return float_at(f, height);
  f.below.push_back(strips[i]);
  if (float_on(f, i + 1, height + p_.buffers[strips[i]].size) || aborted_) return !aborted_;
  f.below.pop_back();
  size_t next = i + 1;  // out: so are the strips of its size after it (in is tried with the first of them)
  while (next < strips.size() && p_.buffers[strips[next]].size == p_.buffers[strips[i]].size) ++next;
  return float_on(f, next, height);
}

// The strips chosen below the layer stacked at the base, the layer on
// them, the rest above.
bool Search::float_at(const Float& f, int64_t height) {
  if (!spend(kChoiceWork * static_cast<int64_t>(f.rest.size()))) return false;
  int64_t at = f.layer.base;
  for (int32_t b : f.below) {
    offsets_[b] = at;
    at += p_.buffers[b].size;
  }
  std::vector<int32_t> below = f.below, high;
  std::sort(below.begin(), below.end());
  std::set_difference(f.rest.begin(), f.rest.end(), below.begin(), below.end(), std::back_inserter(high));
  const int64_t top = f.layer.height - height - f.bytes;
  const auto pack_low = [&] { return solve(f.chosen, at, f.bytes); };
  const auto pack_high = [&] { return high.empty() || solve(high, at + f.bytes, top); };
  return f.chosen.size() <= high.size() ? pack_low() && pack_high() : pack_high() && pack_low();
}

// A stack without waste: the free buffers fill the gaps between the pins
// exactly, from base up to base plus the stack's bytes (in any order
// within a gap): a subset sum per gap, not one layer per order.
bool Search::pack_stack(const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
  std::vector<int32_t> pins, free;
  int64_t top = base;
  for (int32_t b : buffers) {
    (pinned(b) ? pins : free).push_back(b);
    top += p_.buffers[b].size;
  }
  if (top > base + height) return false;
  const auto pin = [&](int32_t b) { return *p_.buffers[b].fixed_offset; };
  std::sort(pins.begin(), pins.end(), [&](int32_t x, int32_t y) { return pin(x) < pin(y); });
  Gaps gaps;  // below, between and above the pins
  gaps.starts.push_back(base);
  for (int32_t b : pins) {
    if (pin(b) < gaps.starts.back()) return false;
    gaps.rooms.push_back(pin(b) - gaps.starts.back());
    gaps.starts.push_back(pin(b) + p_.buffers[b].size);
    offsets_[b] = pin(b);
  }
  if (top < gaps.starts.back()) return false;
  gaps.rooms.push_back(top - gaps.starts.back());
  std::stable_sort(free.begin(), free.end(), [&](int32_t x, int32_t y) { return p_.buffers[x].size > p_.buffers[y].size; });
  gaps.gap_of.assign(free.size(), -1);
  gaps.free = std::move(free);
  for (size_t j = 0; j < gaps.rooms.size(); ++j) gaps.order.push_back(j);
  std::stable_sort(gaps.order.begin(), gaps.order.end(), [&](size_t x, size_t y) { return gaps.rooms[x] < gaps.rooms[y]; });
  if (!fill_gap(gaps, 0, 0, gaps.rooms[gaps.order[0]])) return false;
  for (size_t i = 0; i < gaps.free.size(); ++i) {
    offsets_[gaps.free[i]] = gaps.starts[gaps.gap_of[i]];
    gaps.starts[gaps.gap_of[i]] += p_.buffers[gaps.free[i]].size;
  }
  return true;
}

// Fills the k-th gap (its `need` bytes left) with unplaced free[i..],
// each in or out, then the next gap; the last takes what is left.
bool Search::fill_gap(Gaps& gaps, size_t k, size_t i, int64_t need) {
  if (!spend(kChoiceWork)) return false;
  if (need == 0) {
    if (k + 2 >= gaps.order.size()) {  // the rooms add up to the free bytes: the rest fills the last gap
      for (int32_t& gap : gaps.gap_of)
        if (gap < 0) gap = static_cast<int32_t>(gaps.order.back());
      return true;
    }
    return fill_gap(gaps, k + 1, 0, gaps.rooms[gaps.order[k + 1]]);
  }
  for (; i < gaps.free.size(); ++i) {
    const int64_t size = p_.buffers[gaps.free[i]].size;
    if (gaps.gap_of[i] >= 0 || size > need) continue;
    gaps.gap_of[i] = static_cast<int32_t>(gaps.order[k]);
    const bool found = fill_gap(gaps, k, i + 1, need - size);
    if (found || aborted_) return found;
    gaps.gap_of[i] = -1;
  }
  return false;
}

}  // namespace tinyarena::allocation::nested_cuts
