#include "tinyarena/allocation/guillotine.h"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "tinyarena/allocation/failed_states.h"
#include "tinyarena/allocation/subset_sums.h"

namespace tinyarena::allocation {
namespace {

// Work units per buffer of a part (its events, profile and cuts) and per
// section of one no step cuts (its profile, components and pin rooms), per
// buffer at an event a layer is extended across, and per choice of one.
constexpr int64_t kPartWork = 100;
constexpr int64_t kSectionWork = 100;
constexpr int64_t kLayerWork = 25;
constexpr int64_t kChoiceWork = 5;
constexpr size_t kMaxSubsetSums = 1024;  // past this many sums the room below a pin counts as fillable
constexpr int64_t kFirstRoundWork = 1'000'000;  // the first round's work; every second round doubles it

// A part's buffers with their steps renumbered: event times are the starts
// and the ends (last + 1); section j lies between events j and j + 1.
struct Part {
  std::vector<int32_t> buffers;                        // problem indices, ascending
  std::vector<int32_t> start, end;                     // per buffer: its first event and the event after its last step
  int32_t sections = 0;
  std::vector<std::vector<int32_t>> starting, ending;  // per event: the buffers (part indices) starting / ending there
};

Part make_part(const Problem& p, std::vector<int32_t> buffers) {
  Part part;
  std::vector<int32_t> times;
  for (int32_t b : buffers) times.insert(times.end(), {p.buffers[b].first, p.buffers[b].last + 1});
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  const auto event = [&](int32_t t) {
    return static_cast<int32_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  part.sections = static_cast<int32_t>(times.size()) - 1;
  part.starting.resize(times.size());
  part.ending.resize(times.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& x = p.buffers[buffers[i]];
    part.start.push_back(event(x.first));
    part.end.push_back(event(x.last + 1));
    part.starting[part.start.back()].push_back(static_cast<int32_t>(i));
    part.ending[part.end.back()].push_back(static_cast<int32_t>(i));
  }
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
  int32_t reach = 0;  // the last step of the current component
  for (int32_t b : buffers) {
    if (components.empty() || p.buffers[b].first > reach) components.emplace_back();
    components.back().push_back(b);
    reach = std::max(reach, p.buffers[b].last);
  }
  for (auto& c : components) std::sort(c.begin(), c.end());
  return components;
}

// A flat layer being chosen inside one event component of a part, event by
// event through the time line (forwards or backwards, by round).
struct Layer {
  const Part& part;
  std::vector<int8_t> in;       // per part buffer: 1 in the layer, 0 out, -1 undecided
  std::vector<int32_t> events;  // the component's events inside the part, ascending
  int64_t base, height;         // the part's place
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
    for (const auto* side : {&part.ending[e], &part.starting[e]})
      for (int32_t u : *side) {
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

class Search {
 public:
  Search(const Problem& p, int32_t max_choices) : p_(p), max_choices_(max_choices), offsets_(p.buffers.size(), 0) {}

  // Searches from scratch in rounds, sweeping the time line forwards and
  // backwards in turn (each finds what the other misses), each pair of
  // rounds with twice the work; the parts refuted in earlier rounds stay
  // refuted.
  bool run(const std::vector<int32_t>& buffers, int64_t height, WorkBudget& total) {
    for (int32_t round = 0;; ++round) {
      WorkBudget budget = total.slice(kFirstRoundWork << std::min(round / 2, 40));
      budget_ = &budget;
      backwards_ = round % 2 == 1;
      aborted_ = false;
      if (solve(buffers, 0, height)) return true;
      if (!aborted_ || total.spent()) return false;
    }
  }

  // Packs `buffers` (ascending) into [base, base + height) with nested cuts.
  bool solve(const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
    if (!spend(kPartWork * static_cast<int64_t>(buffers.size()))) return false;
    ++parts_;
    const Fingerprint key = fingerprint(buffers, base, height);
    if (failed_.contains(key)) return false;
    const bool packed = pack(buffers, base, height);
    if (!packed && !aborted_) failed_.insert(key);
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
    if (!aborted_ && !budget_->charge(units)) aborted_ = true;
    return !aborted_;
  }

  // The buffers, the height and, where a pin or an alignment makes it matter, the base.
  Fingerprint fingerprint(const std::vector<int32_t>& buffers, int64_t base, int64_t height) const {
    const bool placed_anywhere = std::all_of(buffers.begin(), buffers.end(), [&](int32_t b) {
      return !pinned(b) && p_.buffers[b].alignment <= 1;
    });
    FingerprintBuilder f;
    f.add(placed_anywhere ? 0 : static_cast<uint64_t>(base));
    f.add(static_cast<uint64_t>(height));
    for (int32_t b : buffers) f.add(static_cast<uint64_t>(b));
    return f.done();
  }

  bool pack(const std::vector<int32_t>& buffers, int64_t base, int64_t height) {
    for (int32_t b : buffers) {
      const int64_t pin = pinned(b) ? *p_.buffers[b].fixed_offset : base;
      if (pin < base || pin + p_.buffers[b].size > base + height) return false;
    }
    if (buffers.size() == 1) return place(buffers[0], base, height);
    const std::vector<std::vector<int32_t>> components = time_components(p_, buffers);
    if (components.size() > 1) {
      for (const auto& c : components)
        if (!solve(c, base, height)) return false;
      return true;
    }
    return split_layer(make_part(p_, buffers), base, height);
  }

  // One buffer in [base, base + height): at its pin, else aligned above base.
  bool place(int32_t b, int64_t base, int64_t height) {
    const Buffer& x = p_.buffers[b];
    const int64_t at = pinned(b) ? *x.fixed_offset : align_up(base, x.alignment);
    if (at % x.alignment != 0 || at + x.size > base + height) return false;
    offsets_[b] = at;
    return true;
  }

  // A part no step cuts: it must be flat (its height at most `height`, the
  // rest waste on top); then a flat layer below or above the rest, taken
  // from one event component at a time (a whole component is one).
  bool split_layer(const Part& part, int64_t base, int64_t height) {
    if (!spend(kSectionWork * part.sections)) return false;
    std::vector<int64_t> live(part.sections + 1, 0);
    for (size_t i = 0; i < part.buffers.size(); ++i) {
      const int64_t size = p_.buffers[part.buffers[i]].size;
      live[part.start[i]] += size, live[part.end[i]] -= size;
    }
    for (int32_t j = 1; j < part.sections; ++j)
      if ((live[j] += live[j - 1]) != live[0]) return false;
    if (live[0] > height || !rooms_below_pins_fillable(part, base)) return false;
    for (const std::vector<int32_t>& component : event_components(part)) {
      Layer layer{part, std::vector<int8_t>(part.buffers.size(), 0), {}, base, live[0]};
      for (int32_t u : component) {
        layer.in[u] = -1;
        for (int32_t e : {part.start[u], part.end[u]})
          if (e > 0 && e < part.sections) layer.events.push_back(e);
      }
      std::sort(layer.events.begin(), layer.events.end());
      layer.events.erase(std::unique(layer.events.begin(), layer.events.end()), layer.events.end());
      if (backwards_) std::reverse(layer.events.begin(), layer.events.end());
      if (layer.events.empty()) layer.in[component[0]] = 1;  // a buffer spanning the part
      if (extend(layer, 0) || aborted_) return !aborted_;
    }
    return false;
  }

  // Under a pinned buffer, at its first step, the other buffers live there
  // fill the room down to the base exactly: some of them sum to it.
  bool rooms_below_pins_fillable(const Part& part, int64_t base) {
    for (size_t u = 0; u < part.buffers.size(); ++u) {
      const Buffer& x = p_.buffers[part.buffers[u]];
      if (!x.fixed_offset || *x.fixed_offset == base) continue;
      const int64_t room = *x.fixed_offset - base;
      sums_.reset(room);
      bool may_fill = false;
      for (size_t v = 0; v < part.buffers.size() && !may_fill; ++v)
        if (v != u && part.start[v] <= part.start[u] && part.start[u] < part.end[v])
          may_fill = sums_.add_may_reach(p_.buffers[part.buffers[v]].size, room, room);
      if (!spend(kChoiceWork * static_cast<int64_t>(part.buffers.size() + sums_.count())) || !may_fill) return false;
    }
    return true;
  }

  // Decides the layer at events k and on; once all are, packs both sides.
  bool extend(Layer& layer, size_t k) {
    if (k == layer.events.size()) return spend(kLayerWork) && split(layer);
    const int32_t event = layer.events[k];
    const auto touching = static_cast<int64_t>(layer.part.ending[event].size() + layer.part.starting[event].size());
    if (!spend(kLayerWork * (1 + touching))) return false;
    Choice choice;  // the undecided buffers there: ending ones count plus, starting ones minus
    int64_t balance = 0;  // layer bytes ending there minus starting there, decided so far
    for (int32_t u : layer.part.ending[event]) {
      if (layer.in[u] < 0) choice.items.push_back({u, size(layer, u)});
      if (layer.in[u] > 0) balance += size(layer, u);
    }
    for (int32_t u : layer.part.starting[event]) {
      if (layer.in[u] < 0) choice.items.push_back({u, -size(layer, u)});
      if (layer.in[u] > 0) balance -= size(layer, u);
    }
    if (static_cast<int32_t>(choice.items.size()) > max_choices_) return gave_up_ = true, false;
    // Largest first, so the bounds below cut early.
    std::sort(choice.items.begin(), choice.items.end(), [](const Item& x, const Item& y) {
      return std::abs(x.bytes) != std::abs(y.bytes) ? std::abs(x.bytes) > std::abs(y.bytes) : x.buffer < y.buffer;
    });
    choice.plus_left.assign(choice.items.size() + 1, 0);
    choice.minus_left.assign(choice.items.size() + 1, 0);
    for (size_t j = choice.items.size(); j-- > 0;) {
      const int64_t bytes = choice.items[j].bytes;
      choice.plus_left[j] = choice.plus_left[j + 1] + std::max<int64_t>(bytes, 0);
      choice.minus_left[j] = choice.minus_left[j + 1] + std::max<int64_t>(-bytes, 0);
    }
    return choose(layer, k, choice, 0, balance);
  }

  struct Item {
    int32_t buffer;  // part index
    int64_t bytes;   // its size, negative if it starts at the event
  };
  struct Choice {
    std::vector<Item> items;
    std::vector<int64_t> plus_left, minus_left;  // bytes of items[j..] that end / start there
  };

  int64_t size(const Layer& layer, int32_t u) const { return p_.buffers[layer.part.buffers[u]].size; }

  // Each of items[from..] joins the layer (first) or not, so that the
  // layer's bytes ending at the event equal those starting there:
  // `difference` (ending minus starting so far) must end at zero, so it must
  // stay within what the remaining items can still move it.
  bool choose(Layer& layer, size_t k, const Choice& choice, size_t from, int64_t difference) {
    if (!spend(kChoiceWork)) return false;
    if (difference < -choice.plus_left[from] || difference > choice.minus_left[from]) return false;
    if (from == choice.items.size()) return extend(layer, k + 1);
    const Item& item = choice.items[from];
    for (int8_t in : {1, 0}) {
      layer.in[item.buffer] = in;
      const bool found = choose(layer, k, choice, from + 1, difference + in * item.bytes);
      if (found || aborted_) return found;
    }
    layer.in[item.buffer] = -1;
    return false;
  }

  // The layer (if neither empty nor everything) below the rest, else above it.
  bool split(const Layer& layer) {
    std::vector<int32_t> chosen, rest;
    int64_t bytes = 0;  // the layer's live bytes at the part's first step (at every step)
    for (size_t i = 0; i < layer.part.buffers.size(); ++i) {
      (layer.in[i] > 0 ? chosen : rest).push_back(layer.part.buffers[i]);
      if (layer.in[i] > 0 && layer.part.start[i] == 0) bytes += p_.buffers[layer.part.buffers[i]].size;
    }
    if (chosen.empty() || rest.empty()) return false;
    const int64_t base = layer.base, top = layer.height - bytes;
    return (solve(chosen, base, bytes) && solve(rest, base + bytes, top)) ||
           (!aborted_ && solve(rest, base, top) && solve(chosen, base + top, bytes));
  }

  const Problem& p_;
  WorkBudget* budget_ = nullptr;  // this round's
  bool backwards_ = false;        // this round sweeps the time line from its end
  const int32_t max_choices_;
  std::vector<int64_t> offsets_;
  SubsetSums sums_{kMaxSubsetSums};  // scratch of rooms_below_pins_fillable
  FailedStates failed_;  // parts (at a base, where it matters) with no nested-cut packing
  int64_t parts_ = 0;
  bool aborted_ = false;  // the budget ran out
  bool gave_up_ = false;  // some event had too many undecided buffers to list their choices
};

}  // namespace

GuillotineResult guillotine_search(const Problem& problem, int64_t height, GuillotineOptions options) {
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

}  // namespace tinyarena::allocation
