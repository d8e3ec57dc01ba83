#include "tinyarena/allocation/guillotine.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <memory>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tinyarena/allocation/failed_states.h"
#include "tinyarena/allocation/subset_sums.h"
#include "tinyarena/common/deep_stack.h"
#include "tinyarena/common/flat_lists.h"
#include "tinyarena/common/random.h"

namespace tinyarena::allocation {
namespace {

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

// A buffer at an event of a part: the choice there.
struct Item {
  int32_t buffer;  // part index
  int64_t bytes;   // its size, negative if it starts at the event
};

// A part's buffers with their steps renumbered: event times are the starts
// and the ends (last + 1); section j lies between events j and j + 1.
struct Part {
  std::vector<int32_t> buffers;                   // problem indices, ascending
  std::vector<int64_t> size;                      // per buffer: its bytes
  std::vector<int32_t> start, end;                // per buffer: its first event and the event after its last step
  int32_t sections = 0;
  FlatLists<int32_t> starting, ending;            // per event: the buffers (part indices) starting / ending there,
                                                  // largest first (larger_first)
  FlatLists<Item> touching;                       // per event: both, merged largest first, starting ones negative
  FlatLists<int32_t> ahead[2];                    // per sweep direction (forwards, backwards) and event: the events
                                                  // inside the part that the buffers decided there meet next, each
                                                  // once, in the order of those buffers
};

// Largest first, ties by index: the order of an event's buffers.
bool larger_first(int64_t size_u, int32_t u, int64_t size_v, int32_t v) {
  return size_u != size_v ? size_u > size_v : u < v;
}

// Per event, the events ahead of the buffers decided there (sweeping
// backwards: those ending there), each once (Part::ahead).
FlatLists<int32_t> events_ahead(const Part& part, bool backwards) {
  std::vector<std::pair<int32_t, int32_t>> entries;
  for (int32_t e = 0; e <= part.sections; ++e) {
    const size_t first = entries.size();
    for (int32_t u : backwards ? part.ending[e] : part.starting[e]) {
      const int32_t next = backwards ? part.start[u] : part.end[u];
      const bool seen = std::any_of(entries.begin() + static_cast<std::ptrdiff_t>(first), entries.end(),
                                    [&](const auto& entry) { return entry.second == next; });
      if (next > 0 && next < part.sections && !seen) entries.emplace_back(e, next);
    }
  }
  return FlatLists<int32_t>(part.sections + 1, entries);
}

Part make_part(const Problem& p, std::vector<int32_t> buffers) {
  Part part;
  std::vector<int32_t> times;
  times.reserve(2 * buffers.size());
  for (int32_t b : buffers) times.insert(times.end(), {p.buffers[b].first, p.buffers[b].last + 1});
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  const auto event = [&](int32_t t) {
    return static_cast<int32_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  part.sections = static_cast<int32_t>(times.size()) - 1;
  for (auto* per_buffer : {&part.start, &part.end}) per_buffer->reserve(buffers.size());
  part.size.reserve(buffers.size());
  for (int32_t b : buffers) {
    part.size.push_back(p.buffers[b].size);
    part.start.push_back(event(p.buffers[b].first));
    part.end.push_back(event(p.buffers[b].last + 1));
  }
  std::vector<int32_t> order(buffers.size());  // largest first: every list keeps this order
  for (size_t u = 0; u < order.size(); ++u) order[u] = static_cast<int32_t>(u);
  std::sort(order.begin(), order.end(), [&](int32_t u, int32_t v) { return larger_first(part.size[u], u, part.size[v], v); });
  std::vector<std::pair<int32_t, int32_t>> starts, ends;
  std::vector<std::pair<int32_t, Item>> touches;
  starts.reserve(order.size()), ends.reserve(order.size()), touches.reserve(2 * order.size());
  for (int32_t u : order) {
    starts.emplace_back(part.start[u], u), ends.emplace_back(part.end[u], u);
    touches.push_back({part.end[u], Item{u, part.size[u]}});
    touches.push_back({part.start[u], Item{u, -part.size[u]}});
  }
  part.starting = FlatLists<int32_t>(times.size(), starts);
  part.ending = FlatLists<int32_t>(times.size(), ends);
  part.touching = FlatLists<Item>(times.size(), touches);
  for (const bool backwards : {false, true}) part.ahead[backwards] = events_ahead(part, backwards);
  part.buffers = std::move(buffers);
  return part;
}

// The parts of `buffers` that no step joins (a step none of them crosses
// separates them), each ascending.
std::vector<std::vector<int32_t>> time_components(const Problem& p, std::vector<int32_t> buffers) {
  std::sort(buffers.begin(), buffers.end(), [&](int32_t a, int32_t b) {
    return std::pair(p.buffers[a].first, a) < std::pair(p.buffers[b].first, b);
  });
  std::vector<std::vector<int32_t>> components;
  size_t begin = 0;   // the current component's first buffer in `buffers`
  int32_t reach = 0;  // its last step
  for (size_t i = 0; i <= buffers.size(); ++i) {
    if (i == buffers.size() || (i > begin && p.buffers[buffers[i]].first > reach)) {
      components.emplace_back(buffers.begin() + static_cast<std::ptrdiff_t>(begin),
                              buffers.begin() + static_cast<std::ptrdiff_t>(i));
      std::sort(components.back().begin(), components.back().end());
      begin = i;
    }
    if (i < buffers.size()) reach = i == begin ? p.buffers[buffers[i]].last : std::max(reach, p.buffers[buffers[i]].last);
  }
  return components;
}

// The part's live bytes if they are the same at every step, else -1.
int64_t flat_bytes(const Problem& p, const Part& part) {
  std::vector<int64_t> live(part.sections + 1, 0);
  for (size_t i = 0; i < part.buffers.size(); ++i) {
    const int64_t size = p.buffers[part.buffers[i]].size;
    live[part.start[i]] += size, live[part.end[i]] -= size;
  }
  for (int32_t j = 1; j < part.sections; ++j)
    if ((live[j] += live[j - 1]) != live[0]) return -1;
  return live[0];
}

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
    a += key.a * static_cast<uint64_t>(bytes), b += key.b * static_cast<uint64_t>(bytes);
  }
};

// `count` pairs of random 64-bit keys, drawn once from seeds first_seed,
// first_seed + 1, ...: per event of a part (a frontier sums them weighted by
// bytes), per buffer (a set of buffers sums its members').
std::vector<Frontier> random_keys(size_t count, uint64_t first_seed) {
  std::vector<Frontier> keys(count);
  for (size_t i = 0; i < count; ++i) {
    SplitMix64 random{first_seed + i};
    keys[i].a = random.next(), keys[i].b = random.next();
  }
  return keys;
}

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

// Buffers that start or end at the same event inside a part are joined: a
// flat layer takes as many bytes from the ending ones as from the starting
// ones there, so its share of each such group is balanced. Per part
// buffer, its group (indices into the returned lists).
std::vector<std::vector<int32_t>> event_components(const Part& part) {
  std::vector<int32_t> parent(part.buffers.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int32_t>(i);
  const auto root = [&](int32_t u) {
    while (parent[u] != u) u = parent[u] = parent[parent[u]];
    return u;
  };
  for (int32_t e = 1; e < part.sections; ++e) {
    int32_t first = -1;
    for (const auto& side : {part.ending[e], part.starting[e]})
      for (int32_t u : side) {
        if (first < 0) first = root(u);
        parent[root(u)] = first;
      }
  }
  std::vector<std::vector<int32_t>> components;
  std::vector<int32_t> index(parent.size(), -1);
  for (size_t i = 0; i < parent.size(); ++i) {
    int32_t& k = index[root(static_cast<int32_t>(i))];
    if (k < 0) k = static_cast<int32_t>(components.size()), components.emplace_back();
    components[k].push_back(static_cast<int32_t>(i));
  }
  return components;
}

// The subsets of an event's smallest undecided buffers, (bytes, members) by
// bytes, with a bit per hash of their bytes (most lookups of no subset end
// there). Which buffers are undecided at an event depends only on the part,
// the component and the sweep's direction, so a table serves every visit.
struct SubsetTable {
  std::vector<std::pair<int64_t, uint32_t>> subsets;
  std::vector<uint64_t> sums_seen;
  int sums_shift = 64;

  // Lists the subsets of `items` (each merges the list with itself shifted by its bytes).
  void build(const Item* items, size_t count) {
    subsets.assign(1, {0, 0});
    std::vector<std::pair<int64_t, uint32_t>> shifted, merged;
    for (size_t j = 0; j < count; ++j) {
      shifted = subsets;
      for (auto& [bytes, members] : shifted) bytes += items[j].bytes, members |= 1u << j;
      merged.clear();
      std::merge(subsets.begin(), subsets.end(), shifted.begin(), shifted.end(), std::back_inserter(merged),
                 [](const auto& x, const auto& y) { return x.first < y.first; });
      subsets.swap(merged);
    }
    int bits = 6;
    while ((size_t{1} << bits) < 8 * subsets.size()) ++bits;
    sums_shift = 64 - bits;
    sums_seen.assign(size_t{1} << (bits - 6), 0);
    for (const auto& subset : subsets) {
      const uint64_t bit = hash(subset.first);
      sums_seen[bit >> 6] |= uint64_t{1} << (bit & 63);
    }
  }
  bool may_have_sum(int64_t bytes) const {
    const uint64_t bit = hash(bytes);
    return sums_seen[bit >> 6] >> (bit & 63) & 1;
  }
  uint64_t hash(int64_t bytes) const { return static_cast<uint64_t>(bytes) * 0x9e3779b97f4a7c15ull >> sums_shift; }
};

// From one undecided buffer of an event on: its signed bytes, and the bytes
// of it and the ones after it that end / start there.
struct Reach {
  int64_t bytes, plus_left, minus_left;

  // They can still bring `difference` (ending minus starting) to zero.
  bool can_balance(int64_t difference) const { return -plus_left <= difference && difference <= minus_left; }
};

struct Choice {
  std::vector<Item> items;    // the undecided buffers at an event, largest first
  std::vector<Reach> reach;   // per item, then one past the last (nothing left); may be longer (kept, not shrunk)
  size_t listed = 0;                  // items[listed..] are tabulated (if any)
  const SubsetTable* table = nullptr;  // their subsets
  SubsetTable own;                     // the table when the cache is full

  bool can_balance(size_t from, int64_t difference) const { return reach[from].can_balance(difference); }
};

class Search {
 public:
  Search(const Problem& p, int32_t max_choices)
      : p_(p),
        max_choices_(max_choices),
        offsets_(p.buffers.size(), 0),
        frontier_keys_(random_keys(2 * p.buffers.size(), 0)),  // a part of n buffers has at most 2n events
        buffer_keys_(random_keys(p.buffers.size(), 2 * p.buffers.size())) {}

  // Searches from scratch in rounds, sweeping the time line forwards and
  // backwards in turn (each finds what the other misses), each round with
  // more work than the one before (kFirstRoundWork); the parts refuted in
  // earlier rounds stay refuted.
  bool run(const std::vector<int32_t>& buffers, int64_t height, WorkBudget& total) {
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
  bool solve(const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
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

  // The buffers, the height and, where a pin or an alignment makes it matter, the base.
  Fingerprint fingerprint(const std::vector<int32_t>& buffers, int64_t base, int64_t height) const {
    FingerprintBuilder f = set_key(buffers);
    f.add(placed_anywhere(buffers) ? 0 : static_cast<uint64_t>(base));
    f.add(static_cast<uint64_t>(height));
    return f.done();
  }

  // A set of buffers: the sums of their random keys (mod 2^64, twice), so
  // one pass of additions, not a chain of hash rounds per buffer.
  FingerprintBuilder set_key(const std::vector<int32_t>& buffers) const {
    Frontier sum;
    for (int32_t b : buffers) sum.a += buffer_keys_[b].a, sum.b += buffer_keys_[b].b;
    FingerprintBuilder key;
    key.add(sum.a), key.add(sum.b);
    return key;
  }

  // The least common multiple of the alignments of the unpinned buffers: a
  // shift by a multiple of it keeps every one aligned (not only by one of
  // the largest: 8 keeps 4, not 3). 0 past 2^40 (no shift then).
  int64_t shift_alignment(const std::vector<int32_t>& buffers) const {
    int64_t alignment = 1;
    for (int32_t b : buffers)
      if (!pinned(b) && (alignment = std::lcm(alignment, p_.buffers[b].alignment)) > kMaxShiftAlignment) return 0;
    return alignment;
  }

  // shift_alignment() of the buffers; 0 if one is pinned.
  int64_t unpinned_alignment(const std::vector<int32_t>& buffers) const {
    const bool any_pinned = std::any_of(buffers.begin(), buffers.end(), [&](int32_t b) { return pinned(b); });
    return any_pinned ? 0 : shift_alignment(buffers);
  }

  // None pinned, and every size a multiple of every alignment: buffers moved
  // down by the sizes of others stay aligned.
  bool closes_up(const std::vector<int32_t>& buffers) const {
    const int64_t alignment = unpinned_alignment(buffers);
    return alignment > 0 &&
           std::all_of(buffers.begin(), buffers.end(), [&](int32_t b) { return p_.buffers[b].size % alignment == 0; });
  }

  // None pinned or aligned: where the part goes does not matter.
  bool placed_anywhere(const std::vector<int32_t>& buffers) const { return unpinned_alignment(buffers) == 1; }

  // Every pin inside [base, base + height).
  bool pins_inside(const std::vector<int32_t>& buffers, int64_t base, int64_t height) const {
    return std::all_of(buffers.begin(), buffers.end(), [&](int32_t b) {
      const int64_t pin = pinned(b) ? *p_.buffers[b].fixed_offset : base;
      return base <= pin && pin + p_.buffers[b].size <= base + height;
    });
  }

  bool pack(const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
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
  std::vector<int32_t> movable_to_top(const std::vector<int32_t>& buffers) const {
    const int64_t alignment = unpinned_alignment(buffers);
    if (alignment == 0) return {};
    int32_t first = p_.buffers[buffers[0]].first, last = p_.buffers[buffers[0]].last;
    for (int32_t b : buffers) first = std::min(first, p_.buffers[b].first), last = std::max(last, p_.buffers[b].last);
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
  bool pack_below(const std::vector<int32_t>& spanning, const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
    int64_t top = base + height;
    for (int32_t b : spanning) offsets_[b] = top -= p_.buffers[b].size;
    if (top < base) return false;
    std::vector<int32_t> rest;
    std::set_difference(buffers.begin(), buffers.end(), spanning.begin(), spanning.end(), std::back_inserter(rest));
    return solve(rest, base, top - base);
  }

  // All live over the same steps, none with an alignment.
  bool is_unaligned_stack(const std::vector<int32_t>& buffers) const {
    const Buffer& first = p_.buffers[buffers[0]];
    return std::all_of(buffers.begin(), buffers.end(), [&](int32_t b) {
      const Buffer& x = p_.buffers[b];
      return x.first == first.first && x.last == first.last && x.alignment <= 1;
    });
  }

  // A stack without waste: the free buffers fill the gaps between the pins
  // exactly, from base up to base plus the stack's bytes (in any order
  // within a gap): a subset sum per gap, not one layer per order.
  bool pack_stack(const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
    std::vector<int32_t> pins, free;
    int64_t top = base;
    for (int32_t b : buffers) (pinned(b) ? pins : free).push_back(b), top += p_.buffers[b].size;
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

  struct Gaps {
    std::vector<int64_t> starts, rooms;
    std::vector<size_t> order;   // the gaps by room, smallest first: filled in this order
    std::vector<int32_t> free;   // largest first
    std::vector<int32_t> gap_of;  // per free buffer: its gap, -1 while unplaced
  };

  // Fills the k-th gap (its `need` bytes left) with unplaced free[i..],
  // each in or out, then the next gap; the last takes what is left.
  bool fill_gap(Gaps& gaps, size_t k, size_t i, int64_t need) {
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

  // One buffer in [base, base + height): at its pin, else aligned above base.
  bool place(int32_t b, int64_t base, int64_t height) {
    const Buffer& x = p_.buffers[b];
    const int64_t at = pinned(b) ? *x.fixed_offset : align_up(base, x.alignment);
    if (at % x.alignment != 0 || at + x.size > base + height) return false;
    offsets_[b] = at;
    return true;
  }

  // A pinned part's free strips: buffers live over all its steps, unpinned,
  // unaligned, of sizes every unpinned buffer's alignment divides; largest
  // first. In a plan without waste a run of them directly below a layer
  // without pins can trade places with it (the layer moves down by their
  // bytes, aligned still), so some plan has each run directly below a layer
  // with a pin, or at the top: they are not layers of their own, a layer
  // with a pin floats above some of them (float_below), and the others stay
  // in the rest (on top once no pin is left: movable_to_top).
  std::vector<int32_t> free_strips(const Part& part) const {
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

  // A part no step cuts: it must be flat (its height at most `height`, the
  // rest waste on top); then a flat layer below or above the rest, taken
  // from one event component at a time (a whole component is one).
  bool split_layer(const Part& part, int64_t base, int64_t height) {
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
  bool stack_components(const Part& part, const std::vector<std::vector<int32_t>>& components, int64_t base) {
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

  // Before the sweep's first event: undecided, the component's buffers live
  // from the part's end it starts at; out, the other components' pins.
  Sweep first_sweep(const Layer& layer, const std::vector<int32_t>& component) const {
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

  // Where a pinned buffer's first step is full (its live bytes are the
  // height), the other buffers live there tile the room down to the base:
  // some of them sum to it. Checked before a part is searched.
  bool rooms_below_pins_fillable(const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
    std::vector<int32_t> beside;
    for (int32_t u : buffers) {
      const Buffer& x = p_.buffers[u];
      if (!x.fixed_offset || *x.fixed_offset == base) continue;
      beside.clear();
      int64_t live = x.size;
      for (int32_t v : buffers)
        if (v != u && p_.buffers[v].first <= x.first && x.first <= p_.buffers[v].last)
          beside.push_back(v), live += p_.buffers[v].size;
      if (!spend(kChoiceWork * static_cast<int64_t>(buffers.size()))) return false;
      if (live == height && !room_fillable(u, *x.fixed_offset - base, beside)) return false;
    }
    return true;
  }

  // Some of `beside` sum to `room` next to pinned buffer `pin` (may_fill_room:
  // a short depth-first search; remembered); false once the budget is spent.
  bool room_fillable(int32_t pin, int64_t room, const std::vector<int32_t>& beside) {
    FingerprintBuilder key;
    key.add(static_cast<uint64_t>(pin)), key.add(static_cast<uint64_t>(room));
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
  const std::vector<int32_t>& live_at(const Layer& layer, int32_t section) {
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
  void check_pin_rooms(const Layer& layer, int32_t event, LayerBytes& bytes) {
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
  bool side_fills(const Layer& layer, int32_t section, int32_t u, bool with_strips, int64_t room) {
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

  // Decides the layer at events k and on; once all are, packs both sides.
  bool extend(Layer& layer, size_t k, const Sweep& sweep) {
    if (k == layer.events.size()) return ++layers_listed_, spend(kLayerWork) && split(layer, sweep.bytes);
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
  bool balanceable_ahead(const Layer& layer, int32_t event) {
    for (int32_t ahead : layer.part.ahead[backwards_][event])
      if (!balanceable(layer, ahead)) return false;
    return true;
  }

  // The layer's bytes ending at `event` can still equal those starting
  // there: some undecided buffers there make up the difference (searched
  // largest first within kBalanceNodes, past which it counts as possible).
  bool balanceable(const Layer& layer, int32_t event) {
    const int64_t difference = open_choice(layer, event, ahead_);
    int64_t nodes = kBalanceNodes;
    const bool possible = makes_up(ahead_.reach.data(), ahead_.items.size(), difference, nodes);
    const auto touching = static_cast<int64_t>(layer.part.ending[event].size() + layer.part.starting[event].size());
    spend(kNodeWork * (kBalanceNodes - nodes + touching));
    return possible;
  }

  // Some of the `left` items from `reach` on bring `difference` to zero (or the nodes ran out).
  static bool makes_up(const Reach* reach, size_t left, int64_t difference, int64_t& nodes) {
    if (!reach->can_balance(difference)) return false;
    if (left == 0 || nodes-- <= 0) return true;
    return makes_up(reach + 1, left - 1, difference + reach->bytes, nodes) ||
           makes_up(reach + 1, left - 1, difference, nodes);
  }

  // What the sweep's future depends on: where it is, the frontier, and what
  // is known of the layer's bytes.
  static Fingerprint dead_end_key(const Layer& layer, size_t k, const Sweep& sweep) {
    const LayerBytes& c = sweep.bytes;
    FingerprintBuilder key;
    for (uint64_t value : {layer.search.a, layer.search.b, static_cast<uint64_t>(k), sweep.frontier.a, sweep.frontier.b})
      key.add(value);
    if (layer.pinned)
      for (int64_t value : {c.in_live, c.below_lo, c.below_hi, c.above_lo, c.above_hi}) key.add(static_cast<uint64_t>(value));
    return key.done();
  }

  // The choices at event k: the undecided buffers there.
  bool decide(Layer& layer, size_t k, const Sweep& sweep) {
    if (open_choices_ == choices_.size()) choices_.push_back(std::make_unique<Choice>());
    Choice& choice = *choices_[open_choices_++];
    const int64_t balance = open_choice(layer, layer.events[k], choice);
    const bool too_many = static_cast<int32_t>(choice.items.size()) > max_choices_;
    gave_up_ = gave_up_ || too_many;
    const bool found = !too_many && tabulate(layer, k, choice) && choose(layer, k, sweep, choice, 0, balance);
    --open_choices_;
    return found;
  }

  // The undecided buffers at `event` into `choice` (ending ones count plus,
  // starting ones minus; largest first, so the bounds cut early); returns
  // the layer's bytes ending there minus those starting there, decided so far.
  int64_t open_choice(const Layer& layer, int32_t event, Choice& choice) const {
    int64_t balance = 0;
    choice.items.clear();
    for (const Item& item : layer.part.touching[event]) {
      const int8_t in = layer.in[item.buffer];
      if (in < 0) choice.items.push_back(item);
      if (in > 0) balance += item.bytes;
    }
    const size_t n = choice.items.size();
    if (choice.reach.size() < n + 1) choice.reach.resize(n + 1);
    choice.reach[n] = {0, 0, 0};
    for (size_t j = n; j-- > 0;) {
      const int64_t bytes = choice.items[j].bytes;
      const Reach& after = choice.reach[j + 1];
      choice.reach[j] = {bytes, after.plus_left + std::max<int64_t>(bytes, 0), after.minus_left + std::max<int64_t>(-bytes, 0)};
    }
    return balance;
  }

  static int64_t size(const Part& part, int32_t u) { return part.size[u]; }
  static int64_t size(const Layer& layer, int32_t u) { return layer.part.size[u]; }

  // Meet in the middle: the smallest items' subsets are listed by bytes
  // (once per part, component, direction and event: see SubsetTable), so
  // the search over the other items looks up the ones that balance them.
  bool tabulate(const Layer& layer, size_t k, Choice& choice) {
    const size_t n = choice.items.size();
    const size_t tabulated = n <= kSearchedChoices ? 0 : std::min(kMaxTabulated, n / 2);
    choice.listed = n - tabulated;
    if (tabulated == 0) return spend(kSubsetWork);
    const std::pair<uint64_t, uint64_t> key{layer.search.a, layer.search.b * 0x9e3779b97f4a7c15ull + k};
    if (const auto cached = tables_.find(key); cached != tables_.end()) {
      choice.table = &cached->second;
      return spend(kFrontierWork);
    }
    if (!spend(kSubsetWork << tabulated)) return false;
    const bool room = tabled_subsets_ + (size_t{1} << tabulated) <= kMaxTabledSubsets;
    SubsetTable& table = room ? tables_[key] : choice.own;
    table.build(&choice.items[choice.listed], tabulated);
    tabled_subsets_ += room ? table.subsets.size() : 0;
    choice.table = &table;
    return true;
  }

  // Each of items[from..listed) joins the layer (first) or not, so that the
  // layer's bytes ending at the event equal those starting there:
  // `difference` (ending minus starting so far) must end at zero, so it must
  // stay within what the remaining items can still move it.
  bool choose(Layer& layer, size_t k, const Sweep& sweep, const Choice& choice, size_t from, int64_t difference) {
    if (!spend(kChoiceWork)) return false;
    if (!choice.can_balance(from, difference)) return false;
    if (from == choice.listed) return choose_listed(layer, k, sweep, choice, difference);
    const Item& item = choice.items[from];
    for (int8_t in : {1, 0}) {
      layer.in[item.buffer] = in;
      const bool found = choose(layer, k, sweep, choice, from + 1, difference + in * item.bytes);
      if (found || aborted_) return found;
    }
    layer.in[item.buffer] = -1;
    return false;
  }

  // The sweep past `event`. A buffer there on the side the sweep leaves
  // (ending there, sweeping forwards) whose other event is behind leaves the
  // frontier and the layer's live bytes; one whose other event is outside
  // the sweep (the part's first step) is decided here and leaves the
  // undecided bytes. One on the side the sweep enters is decided here and,
  // if in, joins the layer's live bytes and (if its other event is ahead)
  // the frontier. The pins of those decided here bound the layer.
  Sweep advance(const Layer& layer, int32_t event, Sweep sweep) const {
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
  Sweep next(const Layer& layer, size_t k, const Sweep& sweep) {
    Sweep past = advance(layer, layer.events[k], sweep);
    if (layer.pinned) check_pin_rooms(layer, layer.events[k], past.bytes);
    return past;
  }

  // The tabulated subsets that bring `difference` to zero, in turn (none
  // tabulated: the bounds in choose() left it zero).
  bool choose_listed(Layer& layer, size_t k, const Sweep& sweep, const Choice& choice, int64_t difference) {
    if (choice.listed == choice.items.size())
      return spend(kChoiceWork) && extend(layer, k + 1, next(layer, k, sweep));
    const SubsetTable& table = *choice.table;
    if (!table.may_have_sum(-difference)) return false;
    const auto [first, last] = std::equal_range(table.subsets.begin(), table.subsets.end(),
                                                std::pair<int64_t, uint32_t>(-difference, 0),
                                                [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto subset = first; subset != last; ++subset) {
      if (!spend(kChoiceWork)) return false;
      for (size_t j = choice.listed; j < choice.items.size(); ++j)
        layer.in[choice.items[j].buffer] = static_cast<int8_t>(subset->second >> (j - choice.listed) & 1);
      const bool found = extend(layer, k + 1, next(layer, k, sweep));
      if (found || aborted_) return found;
    }
    for (size_t j = choice.listed; j < choice.items.size(); ++j) layer.in[choice.items[j].buffer] = -1;
    return false;
  }

  // The layer (if neither empty nor everything) below the rest, else above
  // it, where its pins allow; the side with fewer buffers is packed first
  // (it is refuted sooner).
  bool split(const Layer& layer, const LayerBytes& range) {
    std::vector<int32_t> chosen, rest;
    chosen.reserve(layer.part.buffers.size()), rest.reserve(layer.part.buffers.size());
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

  // The layer `chosen` (with a pin) below the rest, floating on some of the
  // part's free strips at the base: each set of them (of distinct sizes in
  // turn) whose bytes put every pin of the layer inside it and every pin of
  // the rest above it.
  bool float_below(const Layer& layer, const std::vector<int32_t>& chosen, const std::vector<int32_t>& rest, int64_t bytes) {
    Float f{layer, chosen, rest, bytes, 0, layer.height - bytes, {}, std::vector<int64_t>(layer.strips->size() + 1, 0)};
    for (size_t i = layer.strips->size(); i-- > 0;) f.left[i] = f.left[i + 1] + p_.buffers[(*layer.strips)[i]].size;
    for (int32_t b : chosen)
      if (pinned(b)) {
        const int64_t at = *p_.buffers[b].fixed_offset - layer.base;
        f.lowest = std::max(f.lowest, at + p_.buffers[b].size - bytes), f.highest = std::min(f.highest, at);
      }
    for (int32_t b : rest)
      if (pinned(b)) f.highest = std::min(f.highest, *p_.buffers[b].fixed_offset - layer.base - bytes);
    return f.lowest <= f.highest && float_on(f, 0, 0);
  }

  struct Float {
    const Layer& layer;
    const std::vector<int32_t>& chosen;
    const std::vector<int32_t>& rest;
    int64_t bytes, lowest, highest;  // the layer's bytes; the strips' bytes below it allowed
    std::vector<int32_t> below;      // the strips below it so far
    std::vector<int64_t> left;       // per strip i: the bytes of strips i..
  };

  // Strips i.. in or out of those below the layer (`height` bytes so far);
  // with a set in range, packs the layer and the rest above it.
  bool float_on(Float& f, size_t i, int64_t height) {
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
  bool float_at(const Float& f, int64_t height) {
    if (!spend(kChoiceWork * static_cast<int64_t>(f.rest.size()))) return false;
    int64_t at = f.layer.base;
    for (int32_t b : f.below) offsets_[b] = at, at += p_.buffers[b].size;
    std::vector<int32_t> below = f.below, high;
    std::sort(below.begin(), below.end());
    std::set_difference(f.rest.begin(), f.rest.end(), below.begin(), below.end(), std::back_inserter(high));
    const int64_t top = f.layer.height - height - f.bytes;
    const auto pack_low = [&] { return solve(f.chosen, at, f.bytes); };
    const auto pack_high = [&] { return high.empty() || solve(high, at + f.bytes, top); };
    return f.chosen.size() <= high.size() ? pack_low() && pack_high() : pack_high() && pack_low();
  }

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

GuillotineResult search_nested_cuts(const Problem& problem, int64_t height, GuillotineOptions options) {
  check_pins(problem);
  Search search(problem, options.max_choices);
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
