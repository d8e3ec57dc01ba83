#include "test_framework.h"
#include "tinyarena/common/errors.h"
#include "tinyarena/graph/graph.h"
#include "tinyarena/graph/storage.h"
#include "tinyarena/liveness/liveness.h"

using namespace tinyarena;

TEST(storage_groups_compose_offsets_and_refuse_contradictions) {
  graph::StorageGroups groups({100, 40, 20, 10});
  CHECK(groups.join(0, 1, 30));  // 1 at 30 in 0
  CHECK(groups.join(1, 2, 10));  // 2 at 10 in 1: 40 in 0
  CHECK(groups.join(3, 0, 5));   // 0 at 5 in 3: the group now starts at 3's first byte
  CHECK_EQ(groups.root(2), 0);
  CHECK_EQ(groups.offset(2) - groups.offset(3), 45);
  CHECK_EQ(groups.begin(0), -5);
  CHECK_EQ(groups.end(0), 100);
  CHECK(groups.join(0, 2, 40));  // consistent
  CHECK(!groups.join(0, 2, 41));  // contradicts
  CHECK(!groups.placed(2));
  groups.mark_placed(3);
  CHECK(groups.placed(2));
}

// t0 [1,4,4,2] -> CONV -> t1 ; t0 -> CONV -> t2 ; CONCAT(t1, t2) -> t3 [1,4,4,4], elided:
// t1 and t2 are channel slices of t3, so one buffer lives from the first conv on.
TEST(placed_tensors_share_their_base_buffer_at_their_offset) {
  using namespace graph;
  Graph g;
  for (int32_t i = 0; i < 4; ++i) {
    Tensor t;
    t.index = i;
    t.dtype = DType::Int8;
    t.shape = {1, 4, 4, i == 3 ? 4 : 2};
    t.element_count = 16 * t.shape[3];
    t.byte_size = t.element_count;
    g.tensors.push_back(t);
  }
  g.tensors[1].placement = Placement{3, 0, 4};
  g.tensors[2].placement = Placement{3, 2, 4};
  const auto make_op = [](int32_t index, int32_t opcode, std::vector<int32_t> in, std::vector<int32_t> out) {
    Op o;
    o.index = index;
    o.opcode = opcode;
    o.inputs = in;
    o.outputs = out;
    return o;
  };
  g.ops = {make_op(0, 19, {0}, {1}), make_op(1, 19, {0}, {2}), make_op(2, 2, {1, 2}, {3})};
  g.ops[2].elided = true;
  g.inputs = {0};
  g.outputs = {3};
  g = link_graph(g);
  const auto l = liveness::analyze_liveness(g, {true, true, false});
  CHECK_EQ(l.tensor_buffer[1], l.tensor_buffer[3]);
  CHECK_EQ(l.tensor_buffer[2], l.tensor_buffer[3]);
  CHECK_EQ(l.tensor_offset[1], 0);
  CHECK_EQ(l.tensor_offset[2], 2);
  const auto& concat = l.buffers[l.tensor_buffer[3]];
  CHECK_EQ(concat.size, int64_t{64});
  CHECK_EQ(concat.first, 0);
  CHECK(l.inplace_ops.empty());  // RELU over t0 would land in a placed group
  g.tensors[2].placement = Placement{3, 60, 4};  // runs past the base
  bool thrown = false;
  try {
    liveness::analyze_liveness(g, {});
  } catch (const ModelError&) {
    thrown = true;
  }
  CHECK(thrown);
}
