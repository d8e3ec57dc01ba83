#include "tinyarena/training/training_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "tinyarena/common/errors.h"
#include "tinyarena/graph/storage.h"

namespace tinyarena::training {

const char* value_class_name(ValueClass cls) {
  switch (cls) {
    case ValueClass::Activation: return "activation";
    case ValueClass::Scratch: return "scratch";
    case ValueClass::Trainable: return "trainable";
    case ValueClass::Gradient: return "gradient";
  }
  return "?";
}

const char* step_kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::Forward: return "forward";
    case StepKind::Loss: return "loss";
    case StepKind::Backward: return "backward";
    case StepKind::Update: return "update";
  }
  return "?";
}

const char* step_math_name(StepMath math) {
  switch (math) {
    case StepMath::Loss: return "loss";
    case StepMath::ActivationGrad: return "activation_grad";
    case StepMath::InputGrad: return "input_grad";
    case StepMath::WeightGrad: return "weight_grad";
    case StepMath::BiasGrad: return "bias_grad";
    case StepMath::GradSum: return "grad_sum";
    case StepMath::SgdUpdate: return "sgd_update";
    case StepMath::ChannelUpdate: return "channel_update";
  }
  return "?";
}

namespace {

using graph::Graph;
using graph::Op;
using graph::Tensor;

bool is_weight_type(const std::string& type) {
  return type == "CONV_2D" || type == "DEPTHWISE_CONV_2D" || type == "FULLY_CONNECTED";
}

std::string op_name(const Op& op) { return "op " + std::to_string(op.index) + " (" + op.type + ")"; }

[[noreturn]] void unsupported(const Op& op, const std::string& why) {
  throw UnsupportedError(op_name(op) + " is on the backward path of the update: " + why);
}

// The tensor the loss reads: the graph's one output, before a trailing DEQUANTIZE.
int32_t loss_tensor_of(const Graph& graph) {
  if (graph.outputs.size() != 1)
    throw UnsupportedError("training needs a graph with one output (class scores); this one has " +
                           std::to_string(graph.outputs.size()));
  int32_t tensor = graph.outputs[0];
  int32_t producer = graph.tensors[tensor].producer;
  if (producer >= 0 && graph.ops[producer].type == "DEQUANTIZE") tensor = graph.ops[producer].inputs[0];
  const Tensor& scores = graph.tensors[tensor];
  if (scores.dtype != graph::DType::Int8 || scores.producer < 0)
    throw UnsupportedError("training needs int8 class scores made by an op as the graph's output; tensor " +
                           std::to_string(tensor) + " (" + scores.name + ") is " + graph::dtype_name(scores.dtype));
  return tensor;
}

class Builder {
 public:
  Builder(const Graph& graph, TrainingGraph& out) : g_(graph), t_(out), contributions_(graph.tensors.size()) {}

  void build() {
    mark_gradients();
    for (const LayerUpdate& u : t_.updates) add_trainables(u);
    add_loss();
    for (auto op = g_.ops.rbegin(); op != g_.ops.rend(); ++op) {
      if (op->index == loss_softmax_ || op->outputs.empty() || !needs_[op->outputs[0]]) continue;
      differentiate(*op);
      t_.backward_ops.push_back(op->index);
    }
    resolve_derivative_reads();
  }

 private:
  const LayerUpdate* update_of(int32_t op) const {
    for (const LayerUpdate& u : t_.updates)
      if (u.op == op) return &u;
    return nullptr;
  }

  // A tensor needs a gradient when it depends on an updated parameter and the loss depends on it.
  void mark_gradients() {
    size_t n = g_.tensors.size();
    std::vector<bool> depends(n, false), reaches(n, false);
    for (const Op& op : g_.ops) {
      bool any = update_of(op.index) != nullptr;
      for (int32_t in : op.inputs) any = any || (in >= 0 && depends[in]);
      for (int32_t out : op.outputs) depends[out] = any;
    }
    t_.loss_tensor = loss_tensor_of(g_);
    reaches[t_.loss_tensor] = true;
    for (auto op = g_.ops.rbegin(); op != g_.ops.rend(); ++op) {
      bool any = false;
      for (int32_t out : op->outputs) any = any || reaches[out];
      for (int32_t in : op->inputs)
        if (any && in >= 0 && !g_.tensors[in].is_constant()) reaches[in] = true;
    }
    needs_.resize(n);
    for (size_t i = 0; i < n; ++i) needs_[i] = depends[i] && reaches[i];
  }

