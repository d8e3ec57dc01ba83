#include <algorithm>
#include <numeric>
#include <tuple>
#include <unordered_set>

#include "tinyarena/schedule/search.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::schedule {
namespace {

// Work units of expanding a state, per op scanned for readiness and per ready op run.
constexpr int64_t kOpWork = 5;

// One state: the ops run (in the word pool), the oversized buffers (in the
// inflation pool), and the best way found to reach it.
struct Node {
  int64_t peak = 0;   // lowest peak of any path found to this state
  int64_t bytes = 0;  // live before the next op (a function of the state)
  int32_t parent = -1, op = -1;
  uint32_t inflated_begin = 0, inflated_count = 0;
};

class Search {
 public:
  Search(const MemoryModel& model, std::vector<int32_t> ops, int64_t bound)
      : model_(model), ops_(std::move(ops)), bound_(bound), level_(16, Hash{this}, Same{this}) {
    for (int32_t op : ops_) by_floor_.push_back({op_floor_bytes(model, op), op});
    std::sort(by_floor_.rbegin(), by_floor_.rend());
  }

  SearchResult run(const MemoryState& first, const SearchBudget& budget) {
    WorkBudget work(budget.seconds);
    sets_ = first.done;
    pool_ = first.inflated;
    nodes_.push_back({0, first.bytes, -1, -1, 0, static_cast<uint32_t>(first.inflated.size())});
    SearchResult result;
    size_t begin = 0, end = 1;
    std::vector<uint64_t> done(model_.words);
    std::vector<Inflation> inflated;
    std::vector<int32_t> ready;
    MemoryState after;
    bool truncated = false;
    const int32_t depths = static_cast<int32_t>(ops_.size());
    for (int32_t depth = 0; depth < depths && begin < end; ++depth) {
      level_.clear();
      for (size_t i = begin; i < end; ++i) {
        if (work.spent()) return stopped(result);
        const Node node = nodes_[i];
        std::copy_n(&sets_[i * model_.words], model_.words, done.begin());
        inflated.assign(pool_.begin() + node.inflated_begin, pool_.begin() + node.inflated_begin + node.inflated_count);
        ready.clear();
        for (int32_t op : ops_)
          if (is_ready(model_, done.data(), op)) ready.push_back(op);
        work.charge(kOpWork * (depths + static_cast<int64_t>(ready.size())));
        const int32_t only = free_op(done.data(), ready, inflated, node, after);
        for (int32_t op : ready) {
          if (only >= 0 && op != only) continue;
          const int64_t peak = std::max(node.peak, run_op(model_, done.data(), inflated, node.bytes, op, after));
          if (peak >= bound_) continue;
          push(done, after, peak, static_cast<int32_t>(i), op);
          if (static_cast<int64_t>(nodes_.size()) > budget.max_states) return stopped(result);
        }
      }
      begin = end;
      end = nodes_.size();
      if (budget.beam > 0 && end - begin > static_cast<size_t>(budget.beam)) {
        keep_best(begin, static_cast<size_t>(budget.beam));
        end = nodes_.size();
        truncated = true;
      }
    }
    result.completed = !truncated;
    result.states = static_cast<int64_t>(nodes_.size());
    if (begin == end || ops_.empty()) return result;
    size_t best = begin;
    for (size_t i = begin; i < end; ++i)
      if (nodes_[i].peak < nodes_[best].peak) best = i;
    result.best.peak = nodes_[best].peak;
    for (int32_t i = static_cast<int32_t>(best); nodes_[i].parent >= 0; i = nodes_[i].parent)
      result.best.order.push_back(nodes_[i].op);
    std::reverse(result.best.order.begin(), result.best.order.end());
    return result;
  }

 private:
  struct Hash {
    const Search* s;
    size_t operator()(int32_t i) const {
      uint64_t h = 0x9E3779B97F4A7C15ull;
      auto mix = [&h](uint64_t v) { h = (h ^ v) * 0xBF58476D1CE4E5B9ull; h ^= h >> 31; };
      const uint64_t* set = &s->sets_[static_cast<size_t>(i) * s->model_.words];
      for (int32_t w = 0; w < s->model_.words; ++w) mix(set[w]);
      const Node& n = s->nodes_[i];
      for (uint32_t k = 0; k < n.inflated_count; ++k) mix(static_cast<uint64_t>(s->pool_[n.inflated_begin + k].size));
      return h;
    }
  };
  struct Same {
    const Search* s;
    bool operator()(int32_t a, int32_t b) const {
      const size_t w = s->model_.words;
      if (!std::equal(&s->sets_[a * w], &s->sets_[a * w] + w, &s->sets_[b * w])) return false;
      const Node &x = s->nodes_[a], &y = s->nodes_[b];
      if (x.inflated_count != y.inflated_count) return false;
      for (uint32_t k = 0; k < x.inflated_count; ++k) {
        const Inflation &p = s->pool_[x.inflated_begin + k], &q = s->pool_[y.inflated_begin + k];
        if (p.component != q.component || p.size != q.size) return false;
      }
      return true;
    }
  };

