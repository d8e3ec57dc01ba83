#include "test_framework.h"
#include "tinyarena/common/errors.h"
#include "tinyarena/graph/graph.h"
#include "tinyarena/liveness/liveness.h"

using namespace tinyarena;
using namespace tinyarena::graph;

namespace {

constexpr int32_t kAdd = 0, kConv = 3, kDepthwise = 4, kReshape = 22;

Tensor activation(int32_t index, std::vector<int32_t> shape) {
  Tensor t;
  t.index = index;
  t.name = "t" + std::to_string(index);
  t.shape = shape;
  t.dtype = DType::Int8;
  t.element_count = 1;
  for (int32_t d : shape) t.element_count *= d;
  t.byte_size = t.element_count;
  return t;
}

Op op(int32_t index, int32_t opcode, std::vector<int32_t> inputs, std::vector<int32_t> outputs) {
  Op o;
  o.index = index;
  o.opcode = opcode;
  o.type = "op" + std::to_string(opcode);
  o.inputs = inputs;
  o.outputs = outputs;
  return o;
}

// input t0 -> depthwise -> t1 -> reshape -> t2 -> add(t2, t0') ...
// t0 [1,8,8,4] -> DW 3x3 (weights t4) -> t1 [1,8,8,4] -> RESHAPE -> t2 [1,256] -> ADD(t2,t2) -> t3 [1,256]
Graph chain() {
  Graph g;
  Tensor weights = activation(4, {1, 3, 3, 4});
  weights.data = DataRef{0, 36};  // scratch depends on shapes only: the bytes are never read
  g.tensors = {activation(0, {1, 8, 8, 4}), activation(1, {1, 8, 8, 4}), activation(2, {1, 256}),
               activation(3, {1, 256}), weights};
  g.ops = {op(0, kDepthwise, {0, 4, -1}, {1}), op(1, kReshape, {1}, {2}), op(2, kAdd, {2, 2}, {3})};
  g.inputs = {0};
  g.outputs = {3};
  return link_graph(g);
}

}  // namespace

TEST(views_share_their_input_buffer) {
  const auto l = liveness::analyze_liveness(chain(), {false, false, false});
  CHECK_EQ(l.tensor_buffer[1], l.tensor_buffer[2]);
  CHECK(l.tensor_buffer[0] != l.tensor_buffer[1]);
  CHECK_EQ(l.buffers.size(), 3u);
  const auto& input = l.buffers[l.tensor_buffer[0]];
  CHECK_EQ(input.first, 0);
  CHECK_EQ(input.last, 0);
  const auto& output = l.buffers[l.tensor_buffer[3]];
  CHECK_EQ(output.first, 2);
  CHECK_EQ(output.last, 2);
}

TEST(inplace_merges_depthwise_and_elementwise_and_adds_the_plane_scratch) {
  const auto l = liveness::analyze_liveness(chain(), {true, true, true});
  CHECK_EQ(l.tensor_buffer[0], l.tensor_buffer[1]);
  CHECK_EQ(l.tensor_buffer[2], l.tensor_buffer[3]);
  CHECK_EQ(l.inplace_ops.size(), 2u);
  // One activation buffer [0, 2] plus the in-place depthwise kernel's scratch: its SIMD path's
  // int16 planes of (8 + 2) rows x 12 columns (11 rounded up to even, so rows stay word-aligned;
  // +2 values), four of them since a plane this small (<= 200 values) runs 4 channels at once,
  // and 8 + 1 int32 accumulators, more than the 8x8 int8 plane of the portable path
  // (ta_depthwise_conv_s8_inplace_scratch_bytes).
  CHECK_EQ(l.buffers.size(), 2u);
  CHECK_EQ(l.buffers[0].first, 0);
  CHECK_EQ(l.buffers[0].last, 2);
  CHECK(l.buffers[1].kind == liveness::BufferKind::Scratch);
  CHECK_EQ(l.buffers[1].size, 4 * (10 * 12 + 2) * 2 + 9 * 4);
}

TEST(graph_outputs_are_never_overwritten_in_place) {
  Graph g = chain();
  g.outputs = {1, 3};  // the depthwise output must now survive to the end
  g = link_graph(g);
  const auto l = liveness::analyze_liveness(g, {true, true, false});
  CHECK_EQ(l.buffers[l.tensor_buffer[1]].last, 2);
  CHECK(l.tensor_buffer[2] != l.tensor_buffer[3]);  // t2 aliases t1, an output
}

TEST(schedule_must_respect_dependencies) {
  bool thrown = false;
  try {
    liveness::analyze_liveness(chain(), {}, {1, 0, 2});
  } catch (const std::invalid_argument&) {
    thrown = true;
  }
  CHECK(thrown);
}

TEST(link_graph_rejects_reads_before_writes) {
  Graph g;
  g.tensors = {activation(0, {4}), activation(1, {4})};
  g.ops = {op(0, kConv, {1}, {0})};
  bool thrown = false;
  try {
    link_graph(g);
  } catch (const ModelError&) {
    thrown = true;
  }
  CHECK(thrown);
}

// float input -> QUANTIZE -> t1 -> DEQUANTIZE -> float output: both floats stay in the caller's arrays.
TEST(float_io_stays_in_the_callers_arrays) {
  constexpr int32_t kQuantize = 114, kDequantize = 6;
  Graph g;
  Tensor in = activation(0, {1, 64}), out = activation(2, {1, 64});
  for (Tensor* t : {&in, &out}) t->dtype = DType::Float32, t->byte_size = 256;
  g.tensors = {in, activation(1, {1, 64}), out};
  g.ops = {op(0, kQuantize, {0}, {1}), op(1, kDequantize, {1}, {2})};
  g.inputs = {0};
  g.outputs = {2};
  g = link_graph(g);
  const liveness::Liveness caller = liveness::analyze_liveness(g);
  CHECK(caller.caller_tensors == std::vector<int32_t>({0, 2}));
  CHECK_EQ(caller.tensor_buffer[0], -1);
  CHECK_EQ(caller.tensor_buffer[2], -1);
  CHECK_EQ(caller.buffers.size(), size_t{1});  // the int8 tensor only
  CHECK(caller.inplace_ops.empty());           // the QUANTIZE cannot write into the caller's input
  liveness::LivenessOptions held;
  held.caller_float_io = false;
  const liveness::Liveness arena = liveness::analyze_liveness(g, held);
  CHECK(arena.caller_tensors.empty());
  CHECK(arena.tensor_buffer[0] >= 0 && arena.tensor_buffer[2] >= 0);
}