  int32_t add_value(std::string name, ValueClass cls, int64_t bytes, int32_t tensor, bool parameter = false) {
    t_.values.push_back(TrainValue{std::move(name), cls, bytes, tensor, parameter});
    return static_cast<int32_t>(t_.values.size()) - 1;
  }

  // Saved activations: what the steps read as int8; then each activation derivative
  // reads its tensor's int8 when that is saved anyway, else the tensor's 1-bit mask.
  void resolve_derivative_reads() {
    std::set<int32_t> saved;
    for (const TrainStep& step : t_.backward) saved.insert(step.saved.begin(), step.saved.end());
    t_.saved.assign(saved.begin(), saved.end());
    std::map<int32_t, int32_t> mask_of;
    for (const auto& [step, tensor] : derivative_reads_) {
      TrainStep& reader = t_.backward[step];
      if (saved.count(tensor)) {
        reader.saved.push_back(tensor);
        continue;
      }
      auto [it, fresh] = mask_of.try_emplace(tensor, -1);
      if (fresh) {
        const Tensor& y = g_.tensors[tensor];
        it->second = add_value("mask " + y.name, ValueClass::Activation, (y.element_count + 7) / 8, tensor);
        t_.values[it->second].forward_op = y.producer;
        t_.masks.push_back(it->second);
      }
      reader.reads.push_back(it->second);
    }
  }

  // A new int8 gradient of `tensor`; `stage` tells apart several of one tensor (" masked", " sum").
  int32_t activation_gradient(int32_t tensor, const std::string& stage = "") {
    const Tensor& x = g_.tensors[tensor];
    return add_value("grad " + x.name + stage, ValueClass::Gradient, x.element_count, tensor);
  }

  void add_trainables(const LayerUpdate& u) {
    const Op& op = g_.ops[u.op];
    if (u.weight_channels > 0)
      trainable_weights_[u.op] = add_value("trainable weights op " + std::to_string(u.op), ValueClass::Trainable,
                                           u.weight_channels * u.channel_weights, op.inputs[1]);
    if (u.bias)
      trainable_bias_[u.op] = add_value("trainable bias op " + std::to_string(u.op), ValueClass::Trainable,
                                        int64_t{4} * u.out_channels, op.inputs[2]);
  }

  int32_t add_step(TrainStep step) {
    t_.backward.push_back(std::move(step));
    return static_cast<int32_t>(t_.backward.size()) - 1;
  }

  void add_loss() {
    int32_t scores = t_.loss_tensor;
    const Op& producer = g_.ops[g_.tensors[scores].producer];
    int32_t logits = scores;
    std::string what = "cross-entropy grad (softmax inside)";
    if (producer.type == "SOFTMAX") {
      loss_softmax_ = producer.index;
      logits = producer.inputs[0];
      what = "SOFTMAX + cross-entropy grad";
    }
    if (!needs_[logits]) throw std::invalid_argument("no updated parameter reaches the loss");
    int32_t gradient = activation_gradient(logits);
    add_step(TrainStep{StepKind::Loss, StepMath::Loss, producer.index, what, {}, {scores}, {gradient}});
    contributions_[logits].push_back(gradient);
  }

  // The gradient of `tensor`: its one contribution, or the sum of them (GRAD_SUM).
  int32_t gradient_of(const Op& op, int32_t tensor) {
    std::vector<int32_t>& parts = contributions_[tensor];
    if (parts.empty()) unsupported(op, "no gradient reaches its output (internal)");
    if (parts.size() == 1) return parts[0];
    int32_t sum = activation_gradient(tensor, " sum");
    TrainStep step{StepKind::Backward, StepMath::GradSum, op.index, "GRAD_SUM", parts, {}, {sum}};
    step.in_place_candidate = true;
    add_step(step);
    parts = {sum};
    return sum;
  }