  // Stores the state reached by running `op`, or improves its twin.
  void push(const std::vector<uint64_t>& done, const MemoryState& after, int64_t peak, int32_t parent, int32_t op) {
    const size_t index = nodes_.size();
    sets_.insert(sets_.end(), done.begin(), done.end());
    add_op(&sets_[index * model_.words], op);
    if (floor_of_rest(&sets_[index * model_.words]) >= bound_) return drop(index);
    nodes_.push_back({peak, after.bytes, parent, op, static_cast<uint32_t>(pool_.size()),
                      static_cast<uint32_t>(after.inflated.size())});
    pool_.insert(pool_.end(), after.inflated.begin(), after.inflated.end());
    const auto [it, fresh] = level_.insert(static_cast<int32_t>(index));
    if (fresh) return;
    Node& twin = nodes_[*it];
    if (peak < twin.peak) twin = {peak, twin.bytes, parent, op, twin.inflated_begin, twin.inflated_count};
    pool_.resize(nodes_.back().inflated_begin);
    nodes_.pop_back();
    drop(index);
  }
  void drop(size_t index) { sets_.resize(index * model_.words); }

  // Beam: the level from `begin` keeps its `width` states of lowest (peak,
  // bytes), in their order of creation.
  void keep_best(size_t begin, size_t width) {
    std::vector<size_t> kept(nodes_.size() - begin);
    std::iota(kept.begin(), kept.end(), begin);
    const auto better = [this](size_t a, size_t b) {
      return std::tie(nodes_[a].peak, nodes_[a].bytes, a) < std::tie(nodes_[b].peak, nodes_[b].bytes, b);
    };
    std::nth_element(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(width), kept.end(), better);
    kept.resize(width);
    std::sort(kept.begin(), kept.end());
    const uint32_t pool_begin = nodes_[begin].inflated_begin;
    std::vector<Node> nodes;
    std::vector<uint64_t> sets;
    std::vector<Inflation> pool;
    for (size_t i : kept) {
      Node node = nodes_[i];
      sets.insert(sets.end(), &sets_[i * model_.words], &sets_[(i + 1) * model_.words]);
      pool.insert(pool.end(), pool_.begin() + node.inflated_begin,
                  pool_.begin() + node.inflated_begin + node.inflated_count);
      node.inflated_begin = pool_begin + static_cast<uint32_t>(pool.size() - node.inflated_count);
      nodes.push_back(node);
    }
    nodes_.resize(begin);
    sets_.resize(begin * model_.words);
    pool_.resize(pool_begin);
    nodes_.insert(nodes_.end(), nodes.begin(), nodes.end());
    sets_.insert(sets_.end(), sets.begin(), sets.end());
    pool_.insert(pool_.end(), pool.begin(), pool.end());
  }

  // A ready op that costs nothing to run now: it is the last reader of all it
  // reads, runs within the peak so far and leaves no more bytes than before.
  // Running it first never hurts: moved ahead in any completion, it lowers
  // every state in between by the same bytes and changes no op's in-place
  // choice (nobody else reads its inputs; its own victims die either way).
  int32_t free_op(const uint64_t* done, const std::vector<int32_t>& ready, const std::vector<Inflation>& inflated,
                  const Node& node, MemoryState& after) const {
    for (int32_t op : ready) {
      if (!last_reader(done, op)) continue;
      if (run_op(model_, done, inflated, node.bytes, op, after) <= node.peak && after.bytes <= node.bytes) return op;
    }
    return -1;
  }
  bool last_reader(const uint64_t* done, int32_t op) const {
    for (int32_t c : model_.op[op].uses)
      for (int32_t reader : model_.components[c].consumers)
        if (reader != op && !has_op(done, reader)) return false;
    return true;
  }

  // The largest floor among the ops not yet run.
  int64_t floor_of_rest(const uint64_t* done) const {
    for (const auto& [floor, op] : by_floor_)
      if (!has_op(done, op)) return floor;
    return 0;
  }

  SearchResult& stopped(SearchResult& result) {
    result.states = static_cast<int64_t>(nodes_.size());
    return result;
  }

  const MemoryModel& model_;
  const std::vector<int32_t> ops_;  // the ops to order, ascending
  const int64_t bound_;
  std::vector<uint64_t> sets_;  // model_.words per node
  std::vector<Node> nodes_;     // levels one after another
  std::vector<Inflation> pool_;
  std::vector<std::pair<int64_t, int32_t>> by_floor_;  // (floor, op), highest first
  std::unordered_set<int32_t, Hash, Same> level_;      // nodes of the level being built
};

}  // namespace

int64_t op_floor_bytes(const MemoryModel& model, int32_t op) {
  const OpInfo& info = model.op[op];
  int64_t base = 0;
  for (int32_t c : info.uses) base += model.components[c].size;
  for (int32_t c : info.births) base += model.components[c].size;
  int64_t floor = base + info.scratch;
  const int64_t out = info.out >= 0 ? model.components[info.out].size : 0;
  for (int32_t v : info.victims)
    floor = std::min(floor, base - std::min(model.components[v].size, out) + info.inplace_scratch);
  return floor;
}

SearchResult search_order(const MemoryModel& model, int64_t bound, const SearchBudget& budget) {
  std::vector<int32_t> ops(model.ops);
  std::iota(ops.begin(), ops.end(), 0);
  return Search(model, std::move(ops), bound).run(initial_state(model), budget);
}

SearchResult search_window(const MemoryModel& model, const MemoryState& start, std::vector<int32_t> ops, int64_t bound,
                           const SearchBudget& budget) {
  std::sort(ops.begin(), ops.end());
  return Search(model, std::move(ops), bound).run(start, budget);
}

}  // namespace tinyarena::schedule
