// The nested-cut search's shared state and its layer sweep's types
// (guillotine.h states the method). Invariant: everything here depends on
// work units only, never on the clock, so a search gives the same plan on
// every machine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "guillotine_part.h"
#include "tinyarena/allocation/failed_states.h"
#include "tinyarena/allocation/problem.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::allocation::nested_cuts {

// Work units (about a nanosecond each: benchmarks/budget_calibration.py) per
// buffer of a part searched (its events, profile and cuts) and per section of
// one no step cuts (its profile, components and pin rooms), per buffer at an
// event a layer is extended across, and per choice of one.
constexpr int64_t kPartWork = 100;
constexpr int64_t kFingerprintWork = 5;  // per buffer of a part looked up among the refuted ones
constexpr int64_t kSectionWork = 100;
constexpr int64_t kLayerWork = 25;
constexpr int64_t kChoiceWork = 5;
constexpr int64_t kNodeWork = 3;    // per node of a short subset-sum search (room below a pin, balance ahead)
                                    // and per buffer at the event ahead it checks
constexpr int64_t kSubsetWork = 7;  // per subset of an event's smallest buffers tabulated
constexpr int64_t kFrontierWork = 50;  // per frontier looked up among the dead ends
constexpr size_t kSearchedChoices = 8;  // past this many undecided buffers at an event, the smallest are tabulated,
constexpr size_t kMaxTabulated = 16;    // at most this many
constexpr size_t kMaxTabledSubsets = size_t{1} << 20;  // subsets kept for later visits (16 MiB)
constexpr size_t kMaxPackedOffsets = size_t{1} << 21;  // offsets of packed parts kept for later visits (16 MiB)
constexpr int64_t kBalanceNodes = 64;  // per event ahead checked for balance (past them it counts as balanceable)
constexpr int64_t kPinNodes = 64;  // per room next to a pin checked in a sweep (past them it counts as fillable)
constexpr int64_t kMaxShiftAlignment = int64_t{1} << 40;  // alignments' common multiples past it shift nothing
// Rounds' work: a short first round (forwards) ends the easy searches; the
// second (backwards) is seven times as long, and each later round doubles
// the one before. Chosen on the zero-slack benchmark (benchmarks/README.md):
// with plain doubling from 5 M the slowest nested instance needed 55 M units,
// with these 46 M; a second round of 30 M gave 47 M, of 25 M 85 M.
constexpr int64_t kFirstRoundWork = 5'000'000;
constexpr int64_t kSecondRoundWork = 35'000'000;

// A table key made of random 64-bit halves (fingerprints): they are their
// own hash.
struct KeyHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& key) const { return static_cast<size_t>(key.first ^ key.second); }
};

// A flat layer being chosen inside one event component of a part, event by
// event through the time line (forwards or backwards, by round).
struct Layer {
  const Part& part;
  std::vector<int8_t> in;       // per part buffer: 1 in the layer, 0 out, -1 undecided
  std::vector<int32_t> events;  // the component's events inside the part, in sweep order
  int64_t base, height;         // the part's place
  Fingerprint search;           // the part, the component and the sweep direction
  bool pinned;                  // some buffer of the part is pinned: the sweep bounds the layer's bytes
  std::vector<std::vector<int32_t>>* live;  // per section of a pinned part: its buffers live there, listed on
                                            // first use (check_pin_rooms), shared by the part's components
  const std::vector<int32_t>* strips;       // the part's free strips (free_strips), problem indices
  int64_t strip_bytes;                      // their bytes
};

// The sweep's frontier: of the buffers decided before an event and still
// to meet an event ahead, the bytes in the layer per event ahead. Balance
// ahead depends on nothing else (which buffers make up those bytes does not
// matter), so a frontier once left without a balanced layer is a dead end.
// Kept as a linear hash: the sum over those buffers of a random key of
// their event ahead times their bytes (mod 2^64, twice).
struct Frontier {
  uint64_t a = 0, b = 0;
  void add(const Frontier& key, int64_t bytes) {
    a += key.a * static_cast<uint64_t>(bytes);
    b += key.b * static_cast<uint64_t>(bytes);
  }
};


// What the decisions so far admit of the layer's live bytes c (the same at
// every step): at the section past the sweep, at least the bytes of its
// buffers live there, at most those plus the undecided ones live there; a
// pinned buffer in the layer lies inside it, one out of it inside the rest
// -- for the layer below the rest ([base, base + c)) and for the layer above
// it ([base + height - c, base + height)). Tracked in parts with a pin only.
struct LayerBytes {
  int64_t height;                           // the part's
  int64_t in_live = 0, undecided_live = 0;  // past the sweep
  int64_t below_lo = 1, below_hi = height - 1, above_lo = 1, above_hi = height - 1;  // c's range, per side
  int64_t below_float = 0;  // below the rest the layer may float this high above the base (on free strips)

