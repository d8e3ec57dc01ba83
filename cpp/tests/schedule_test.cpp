// The schedule stage on hand-made graphs (branches, in-place, views) and, on
// small random graphs, against every topological order (brute force).
#include <algorithm>
#include <functional>

#include "test_framework.h"
#include "tinyarena/graph/graph.h"
#include "tinyarena/schedule/memory_model.h"
#include "tinyarena/schedule/schedule.h"
#include "tinyarena/schedule/search.h"

using namespace tinyarena;
using namespace tinyarena::graph;
using schedule::Method;

namespace {

constexpr int32_t kAdd = 0, kConcat = 2, kConv = 3, kDepthwise = 4, kMaxPool = 17, kRelu = 19, kReshape = 22;

// Appends tensors and ops to a graph; ops get fresh int8 output tensors.
struct GraphMaker {
  Graph g;

  int32_t tensor(std::vector<int32_t> shape, bool constant = false) {
    Tensor t;
    t.index = static_cast<int32_t>(g.tensors.size());
    t.name = "t" + std::to_string(t.index);
    t.shape = shape;
    t.dtype = DType::Int8;
    for (int32_t d : shape) t.element_count *= d;
    t.byte_size = t.element_count;
    if (constant) t.data = DataRef{0, static_cast<size_t>(t.element_count)};
    g.tensors.push_back(t);
    return t.index;
  }
  int32_t input(std::vector<int32_t> shape) {
    g.inputs.push_back(tensor(shape));
    return g.inputs.back();
  }
  int32_t op(int32_t opcode, std::vector<int32_t> inputs, std::vector<int32_t> out_shape, int32_t stride = 1) {
    Op o;
    o.index = static_cast<int32_t>(g.ops.size());
    o.opcode = opcode;
    o.type = "op" + std::to_string(opcode);
    o.inputs = inputs;
    o.outputs = {tensor(out_shape)};
    o.options.stride_h = o.options.stride_w = stride;
    g.ops.push_back(o);
    return o.outputs[0];
  }
  // A 3x3 convolution with constant weights (so it asks for im2col scratch).
  int32_t conv(int32_t x, std::vector<int32_t> out_shape, int32_t stride = 1) {
    const int32_t w = tensor({out_shape[3], 3, 3, g.tensors[x].shape[3]}, true);
    return op(kConv, {x, w, -1}, out_shape, stride);
  }
  Graph done(std::vector<int32_t> outputs) {
    g.outputs = outputs;
    return link_graph(g);
  }
};

liveness::LivenessOptions inplace(bool on) { return {on, on, true}; }

schedule::ScheduleResult find(const Graph& g, bool in_place, Method method = Method::Auto, int64_t align = 1) {
  schedule::ScheduleOptions options;
  options.liveness = inplace(in_place);
  options.alignment = align;
  options.method = method;
  return schedule::find_schedule(g, options);
}

// Two branches from a small input: a big one that pools to small, a medium
// one; the file interleaves them so both large tensors meet.
Graph two_branches() {
  GraphMaker m;
  const int32_t x = m.input({1, 4, 4, 1});                 // 16 B
  const int32_t big = m.op(kMaxPool, {x}, {1, 10, 10, 10});  // 1000 B
  const int32_t mid = m.op(kMaxPool, {x}, {1, 10, 10, 8});   // 800 B
  const int32_t a = m.op(kMaxPool, {big}, {1, 2, 2, 2});     // 8 B
  const int32_t b = m.op(kMaxPool, {mid}, {1, 2, 2, 2});     // 8 B
  return m.done({m.op(kConcat, {a, b}, {1, 2, 2, 4})});
}

int64_t peak(const Graph& g, std::vector<int32_t> order, bool in_place, int64_t align = 1) {
  return schedule::order_peak_bytes(g, order, inplace(in_place), align);
}

}  // namespace

