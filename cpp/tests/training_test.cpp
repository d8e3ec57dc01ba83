#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "test_framework.h"
#include "tinyarena/allocation/validator.h"
#include "tinyarena/common/errors.h"
#include "tinyarena/graph/graph.h"
#include "tinyarena/training/training_plan.h"

using namespace tinyarena;

namespace {

// t0 [1,8] int8 -> FULLY_CONNECTED (t1 weights [4,8] int8, t2 bias [4] int32) -> t3 [1,4]
// -> SOFTMAX -> t4 [1,4]. Constant bytes are zeros: only their sizes matter here.
graph::Graph dense_classifier() {
  using namespace graph;
  Graph g;
  g.model_bytes = std::make_shared<const std::vector<uint8_t>>(64, uint8_t{0});
  const auto tensor = [&](std::vector<int32_t> shape, DType dtype, std::optional<DataRef> data) {
    Tensor t;
    t.index = static_cast<int32_t>(g.tensors.size());
    t.name = "t" + std::to_string(t.index);
    t.shape = shape;
    t.dtype = dtype;
    t.element_count = 1;
    for (int32_t d : shape) t.element_count *= d;
    t.byte_size = t.element_count * (dtype == DType::Int32 ? 4 : 1);
    t.quantization.scale = {0.1f};
    t.quantization.zero_point = {0};
    t.data = data;
    g.tensors.push_back(t);
  };
  tensor({1, 8}, DType::Int8, std::nullopt);
  tensor({4, 8}, DType::Int8, DataRef{0, 32});
  tensor({4}, DType::Int32, DataRef{32, 16});
  tensor({1, 4}, DType::Int8, std::nullopt);
  tensor({1, 4}, DType::Int8, std::nullopt);
  Op fc;
  fc.index = 0;
  fc.opcode = 9;
  fc.type = "FULLY_CONNECTED";
  fc.inputs = {0, 1, 2};
  fc.outputs = {3};
  Op softmax;
  softmax.index = 1;
  softmax.opcode = 25;
  softmax.type = "SOFTMAX";
  softmax.inputs = {3};
  softmax.outputs = {4};
  g.ops = {fc, softmax};
  g.inputs = {0};
  g.outputs = {4};
  return link_graph(std::move(g));
}

bool throws_invalid(const std::string& spec) {
  try {
    training::parse_spec(spec);
  } catch (const std::invalid_argument&) {
    return true;
  }
  return false;
}

}  // namespace

TEST(training_specs_parse_and_print_back) {
  using training::parse_spec;
  using training::spec_text;
  CHECK_EQ(spec_text(parse_spec("bias")), std::string("bias"));
  CHECK_EQ(spec_text(parse_spec("last:2")), std::string("last:2"));
  CHECK_EQ(spec_text(parse_spec("layers:4,1@0.25")), std::string("layers:1,4@0.25"));
  CHECK(parse_spec("auto").kind == training::SpecKind::Auto);
  CHECK(throws_invalid("last:0"));
  CHECK(throws_invalid("layers:1@2"));
  CHECK(throws_invalid("weights"));
}

TEST(training_step_of_a_dense_classifier) {
  graph::Graph g = dense_classifier();
  training::TrainingPlan plan = training::plan_training(g, training::parse_spec("last:1"));
  CHECK(allocation::validate(plan.problem, plan.solution).empty());
  CHECK_EQ(plan.training.updated_parameters, int64_t{4 * 8 + 4});
  // steps: FC, SOFTMAX, loss, grad weights + update per channel, grad bias, update
  CHECK_EQ(plan.steps.size(), size_t{6});
  CHECK_EQ(plan.trainable_bytes, int64_t{32 + 16});  // int8 weights, int32 biases; 16-byte aligned
  CHECK_EQ(plan.gradient_bytes, int64_t{16 + 16});   // the loss gradient and the int32 bias gradient
  CHECK_EQ(plan.training.channel_updates.size(), size_t{1});
  CHECK_EQ(plan.training.channel_updates[0].scratch_bytes, int64_t{8 * 4});  // one channel: C_in int32 values
  const auto named = [](const training::TrainingPlan& p, const std::string& name) {
    for (const auto& buffer : p.liveness.buffers)
      if (buffer.name == name) return true;
    return false;
  };
  CHECK(!named(plan, "grad weights op 0"));  // no whole weight gradient
  training::TrainingOptions at_end;
  at_end.reorder_updates = false;
  training::TrainingPlan whole = training::plan_training(g, training::parse_spec("last:1"), at_end);
  CHECK(allocation::validate(whole.problem, whole.solution).empty());
  // steps: FC, SOFTMAX, loss, grad weights, grad bias, update, update
  CHECK_EQ(whole.steps.size(), size_t{7});
  CHECK_EQ(whole.gradient_bytes, int64_t{128 + 16 + 16});  // the whole int32 weight gradient waits for its update
  CHECK(named(whole, "grad weights op 0"));
  CHECK(plan.peak_bytes <= whole.peak_bytes);
  g.ops[1].type = "LOGISTIC";  // the loss now reads the LOGISTIC's output: the gradient must pass it
  std::string message;
  try {
    training::plan_training(g, training::parse_spec("last:1"));
  } catch (const UnsupportedError& e) {
    message = e.what();
  }
  CHECK(message.find("op 1 (LOGISTIC) is on the backward path") != std::string::npos);
}

TEST(training_saves_a_fused_relu_output_as_a_bit_mask) {
  graph::Graph g = dense_classifier();
  g.ops[0].options.activation = graph::Activation::Relu;  // t3 = RELU(FC): read back only for the derivative
  training::TrainingPlan plan = training::plan_training(g, training::parse_spec("bias"));
  CHECK(allocation::validate(plan.problem, plan.solution).empty());
  const training::TrainingGraph& t = plan.training;
  CHECK_EQ(t.masks.size(), size_t{1});
  const training::TrainValue& mask = t.values[t.masks[0]];
  CHECK_EQ(mask.bytes, int64_t{1});  // ceil(4 / 8)
  CHECK_EQ(mask.tensor, int32_t{3});
  CHECK_EQ(mask.forward_op, int32_t{0});
  CHECK(std::find(t.saved.begin(), t.saved.end(), 3) == t.saved.end());  // the int8 t3 is not saved
  size_t b = 0;
  while (b < plan.liveness.buffers.size() && plan.liveness.buffers[b].name != "mask t3") ++b;
  CHECK(b < plan.liveness.buffers.size());
  if (b < plan.liveness.buffers.size()) {
    CHECK_EQ(plan.liveness.buffers[b].first, int32_t{0});  // written beside t3 by the FC
    CHECK_EQ(plan.steps[plan.liveness.buffers[b].last].what, std::string("FULLY_CONNECTED fused RELU grad"));
  }
  // last:1 reads t3's input as int8 for the weight gradient; the mask still replaces t3
  training::TrainingPlan weights = training::plan_training(g, training::parse_spec("last:1"));
  CHECK_EQ(weights.training.masks.size(), size_t{1});
  CHECK(std::find(weights.training.saved.begin(), weights.training.saved.end(), 0) != weights.training.saved.end());
}