  // A pinned buffer at `at` (from the base) of `bytes`, in the layer or out.
  void pin(int64_t at, int64_t bytes, bool in) {
    if (in) {
      below_lo = std::max(below_lo, at + bytes - below_float);
      above_lo = std::max(above_lo, height - at);
    } else {
      below_hi = std::min(below_hi, at);
      above_hi = std::min(above_hi, height - at - bytes);
    }
  }
  bool can_be_below() const { return below_lo <= below_hi; }
  bool can_be_above() const { return above_lo <= above_hi; }
  void rule_out(bool below) { (below ? below_hi : above_hi) = -1; }
  bool possible() const {
    const int64_t lo = in_live, hi = in_live + undecided_live;
    return std::max(lo, below_lo) <= std::min(hi, below_hi) || std::max(lo, above_lo) <= std::min(hi, above_hi);
  }
};

// The sweep's state past an event.
struct Sweep {
  Frontier frontier;
  LayerBytes bytes;
};

// The subsets of an event's smallest undecided buffers, (bytes, members) by
// bytes, with a bit per hash of their bytes (most lookups of no subset end
// there). Which buffers are undecided at an event depends only on the part,
// the component and the sweep's direction, so a table serves every visit.
struct SubsetTable {
  std::vector<std::pair<int64_t, uint32_t>> subsets;
  std::vector<uint64_t> sums_seen;
  int sums_shift = 64;

  // Lists the subsets of `items` (each merges the list with itself shifted by its bytes).
  void build(const Item* items, size_t count);
  bool may_have_sum(int64_t bytes) const {
    const uint64_t bit = hash(bytes);
    return sums_seen[bit >> 6] >> (bit & 63) & 1;
  }
  uint64_t hash(int64_t bytes) const { return static_cast<uint64_t>(bytes) * 0x9e3779b97f4a7c15ull >> sums_shift; }
};

// From one undecided buffer of an event on: its signed bytes (negative if
// it starts there), and the bytes of it and the ones after it that end there
// and that start there.
struct Reach {
  int64_t bytes;
  int64_t ending_left;
  int64_t starting_left;

  // They can still bring `difference` (ending minus starting) to zero.
  bool can_balance(int64_t difference) const { return -ending_left <= difference && difference <= starting_left; }
};

struct Choice {
  std::vector<Item> items;    // the undecided buffers at an event, largest first
  std::vector<Reach> reach;   // per item, then one past the last (nothing left); may be longer (kept, not shrunk)
  size_t listed = 0;                  // items[listed..] are tabulated (if any)
  const SubsetTable* table = nullptr;  // their subsets
  SubsetTable own;                     // the table when the cache is full

  bool can_balance(size_t from, int64_t difference) const { return reach[from].can_balance(difference); }
};

// The nested-cut search over one problem: packs parts recursively (solve),
// remembering refuted parts, packed ones and dead-end sweep frontiers across
// its rounds. Its members are defined by idea:
//   guillotine.cpp          rounds, parts, time cuts, stacks and spanning buffers
//   guillotine_sweep.cpp    a flat layer chosen event by event, then the split
//   guillotine_choices.cpp  the choices at one event (subset tables, balance)
//   guillotine_pins.cpp     what pins rule out, free strips a pinned layer floats on,
//                           stacks of pins
class Search {
 public:
  Search(const Problem& p, int32_t max_choices);

  bool run(const std::vector<int32_t>& buffers, int64_t height, WorkBudget& total);
  bool solve(const std::vector<int32_t>& buffers, int64_t base, int64_t height);

  std::vector<int64_t>& offsets() { return offsets_; }
  int64_t parts() const { return parts_; }
  bool aborted() const { return aborted_; }
  bool gave_up() const { return gave_up_; }

 private:
  bool pinned(int32_t b) const { return p_.buffers[b].fixed_offset.has_value(); }

  // Charges `units` of work; false once this round's budget is spent.
  bool spend(int64_t units) {
    if (!aborted_ && !charge_->charge(units)) aborted_ = true;
    return !aborted_;
  }

  // guillotine.cpp: parts, time cuts, buffers spanning a part
  Fingerprint fingerprint(const std::vector<int32_t>& buffers, int64_t base, int64_t height) const;
  FingerprintBuilder set_key(const std::vector<int32_t>& buffers) const;
  int64_t shift_alignment(const std::vector<int32_t>& buffers) const;
  int64_t unpinned_alignment(const std::vector<int32_t>& buffers) const;
  bool closes_up(const std::vector<int32_t>& buffers) const;
  // None pinned or aligned: where the part goes does not matter.
  bool placed_anywhere(const std::vector<int32_t>& buffers) const { return unpinned_alignment(buffers) == 1; }
  bool pins_inside(const std::vector<int32_t>& buffers, int64_t base, int64_t height) const;
  bool pack(const std::vector<int32_t>& buffers, int64_t base, int64_t height);
  std::vector<int32_t> movable_to_top(const std::vector<int32_t>& buffers) const;
  bool pack_below(const std::vector<int32_t>& spanning, const std::vector<int32_t>& buffers, int64_t base, int64_t height);
  bool is_unaligned_stack(const std::vector<int32_t>& buffers) const;
  bool place(int32_t b, int64_t base, int64_t height);
  bool split_layer(const Part& part, int64_t base, int64_t height);
  bool stack_components(const Part& part, const std::vector<std::vector<int32_t>>& components, int64_t base);