TEST(schedule_runs_each_branch_to_its_end_before_starting_the_next) {
  const Graph g = two_branches();
  const auto r = find(g, false);
  CHECK_EQ(r.file_peak_bytes, 16 + 1000 + 800);
  CHECK_EQ(r.peak_bytes, 16 + 1000 + 8);  // one branch pooled before the other starts
  const auto at = [&](int32_t op) { return std::find(r.order.begin(), r.order.end(), op) - r.order.begin(); };
  CHECK(at(2) < at(1) || at(3) < at(0));
  CHECK(r.method == Method::Exact);
  CHECK(r.proven_optimal);
  CHECK_EQ(peak(g, r.order, false), r.peak_bytes);
}

TEST(schedule_keeps_the_file_order_when_nothing_beats_it) {
  GraphMaker m;
  const int32_t x = m.input({1, 8, 8, 2});
  const int32_t y = m.op(kMaxPool, {x}, {1, 4, 4, 2});
  const Graph g = m.done({m.op(kMaxPool, {y}, {1, 2, 2, 2})});
  for (Method method : {Method::Auto, Method::Exact, Method::Greedy, Method::File}) {
    const auto r = find(g, true, method);
    CHECK(r.order == (std::vector<int32_t>{0, 1}));
    CHECK_EQ(r.peak_bytes, r.file_peak_bytes);
  }
}

TEST(greedy_and_file_methods_never_lose_to_the_file_order) {
  const Graph g = two_branches();
  const auto greedy = find(g, false, Method::Greedy);
  CHECK(greedy.method == Method::Greedy);
  CHECK(!greedy.proven_optimal);
  CHECK(greedy.peak_bytes <= greedy.file_peak_bytes);
  const auto file = find(g, false, Method::File);
  CHECK(file.method == Method::File);
  CHECK_EQ(file.peak_bytes, file.file_peak_bytes);
}

// x (1000 B) feeds a RELU and a pool: running the pool first lets the RELU
// die-write over x in place.
TEST(schedule_orders_readers_so_an_elementwise_op_runs_in_place) {
  GraphMaker m;
  const int32_t x = m.op(kMaxPool, {m.input({1, 2, 2, 1})}, {1, 10, 10, 10});
  const int32_t relu = m.op(kRelu, {x}, {1, 10, 10, 10});
  const int32_t pooled = m.op(kMaxPool, {x}, {1, 1, 1, 4});
  const Graph g = m.done({relu, pooled});
  const auto on = find(g, true);
  CHECK_EQ(on.file_peak_bytes, 4 + 2000);
  CHECK(on.order == (std::vector<int32_t>{0, 2, 1}));
  CHECK_EQ(on.peak_bytes, 4 + 1000);
  CHECK(on.proven_optimal);
  const auto off = find(g, false);
  CHECK_EQ(off.peak_bytes, off.file_peak_bytes);  // no order helps without in-place
}

// A view adds no bytes and keeps its base alive until the view's readers ran.
TEST(schedule_treats_views_as_their_base_buffer) {
  GraphMaker m;
  const int32_t in = m.input({1, 2, 2, 2});                       // 8 B
  const int32_t x = m.op(kMaxPool, {in}, {1, 10, 10, 10});        // 1000 B
  const int32_t view = m.op(kReshape, {x}, {1, 1000});
  const int32_t y = m.op(kMaxPool, {in}, {1, 10, 10, 8});         // 800 B
  const int32_t z = m.op(kMaxPool, {view}, {1, 2});               // 2 B
  const Graph g = m.done({m.op(kConcat, {z, m.op(kMaxPool, {y}, {1, 2})}, {1, 4})});
  const auto r = find(g, true);
  CHECK_EQ(r.file_peak_bytes, 8 + 1000 + 800);
  CHECK_EQ(r.peak_bytes, 8 + 1000 + 2);
  CHECK(r.proven_optimal);
}

