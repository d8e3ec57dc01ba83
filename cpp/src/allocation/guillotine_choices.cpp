// The choices at one event of a layer's sweep: which undecided buffers
// there join the layer so that its bytes ending there equal those starting
// there. Invariant: the items are largest first and Reach bounds what the
// rest can still move the difference, so hopeless branches end at once;
// past kSearchedChoices items the smallest are tabulated (meet in the middle).
#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "guillotine_search.h"

namespace tinyarena::allocation::nested_cuts {

// Lists the subsets of `items` (each merges the list with itself shifted by its bytes).
void SubsetTable::build(const Item* items, size_t count) {
  subsets.assign(1, {0, 0});
  std::vector<std::pair<int64_t, uint32_t>> shifted, merged;
  for (size_t j = 0; j < count; ++j) {
    shifted = subsets;
    for (auto& [bytes, members] : shifted) {
      bytes += items[j].bytes;
      members |= 1u << j;
    }
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

// The undecided buffers at `event` into `choice` (ending ones count plus,
// starting ones minus; largest first, so the bounds cut early); returns
// the layer's bytes ending there minus those starting there, decided so far.
int64_t Search::open_choice(const Layer& layer, int32_t event, Choice& choice) const {
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
    choice.reach[j] = {bytes, after.ending_left + std::max<int64_t>(bytes, 0), after.starting_left + std::max<int64_t>(-bytes, 0)};
  }
  return balance;
}

// Meet in the middle: the smallest items' subsets are listed by bytes
// (once per part, component, direction and event: see SubsetTable), so
// the search over the other items looks up the ones that balance them.
bool Search::tabulate(const Layer& layer, size_t k, Choice& choice) {
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
bool Search::choose(Layer& layer, size_t k, const Sweep& sweep, const Choice& choice, size_t from, int64_t difference) {
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

// The tabulated subsets that bring `difference` to zero, in turn (none
// tabulated: the bounds in choose() left it zero).
bool Search::choose_listed(Layer& layer, size_t k, const Sweep& sweep, const Choice& choice, int64_t difference) {
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

// The layer's bytes ending at `event` can still equal those starting
// there: some undecided buffers there make up the difference (searched
// largest first within kBalanceNodes, past which it counts as possible).
bool Search::balanceable(const Layer& layer, int32_t event) {
  const int64_t difference = open_choice(layer, event, ahead_);
  int64_t nodes = kBalanceNodes;
  const bool possible = makes_up(ahead_.reach.data(), ahead_.items.size(), difference, nodes);
  const auto touching = static_cast<int64_t>(layer.part.ending[event].size() + layer.part.starting[event].size());
  spend(kNodeWork * (kBalanceNodes - nodes + touching));
  return possible;
}

// Some of the `left` items from `reach` on bring `difference` to zero (or the nodes ran out).
bool Search::makes_up(const Reach* reach, size_t left, int64_t difference, int64_t& nodes) {
  if (!reach->can_balance(difference)) return false;
  if (left == 0 || nodes-- <= 0) return true;
  return makes_up(reach + 1, left - 1, difference + reach->bytes, nodes) ||
         makes_up(reach + 1, left - 1, difference, nodes);
}

}  // namespace tinyarena::allocation::nested_cuts