  // guillotine_sweep.cpp: the layer swept event by event
  Sweep first_sweep(const Layer& layer, const std::vector<int32_t>& component) const;
  bool extend(Layer& layer, size_t k, const Sweep& sweep);
  bool balanceable_ahead(const Layer& layer, int32_t event);
  static Fingerprint dead_end_key(const Layer& layer, size_t k, const Sweep& sweep);
  bool decide(Layer& layer, size_t k, const Sweep& sweep);
  Sweep advance(const Layer& layer, int32_t event, Sweep sweep) const;
  Sweep next(const Layer& layer, size_t k, const Sweep& sweep);
  bool split(const Layer& layer, const LayerBytes& range);

  // guillotine_choices.cpp: the undecided buffers at one event
  int64_t open_choice(const Layer& layer, int32_t event, Choice& choice) const;
  bool tabulate(const Layer& layer, size_t k, Choice& choice);
  bool choose(Layer& layer, size_t k, const Sweep& sweep, const Choice& choice, size_t from, int64_t difference);
  bool choose_listed(Layer& layer, size_t k, const Sweep& sweep, const Choice& choice, int64_t difference);
  bool balanceable(const Layer& layer, int32_t event);
  static bool makes_up(const Reach* reach, size_t left, int64_t difference, int64_t& nodes);

  // guillotine_pins.cpp: rooms next to pins, free strips, stacks with pins
  bool rooms_below_pins_fillable(const std::vector<int32_t>& buffers, int64_t base, int64_t height);
  bool room_fillable(int32_t pin, int64_t room, const std::vector<int32_t>& beside);
  const std::vector<int32_t>& live_at(const Layer& layer, int32_t section);
  void check_pin_rooms(const Layer& layer, int32_t event, LayerBytes& bytes);
  bool side_fills(const Layer& layer, int32_t section, int32_t u, bool with_strips, int64_t room);
  std::vector<int32_t> free_strips(const Part& part) const;

  struct Float {
    const Layer& layer;
    const std::vector<int32_t>& chosen;
    const std::vector<int32_t>& rest;
    int64_t bytes, lowest, highest;  // the layer's bytes; the strips' bytes below it allowed
    std::vector<int32_t> below;      // the strips below it so far
    std::vector<int64_t> left;       // per strip i: the bytes of strips i..
  };
  bool float_below(const Layer& layer, const std::vector<int32_t>& chosen, const std::vector<int32_t>& rest, int64_t bytes);
  bool float_on(Float& f, size_t i, int64_t height);
  bool float_at(const Float& f, int64_t height);

  struct Gaps {
    std::vector<int64_t> starts, rooms;
    std::vector<size_t> order;   // the gaps by room, smallest first: filled in this order
    std::vector<int32_t> free;   // largest first
    std::vector<int32_t> gap_of;  // per free buffer: its gap, -1 while unplaced
  };
  bool pack_stack(const std::vector<int32_t>& buffers, int64_t base, int64_t height);
  bool fill_gap(Gaps& gaps, size_t k, size_t i, int64_t need);

  static int64_t size(const Part& part, int32_t u) { return part.size[u]; }
  static int64_t size(const Layer& layer, int32_t u) { return layer.part.size[u]; }

  const Problem& p_;
  BatchedCharge* charge_ = nullptr;  // this round's budget
  bool backwards_ = false;           // this round sweeps the time line from its end
  const int32_t max_choices_;
  std::vector<int64_t> offsets_;
  const std::vector<Frontier> frontier_keys_;  // per event of a part
  const std::vector<Frontier> buffer_keys_;    // per buffer
  std::vector<int64_t> sizes_;  // scratch of room_fillable and side_fills
  Choice ahead_;  // scratch of balanceable
  std::unordered_map<std::pair<uint64_t, uint64_t>, SubsetTable, KeyHash> tables_;  // per part, component, direction
                                                                                   // and event
  size_t tabled_subsets_ = 0;  // in tables_, at most kMaxTabledSubsets
  std::vector<std::unique_ptr<Choice>> choices_;  // of the events being decided (one per level of recursion), reused
  size_t open_choices_ = 0;
  FailedStates failed_;  // parts (at a base, where it matters) with no nested-cut packing
  std::unordered_map<std::pair<uint64_t, uint64_t>, std::vector<int64_t>, KeyHash> packings_;  // parts packed: offsets
                                                                                                 // from the base
  size_t packed_offsets_ = 0;  // in packings_, at most kMaxPackedOffsets
  FailedStates fillable_rooms_, unfillable_rooms_;  // rooms below pins (the pin, the room, the buffers beside it)
  FailedStates dead_ends_;  // sweep frontiers (per part, component and direction) with no balanced layer ahead
  int64_t layers_listed_ = 0;  // balanced layers reached (a search that reached none left a dead end)
  int64_t parts_ = 0;
  bool aborted_ = false;  // the budget ran out
  bool gave_up_ = false;  // some event had too many undecided buffers to list their choices
};

}  // namespace tinyarena::allocation::nested_cuts