// A strided depthwise written in place keeps its input's larger buffer:
// the search must not count the smaller output's size afterwards.
TEST(schedule_accounts_for_an_inplace_buffer_larger_than_its_tensor) {
  GraphMaker m;
  const int32_t x = m.op(kMaxPool, {m.input({1, 1, 1, 1})}, {1, 16, 16, 4});  // 1024 B
  const int32_t dw = m.op(kDepthwise, {x, -1, -1}, {1, 8, 8, 4}, 2);           // 256 B, in place
  const int32_t other = m.op(kMaxPool, {m.g.inputs[0]}, {1, 10, 10, 5});       // 500 B
  const Graph g = m.done({m.op(kConcat, {m.op(kMaxPool, {dw}, {1, 1, 1, 4}), other}, {1, 1, 1, 504})});
  for (bool in_place : {false, true}) {
    const auto r = find(g, in_place);
    CHECK(r.proven_optimal);
    CHECK_EQ(r.peak_bytes, peak(g, r.order, in_place));
  }
}

namespace {

uint64_t next(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  return z ^ (z >> 27);
}

// A random graph of `ops` ops over [1,h,w,c] tensors: convolutions (with
// scratch), depthwise (some strided), RELU, ADD, RESHAPE and pools.
Graph random_graph(uint64_t seed, int ops) {
  uint64_t s = seed * 7919 + 1;
  auto below = [&](uint64_t n) { return static_cast<int32_t>(next(s) % n); };
  GraphMaker m;
  std::vector<int32_t> maps = {m.input({1, 2 << below(3), 2 << below(3), 1 + below(6)})};
  if (below(3) == 0) maps.push_back(m.input({1, 4, 4, 1 + below(6)}));
  for (int i = 0; i < ops; ++i) {
    const int32_t x = maps[below(maps.size())];
    const std::vector<int32_t> shape = m.g.tensors[x].shape;
    const int32_t side = std::max(1, shape[1] / 2);
    switch (below(6)) {
      case 0: maps.push_back(m.conv(x, {1, shape[1], shape[2], 1 + below(8)})); break;
      case 1:
        maps.push_back(below(3) ? m.op(kDepthwise, {x, -1, -1}, shape)
                                : m.op(kDepthwise, {x, -1, -1}, {1, side, std::max(1, shape[2] / 2), shape[3]}, 2));
        break;
      case 2: maps.push_back(m.op(kRelu, {x}, shape)); break;
      case 3: {
        std::vector<int32_t> same;
        for (int32_t t : maps)
          if (t != x && m.g.tensors[t].shape == shape) same.push_back(t);
        maps.push_back(same.empty() ? m.op(kRelu, {x}, shape) : m.op(kAdd, {x, same[below(same.size())]}, shape));
        break;
      }
      case 4: {  // a view, read back by a pool to keep tensors rank 4
        const int32_t v = m.op(kReshape, {x}, {1, shape[1] * shape[2] * shape[3]});
        maps.push_back(m.op(kMaxPool, {v}, {1, 1, 1, 1 + below(16)}));
        ++i;
        break;
      }
      default: maps.push_back(m.op(kMaxPool, {x}, {1, side, side, 1 + below(12)})); break;
    }
  }
  std::vector<int32_t> outputs;
  std::vector<bool> read(m.g.tensors.size(), false);
  for (const Op& op : m.g.ops)
    for (int32_t t : op.inputs)
      if (t >= 0) read[t] = true;
  for (int32_t t : maps)
    if (!read[t] || below(8) == 0) outputs.push_back(t);
  return m.done(outputs);
}

// Calls `visit` with every topological order; stops after `limit` of them.
void each_order(const Graph& g, int64_t limit, const std::function<void(const std::vector<int32_t>&)>& visit) {
  const auto model = schedule::build_memory_model(g, {}, 1);
  std::vector<uint64_t> done(model.words, 0);
  std::vector<int32_t> order;
  int64_t count = 0;
  std::function<void()> walk = [&]() {
    if (count >= limit) return;
    if (order.size() == g.ops.size()) {
      ++count;
      return visit(order);
    }
    for (int32_t op = 0; op < model.ops; ++op) {
      if (!schedule::is_ready(model, done.data(), op)) continue;
      order.push_back(op);
      schedule::add_op(done.data(), op);
      walk();
      done[op >> 6] &= ~(uint64_t{1} << (op & 63));
      order.pop_back();
    }
  };
  walk();
}

}  // namespace