  // The gradient through a fused RELU/RELU6 (masked by the saved output).
  int32_t through_activation(const Op& op, int32_t gy) {
    graph::Activation act = op.options.activation;
    if (act == graph::Activation::None) return gy;
    if (act != graph::Activation::Relu && act != graph::Activation::Relu6)
      unsupported(op, std::string("no gradient for its fused activation ") + graph::activation_name(act));
    int32_t y = op.outputs[0];
    int32_t masked = activation_gradient(y, " masked");
    TrainStep step{StepKind::Backward, StepMath::ActivationGrad, op.index,
                   op.type + " fused " + graph::activation_name(act) + " grad", {gy}, {}, {masked}};
    step.in_place_candidate = true;
    derivative_reads_.emplace_back(add_step(step), y);
    return masked;
  }

  // One row of `tensor` in int32 (NHWC: W * C; otherwise the whole tensor).
  int64_t int32_row_bytes(int32_t tensor) const {
    const Tensor& x = g_.tensors[tensor];
    int64_t rows = x.shape.size() == 4 ? int64_t{x.shape[0]} * x.shape[1] : 1;
    return 4 * (x.element_count / std::max<int64_t>(rows, 1));
  }

  // A new gradient of `input`; `requantized`: accumulated in int32 and requantized (backward scratch).
  // Returns the step's index.
  int32_t contribute_new(const Op& op, int32_t input, const std::string& what, std::vector<int32_t> reads,
                         std::vector<int32_t> saved, bool requantized, bool in_place,
                         StepMath math = StepMath::InputGrad) {
    int32_t gx = activation_gradient(input);
    TrainStep step{StepKind::Backward, math, op.index, op.type + " " + what, std::move(reads), std::move(saved), {gx}};
    if (requantized) {
      step.scratch_bytes = int32_row_bytes(input);
      step.single_pass_scratch_bytes = 4 * g_.tensors[input].element_count;
    }
    step.in_place_candidate = in_place;
    contributions_[input].push_back(gx);
    return add_step(step);
  }

  void parameter_gradient(const Op& op, const std::string& what, int32_t gy, std::vector<int32_t> saved,
                          int32_t trainable, int64_t elements) {
    const TrainValue& param = t_.values[trainable];
    int32_t gradient = add_value("grad " + what + " op " + std::to_string(op.index), ValueClass::Gradient,
                                 4 * elements, param.tensor, true);
    StepMath math = what == "weights" ? StepMath::WeightGrad : StepMath::BiasGrad;
    int32_t step = add_step(TrainStep{StepKind::Backward, math, op.index, op.type + " grad " + what, {gy},
                                      std::move(saved), {gradient}});
    t_.sgd_updates.push_back(TrainStep{StepKind::Update, StepMath::SgdUpdate, op.index, "SGD update " + what,
                                       {gradient, trainable}, {}, {trainable}});
    t_.update_after.push_back(step);
  }

  // The weight gradient computed and applied one output channel at a time: one channel's
  // int32 gradient (channel_weights values) is the kernel scratch.
  void channel_update(const Op& op, int32_t gy, int32_t x, int32_t trainable, int32_t replaces) {
    TrainStep fused{StepKind::Update, StepMath::ChannelUpdate, op.index,
                    op.type + " grad weights + SGD update per channel", {gy, trainable}, {x}, {trainable}};
    fused.scratch_bytes = fused.single_pass_scratch_bytes = 4 * update_of(op.index)->channel_weights;
    t_.channel_updates.push_back(std::move(fused));
    t_.channel_update_replaces.push_back(replaces);
  }

