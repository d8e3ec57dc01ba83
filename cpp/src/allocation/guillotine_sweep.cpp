// A flat layer of a part chosen event by event through the time line
// (forwards or backwards by round), each step balancing the layer's bytes
// ending at the event with those starting there; once every event is
// decided, the part splits into the layer and the rest. Invariant: a sweep
// state (Sweep) holds all its future depends on, so a frontier once left
// without a balanced layer is a dead end for good.
#include <algorithm>
#include <vector>

#include "guillotine_search.h"

namespace tinyarena::allocation::nested_cuts {

// Before the sweep's first event: undecided, the component's buffers live
// from the part's end it starts at; out, the other components' pins.
Sweep Search::first_sweep(const Layer& layer, const std::vector<int32_t>& component) const {
  Sweep sweep{{}, LayerBytes{layer.height}};
  if (!layer.pinned) return sweep;
  sweep.bytes.below_float = layer.strip_bytes;
  const Part& part = layer.part;
  for (int32_t u : component)
    if (backwards_ ? part.end[u] == part.sections : part.start[u] == 0) sweep.bytes.undecided_live += size(layer, u);
  for (size_t u = 0; u < part.buffers.size(); ++u) {
    const Buffer& x = p_.buffers[part.buffers[u]];
    if (x.fixed_offset && layer.in[u] == 0) sweep.bytes.pin(*x.fixed_offset - layer.base, x.size, false);
  }
  return sweep;
}

// Decides the layer at events k and on; once all are, packs both sides.
bool Search::extend(Layer& layer, size_t k, const Sweep& sweep) {
  if (k == layer.events.size()) {
    ++layers_listed_;
    return spend(kLayerWork) && split(layer, sweep.bytes);
  }
  const int32_t event = layer.events[k];
  const auto touching = static_cast<int64_t>(layer.part.ending[event].size() + layer.part.starting[event].size());
  if (!spend(kLayerWork * (1 + touching) + kFrontierWork) || (layer.pinned && !sweep.bytes.possible())) return false;
  const Fingerprint key = dead_end_key(layer, k, sweep);
  dead_ends_.prefetch(key);
  if (k > 0 && !balanceable_ahead(layer, layer.events[k - 1])) return false;
  if (dead_ends_.contains(key)) return false;
  const int64_t listed = layers_listed_;
  const bool found = decide(layer, k, sweep);
  if (!found && !aborted_ && layers_listed_ == listed) dead_ends_.insert(key);
  return found;
}

// Forward checking: every event ahead that a buffer decided at `event`
// meets again can still balance.
bool Search::balanceable_ahead(const Layer& layer, int32_t event) {
  for (int32_t ahead : layer.part.ahead[backwards_][event])
    if (!balanceable(layer, ahead)) return false;
  return true;
}

// What the sweep's future depends on: where it is, the frontier, and what
// is known of the layer's bytes.
Fingerprint Search::dead_end_key(const Layer& layer, size_t k, const Sweep& sweep) {
  const LayerBytes& c = sweep.bytes;
  FingerprintBuilder key;
  for (uint64_t value : {layer.search.a, layer.search.b, static_cast<uint64_t>(k), sweep.frontier.a, sweep.frontier.b})
    key.add(value);
  if (layer.pinned)
    for (int64_t value : {c.in_live, c.below_lo, c.below_hi, c.above_lo, c.above_hi}) key.add(static_cast<uint64_t>(value));
  return key.done();
}

// The choices at event k: the undecided buffers there.
bool Search::decide(Layer& layer, size_t k, const Sweep& sweep) {
  if (open_choices_ == choices_.size()) choices_.push_back(std::make_unique<Choice>());
  Choice& choice = *choices_[open_choices_++];
  const int64_t balance = open_choice(layer, layer.events[k], choice);
  const bool too_many = static_cast<int32_t>(choice.items.size()) > max_choices_;
  gave_up_ = gave_up_ || too_many;
  const bool found = !too_many && tabulate(layer, k, choice) && choose(layer, k, sweep, choice, 0, balance);
  --open_choices_;
  return found;
}

// The sweep past `event`. A buffer there on the side the sweep leaves
// (ending there, sweeping forwards) whose other event is behind leaves the
// frontier and the layer's live bytes; one whose other event is outside
// the sweep (the part's first step) is decided here and leaves the
// undecided bytes. One on the side the sweep enters is decided here and,
// if in, joins the layer's live bytes and (if its other event is ahead)
// the frontier. The pins of those decided here bound the layer.
Sweep Search::advance(const Layer& layer, int32_t event, Sweep sweep) const {
  const Part& part = layer.part;
  const auto pass = [&](int32_t u, bool leaving, bool inner) {
    const int64_t bytes = size(layer, u);
    const bool in = layer.in[u] > 0;
    if (inner && in) sweep.frontier.add(frontier_keys_[backwards_ ? part.start[u] : part.end[u]], leaving ? -bytes : bytes);
    if (!layer.pinned) return;
    if (leaving && inner) {
      sweep.bytes.in_live -= in ? bytes : 0;
      return;
    }
    if (leaving) sweep.bytes.undecided_live -= bytes;
    else sweep.bytes.in_live += in ? bytes : 0;
    const Buffer& x = p_.buffers[part.buffers[u]];
    if (x.fixed_offset) sweep.bytes.pin(*x.fixed_offset - layer.base, bytes, in);
  };
  for (int32_t u : part.ending[event]) pass(u, !backwards_, part.start[u] > 0);
  for (int32_t u : part.starting[event]) pass(u, backwards_, part.end[u] < part.sections);
  return sweep;
}

// The sweep past event k, its pins' rooms checked.
Sweep Search::next(const Layer& layer, size_t k, const Sweep& sweep) {
  Sweep past = advance(layer, layer.events[k], sweep);
  if (layer.pinned) check_pin_rooms(layer, layer.events[k], past.bytes);
  return past;
}

// The layer (if neither empty nor everything) below the rest, else above
// it, where its pins allow; the side with fewer buffers is packed first
// (it is refuted sooner).
bool Search::split(const Layer& layer, const LayerBytes& range) {
  std::vector<int32_t> chosen, rest;
  chosen.reserve(layer.part.buffers.size());
  rest.reserve(layer.part.buffers.size());
  int64_t bytes = 0;  // the layer's live bytes at the part's first step (at every step)
  for (size_t i = 0; i < layer.part.buffers.size(); ++i) {
    (layer.in[i] > 0 ? chosen : rest).push_back(layer.part.buffers[i]);
    if (layer.in[i] > 0 && layer.part.start[i] == 0) bytes += p_.buffers[layer.part.buffers[i]].size;
  }
  if (chosen.empty() || rest.empty()) return false;
  const int64_t base = layer.base, top = layer.height - bytes;
  const auto both = [&](const std::vector<int32_t>& low, int64_t low_height, const std::vector<int32_t>& high) {
    const auto pack_low = [&] { return solve(low, base, low_height); };
    const auto pack_high = [&] { return solve(high, base + low_height, layer.height - low_height); };
    return low.size() <= high.size() ? pack_low() && pack_high() : pack_high() && pack_low();
  };
  const bool below = range.below_lo <= bytes && bytes <= range.below_hi;
  const bool above = range.above_lo <= bytes && bytes <= range.above_hi;
  const bool floats = !layer.strips->empty() && std::any_of(chosen.begin(), chosen.end(), [&](int32_t b) { return pinned(b); });
  if (below && (floats ? float_below(layer, chosen, rest, bytes) : both(chosen, bytes, rest))) return true;
  return above && !aborted_ && both(rest, top, chosen);
}

}  // namespace tinyarena::allocation::nested_cuts