// The model's peak equals the liveness stage's for every order, and exact
// search finds the brute-force optimum, in-place on and off.
TEST(exact_schedule_matches_brute_force_on_small_random_graphs) {
  int graphs = 0;
  for (uint64_t seed = 0; seed < 150; ++seed) {
    const Graph g = random_graph(seed, 3 + static_cast<int>(seed % 6));
    for (bool in_place : {false, true}) {
      const int64_t align = seed % 3 == 0 ? 16 : 1;
      const auto model = schedule::build_memory_model(g, inplace(in_place), align);
      int64_t best = INT64_MAX, orders = 0;
      each_order(g, 2000, [&](const std::vector<int32_t>& order) {
        const int64_t measured = peak(g, order, in_place, align);
        CHECK_EQ(schedule::model_peak(model, order), measured);
        best = std::min(best, measured);
        ++orders;
      });
      if (orders >= 2000) continue;
      const auto r = find(g, in_place, Method::Exact, align);
      CHECK_EQ(r.peak_bytes, best);
      CHECK(r.proven_optimal);
      CHECK_EQ(peak(g, r.order, in_place, align), r.peak_bytes);
      CHECK(r.peak_bytes <= r.file_peak_bytes);
      for (Method heuristic : {Method::Greedy, Method::Beam, Method::Local}) {
        const auto h = find(g, in_place, heuristic, align);
        CHECK(h.peak_bytes >= best && h.peak_bytes <= h.file_peak_bytes);
        CHECK_EQ(peak(g, h.order, in_place, align), h.peak_bytes);
      }
      ++graphs;
    }
  }
  CHECK(graphs > 250);
}

TEST(exact_schedule_falls_back_to_beam_search_beyond_its_budgets) {
  const Graph g = random_graph(7, 12);
  schedule::ScheduleOptions options;
  options.max_states = 1;
  auto r = schedule::find_schedule(g, options);
  CHECK(r.method == Method::Beam || r.method == Method::Local);  // which runs out too; local improvement may help
  CHECK(!r.proven_optimal);
  CHECK(r.peak_bytes <= r.file_peak_bytes);
  options = {};
  options.exact_max_ops = 4;
  options.beam_width = 1;
  r = schedule::find_schedule(g, options);
  CHECK(r.method == Method::Beam || r.method == Method::Local);
  CHECK(!r.proven_optimal);
  options.beam_width = 100000;  // no level overflows: the beam was an exact search
  r = schedule::find_schedule(g, options);
  CHECK(r.method == Method::Exact);
  CHECK(r.proven_optimal);
  bool thrown = false;
  try {
    schedule::parse_method("fastest");
  } catch (const std::invalid_argument&) {
    thrown = true;
  }
  CHECK(thrown);
}

// Local improvement of any order keeps a valid order, never raises the model's
// peak, and reports the peak it reached.
TEST(local_improvement_never_worsens_an_order) {
  int improved = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const Graph g = random_graph(seed, 8 + static_cast<int>(seed % 10));
    const auto model = schedule::build_memory_model(g, inplace(seed % 2 == 0), 16);
    std::vector<int32_t> file(g.ops.size());
    for (size_t i = 0; i < file.size(); ++i) file[i] = static_cast<int32_t>(i);
    const schedule::Found start{file, schedule::model_peak(model, file)};
    const schedule::Found local = schedule::improve_order(model, start, 4, 0);
    CHECK(local.peak <= start.peak);
    CHECK_EQ(schedule::model_peak(model, local.order), local.peak);
    std::vector<int32_t> sorted = local.order;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == file);
    std::vector<bool> done(g.ops.size(), false);
    for (int32_t op : local.order) {
      for (int32_t p : model.op[op].preds) CHECK(done[p]);
      done[op] = true;
    }
    improved += local.peak < start.peak;
  }
  CHECK(improved > 0);
}