  void weight_layer(const Op& op, int32_t gy) {
    int32_t x = op.inputs[0];
    if (needs_[x]) {
      std::vector<int32_t> reads{gy};
      if (trainable_weights_.count(op.index)) reads.push_back(trainable_weights_[op.index]);
      contribute_new(op, x, "grad input", reads, {}, true, false);
    }
    if (trainable_weights_.count(op.index)) {
      int32_t weights = trainable_weights_[op.index];
      parameter_gradient(op, "weights", gy, {x}, weights, t_.values[weights].bytes);  // int8: one byte each
      channel_update(op, gy, x, weights, static_cast<int32_t>(t_.backward.size()) - 1);
    }
    if (trainable_bias_.count(op.index)) {
      int32_t bias = trainable_bias_[op.index];
      parameter_gradient(op, "bias", gy, {}, bias, t_.values[bias].bytes / 4);  // int32
    }
  }

  void pool(const Op& op, int32_t gy) {
    bool overlapping = op.type == "AVERAGE_POOL_2D" &&
                       (op.options.filter_h > op.options.stride_h || op.options.filter_w > op.options.stride_w);
    int32_t x = op.inputs[0];
    contribute_new(op, x, "grad input", {gy}, {}, overlapping, false);
  }

  void differentiate(const Op& op) {
    if (op.outputs.size() != 1) unsupported(op, "an op with several outputs has no gradient here");
    int32_t y = op.outputs[0];
    if (g_.tensors[y].dtype != graph::DType::Int8)
      unsupported(op, std::string("its output is ") + graph::dtype_name(g_.tensors[y].dtype) + ", not int8");
    int32_t gy = gradient_of(op, y);
    if (is_weight_type(op.type)) {
      const Tensor* weights = g_.input(op, 1);
      if (!weights || !weights->is_constant() || weights->dtype != graph::DType::Int8)
        unsupported(op, "its weights are not constant int8");
      weight_layer(op, through_activation(op, gy));
    } else if (op.type == "ADD") {
      int32_t g = through_activation(op, gy);
      for (int32_t in : op.inputs)
        if (in >= 0 && needs_[in]) contributions_[in].push_back(g);  // passed on unchanged
    } else if (op.type == "RELU" || op.type == "RELU6") {
      derivative_reads_.emplace_back(
          contribute_new(op, op.inputs[0], "grad", {gy}, {}, false, true, StepMath::ActivationGrad), y);
    } else if (op.type == "AVERAGE_POOL_2D" || op.type == "MEAN") {
      pool(op, through_activation(op, gy));
    } else if (op.type == "PAD" || op.type == "PADV2") {
      contribute_new(op, op.inputs[0], "grad input", {gy}, {}, false, false);  // the padded gradient, cropped
    } else if (graph::is_view_op(op.opcode)) {
      contributions_[op.inputs[0]].push_back(gy);  // a view: same bytes, same gradient
    } else {
      unsupported(op, "tinyarena has no gradient for " + op.type +
                          " (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, RELU, RELU6, AVERAGE_POOL_2D, MEAN, "
                          "PAD, RESHAPE, SQUEEZE, EXPAND_DIMS, SOFTMAX as the last op)");
    }
  }

  const Graph& g_;
  TrainingGraph& t_;
  std::vector<std::vector<int32_t>> contributions_;
  std::vector<bool> needs_;
  std::map<int32_t, int32_t> trainable_weights_, trainable_bias_;
  std::vector<std::pair<int32_t, int32_t>> derivative_reads_;  // (backward step, tensor): an activation derivative at it
  int32_t loss_softmax_ = -1;
};

}  // namespace

TrainingGraph derive_training_graph(const graph::Graph& graph, std::vector<LayerUpdate> updates) {
  if (updates.empty()) throw std::invalid_argument("the update spec updates nothing in this model");
  TrainingGraph training;
  training.forward = graph;
  training.updates = std::move(updates);
  for (const LayerUpdate& u : training.updates) training.updated_parameters += u.parameters();
  Builder(training.forward, training).build();
  return training;
}

}  // namespace tinyarena::training
