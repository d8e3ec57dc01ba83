#include "tinyarena/codegen/training_lowering.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "tinyarena/codegen/lowering.h"
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/common/errors.h"
#include "tinyarena/op_params/kernel_params.h"
#include "training_harness.h"

namespace tinyarena::codegen {
namespace {

using training::StepMath;
using training::TrainStep;
using training::TrainValue;

std::string op_label(const graph::Op& op) { return "op " + std::to_string(op.index) + " (" + op.type + ")"; }

[[noreturn]] void unsupported(const graph::Op& op, const std::string& why) {
  throw UnsupportedError(op_label(op) + ": training code generation " + why);
}

// The plan as inference lowering sees it: the forward ops' buffers and scratch at their
// offsets. Backward scratch buffers are marked as activations there, so each forward op
// finds its own scratch.
plan::Plan forward_view(const training::TrainingPlan& plan) {
  plan::Plan view;
  view.liveness = plan.liveness;
  for (size_t b = 0; b < view.liveness.buffers.size(); ++b)
    if (view.liveness.buffers[b].first >= plan.forward_steps)
      view.liveness.buffers[b].kind = liveness::BufferKind::Activation;
  view.problem = plan.problem;
  view.solution = plan.solution;
  view.peak_bytes = plan.peak_bytes;
  return view;
}

// Fixed-point per-channel factors of a weight layer's input gradient (tinyarena_training.h).
struct ChannelScales {
  std::vector<float> weight_scale;  // per output channel
  float max_scale = 0.0f;
  std::vector<int32_t> mult;        // empty: one per-tensor scale
  int32_t bits = 0;                 // R: mult = round(scale / max_scale * 2^R)
};

// `terms`: the most products one int32 input-gradient element sums.
ChannelScales channel_scales(const graph::Op& op, const graph::Tensor& weights, int32_t out_c, int64_t terms) {
  ChannelScales s;
  const std::vector<float>& q = weights.quantization.scale;
  if (q.empty()) unsupported(op, "needs quantized weights");
  for (int32_t c = 0; c < out_c; ++c) s.weight_scale.push_back(q.size() == 1 ? q[0] : q.at(c));
  s.max_scale = *std::max_element(s.weight_scale.begin(), s.weight_scale.end());
  const int64_t headroom = INT32_MAX / (std::max<int64_t>(terms, 1) * 127 * 127);
  if (headroom < 1) unsupported(op, "cannot sum its input gradient in int32 (" + std::to_string(terms) + " terms)");
  const bool per_tensor = std::all_of(s.weight_scale.begin(), s.weight_scale.end(),
                                      [&](float v) { return v == s.max_scale; });
  if (per_tensor) return s;
  s.bits = std::min<int32_t>(14, static_cast<int32_t>(std::floor(std::log2(static_cast<double>(headroom)))));
  if (s.bits < 6)
    unsupported(op, "cannot scale its per-channel input gradient in int32 with 6 bits (" + std::to_string(terms) +
                        " terms)");
  for (float v : s.weight_scale)
    s.mult.push_back(static_cast<int32_t>(std::lround(static_cast<double>(v) / s.max_scale * (1 << s.bits))));
  return s;
}

std::string float_list(const std::vector<float>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + float_literal(values[i]);
  return text;
}

std::string int_list(const std::vector<int32_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text;
}

int32_t ceil_div(int32_t a, int32_t b) { return (a + b - 1) / b; }

class TrainingLowering {
 public:
  TrainingLowering(const training::TrainingPlan& plan, const plan::Plan& view, const std::string& name)
      : plan_(plan), t_(plan.training), g_(plan.training.forward), ctx_(g_, view), name_(name) {}

  Program lower() {
    check_plan();
    Program program = lower_program(g_, ctx_.plan(), name_);
    if (program.inputs.size() != 1 || program.inputs[0].dtype != "int8")
      throw UnsupportedError("training code generation needs one int8 model input");
    for (KernelCall& call : program.calls) redirect_trainables(call);
    std::ostringstream step;
    emit_forward(program, step);
    auto timeline = training::backward_timeline(t_, plan_.options.reorder_updates);
    for (size_t s = 0; s < timeline.size(); ++s) emit_step(*timeline[s], static_cast<int32_t>(s), step);
    step << "#ifdef TINYARENA_TRACE\n";
    for (const auto& [op, value] : trainables_)
      step << "  TA_TRAIN_TRACE(3, " << value << ", -1, " << value_address(value, "void") << ", "
           << t_.values[value].bytes << ", 0.0f);\n";
    step << "#endif\n  return loss;\n";
    program.training = training_code(program, step.str());
    return program;
  }

 private:
  void check_plan() {
    if (!plan_.options.scratch) throw UnsupportedError("training code generation needs a plan with kernel scratch");
    for (const training::LayerUpdate& u : t_.updates) {
      const graph::Op& op = g_.ops[u.op];
      if (partial(u) && op.type == "DEPTHWISE_CONV_2D")
        unsupported(op, "updates a DEPTHWISE_CONV_2D's weights whole only (no @FRACTION: its channels are "
                        "not contiguous)");
      if (u.weight_channels) trainables_.emplace_back(u.op, find_trainable(op.inputs[1]));
      if (u.bias) trainables_.emplace_back(u.op, find_trainable(op.inputs[2]));
    }
  }

  // Only the first weight_channels output channels' weights are trainable (layers:I@FRACTION).
  static bool partial(const training::LayerUpdate& u) {
    return u.weight_channels != 0 && u.weight_channels != u.out_channels;
  }
  const training::LayerUpdate* partial_update(int32_t op) const {
    for (const training::LayerUpdate& u : t_.updates)
      if (u.op == op && partial(u)) return &u;
    return nullptr;
  }

  int32_t find_trainable(int32_t tensor) const {
    for (size_t v = 0; v < t_.values.size(); ++v)
      if (t_.values[v].cls == training::ValueClass::Trainable && t_.values[v].tensor == tensor)
        return static_cast<int32_t>(v);
    throw std::logic_error("training lowering: no trainable value of tensor " + std::to_string(tensor));
  }

  int32_t trainable_of(int32_t tensor) const {
    for (const auto& [op, value] : trainables_)
      if (t_.values[value].tensor == tensor) return value;
    return -1;
  }

  std::string at(int32_t buffer, const std::string& c_type) const {
    return "(" + c_type + " *)(" + std::string(kSingleArena) + " + " + std::to_string(plan_.solution.offsets.at(buffer)) +
           ")";
  }
  std::string value_address(int32_t value, const std::string& c_type) const {
    const int32_t buffer = plan_.value_buffer.at(value);
    if (buffer < 0) throw std::logic_error("training lowering: value without a buffer: " + t_.values[value].name);
    return at(buffer, c_type);
  }
  std::string scale(int32_t value) const { return "gs[" + std::to_string(value) + "]"; }

  // The forward call of an updated layer reads the trainable SRAM copies. A partial update's
  // call runs twice over output-channel ranges (tinyarena_training.h's _split kernels): the
  // trainable channels from SRAM, the others from flash.
  void redirect_trainables(KernelCall& call) {
    const graph::Op& op = g_.ops[call.op_index];
    const training::LayerUpdate* part = partial_update(op.index);
    if (part) split_forward(op, *part, call);
    for (Field& field : call.params) {
      int32_t trainable = -1;
      if (field.name == "weights" && !part) trainable = trainable_of(op.inputs[1]);
      if (field.name == "bias" && op.inputs.size() > 2) trainable = trainable_of(op.inputs[2]);
      if (trainable >= 0) field.value = value_address(trainable, field.name == "weights" ? "int8_t" : "int32_t");
    }
  }

  void split_forward(const graph::Op& op, const training::LayerUpdate& u, KernelCall& call) const {
    const std::string kernel = op.type == "CONV_2D" ? call.window_kernel : "ta_fully_connected_s8";
    const std::string head = kernel + "(" + params_ref(op) + ", ";
    const size_t at = call.call.find(head);
    if (kernel != "ta_conv_s8" && kernel != "ta_fully_connected_s8")
      unsupported(op, "updates part of a layer (@FRACTION) only with the plain int8 weight layout, not " + kernel);
    if (at == std::string::npos || call.call.find(head, at + 1) != std::string::npos)
      throw std::logic_error("training lowering: unexpected forward call of " + op_label(op) + ": " + call.call);
    call.call.replace(at, head.size(), kernel + "_split(" + params_ref(op) + ", " +
                                           value_address(trainable_of(op.inputs[1]), "const int8_t") + ", " +
                                           std::to_string(u.weight_channels) + ", ");
  }

  // RELU/RELU6's active range (lo, hi) of int8 output `y` of `op` (tinyarena_training.h).
  std::pair<int32_t, int32_t> relu_range(const graph::Op& op, int32_t y) const {
    const graph::Tensor& out = g_.tensors[y];
    const int32_t zero = static_cast<int32_t>(out.quantization.zero_point.at(0));
    const bool relu6 = op.type == "RELU6" || op.options.activation == graph::Activation::Relu6;
    if (!relu6) return {zero, 128};
    const int64_t six = zero + std::lround(6.0 / out.quantization.scale.at(0));
    return {zero, static_cast<int32_t>(std::min<int64_t>(128, six))};
  }

  void emit_forward(const Program& program, std::ostringstream& out) {
    out << "  memcpy(" << ctx_.address(g_.inputs[0]) << ", input, " << program.inputs[0].tensor.bytes << ");\n";
    std::map<int32_t, std::vector<int32_t>> masks_after;  // forward op -> mask values
    for (int32_t m : t_.masks) masks_after[t_.values[m].forward_op].push_back(m);
    for (int32_t op_index : ctx_.plan().liveness.order) {
      for (const KernelCall& call : program.calls)
        if (call.op_index == op_index) {
          out << "  /* op " << op_index << ": " << call.op_type << " */\n";
          std::istringstream lines(call.call);
          for (std::string line; std::getline(lines, line);) out << "  " << line << "\n";
        }
      for (int32_t m : masks_after[op_index]) {
        const int32_t y = t_.values[m].tensor;
        const auto [lo, hi] = relu_range(g_.ops[op_index], y);
        out << "  ta_relu_mask_write(" << ctx_.address(y) << ", " << g_.tensors[y].element_count << ", " << lo << ", "
            << hi << ", " << value_address(m, "uint8_t") << ");\n";
      }
    }
  }

  void trace_gradient(std::ostringstream& out, int32_t value) {
    out << "  TA_TRAIN_TRACE(0, " << value << ", -1, " << value_address(value, "void") << ", " << t_.values[value].bytes
        << ", " << scale(value) << ");\n";
  }

  void emit_step(const TrainStep& step, int32_t index, std::ostringstream& out) {
    const graph::Op& op = g_.ops[step.op];
    out << "  /* " << step.what << " (op " << step.op << ") */\n";
    switch (step.math) {
      case StepMath::Loss: return emit_loss(step, out);
      case StepMath::ActivationGrad: return emit_activation(step, out);
      case StepMath::InputGrad: return emit_input_grad(op, step, index, out);
      case StepMath::BiasGrad: return emit_bias_grad(step, out);
      case StepMath::SgdUpdate:
        return t_.values[step.reads.at(1)].tensor == op.inputs[1] ? emit_weight_update(op, step, out)
                                                                  : emit_bias_update(op, step, out);
      case StepMath::ChannelUpdate: return emit_channel_update(op, step, index, out);
      case StepMath::WeightGrad: return emit_weight_grad(op, step, out);
      case StepMath::GradSum: return emit_grad_sum(step, out);
    }
  }

  void emit_loss(const TrainStep& step, std::ostringstream& out) {
    const int32_t scores = step.saved.at(0), grad = step.writes.at(0);
    const graph::Tensor& s = g_.tensors[scores];
    if (s.element_count != s.shape.back()) unsupported(g_.ops[step.op], "needs one row of class scores (batch 1)");
    const bool probabilities = g_.ops[s.producer].type == "SOFTMAX";
    out << "  loss = ta_softmax_xent_grad_s8(" << ctx_.address(scores) << ", " << s.element_count << ", "
        << float_literal(s.quantization.scale.at(0)) << ", " << s.quantization.zero_point.at(0) << ", "
        << (probabilities ? 1 : 0) << ", label, " << value_address(grad, "int8_t") << ", &" << scale(grad) << ");\n";
    trace_gradient(out, grad);
  }

  void emit_activation(const TrainStep& step, std::ostringstream& out) {
    const int32_t gy = step.reads.at(0), gx = step.writes.at(0);
    const int64_t n = t_.values[gx].bytes;
    const std::string to = value_address(gx, "int8_t");
    if (plan_.value_buffer[gy] != plan_.value_buffer[gx])
      out << "  memcpy(" << to << ", " << value_address(gy, "int8_t") << ", " << n << ");\n";
    if (step.reads.size() > 1) {
      out << "  ta_relu_mask_apply(" << to << ", " << n << ", " << value_address(step.reads[1], "uint8_t") << ");\n";
    } else {
      const int32_t y = step.saved.at(0);
      const auto [lo, hi] = relu_range(g_.ops[step.op], y);
      out << "  ta_relu_output_apply(" << to << ", " << n << ", " << ctx_.address(y) << ", " << lo << ", " << hi
          << ");\n";
    }
    out << "  " << scale(gx) << " = " << scale(gy) << ";\n";
    trace_gradient(out, gx);
  }

  void emit_grad_sum(const TrainStep& step, std::ostringstream& out) {
    const int32_t sum = step.writes.at(0);
    std::string parts, scales;
    for (size_t k = 0; k < step.reads.size(); ++k) {
      parts += (k ? ", " : "") + value_address(step.reads[k], "const int8_t");
      scales += (k ? ", " : "") + scale(step.reads[k]);
    }
    out << "  {\n    const int8_t *const parts[] = {" << parts << "};\n    const float scales[] = {" << scales
        << "};\n    ta_grad_sum_s8(parts, scales, " << step.reads.size() << ", " << t_.values[sum].bytes << ", "
        << value_address(sum, "int8_t") << ", &" << scale(sum) << ");\n  }\n";
    trace_gradient(out, sum);
  }

  std::string step_scratch(const graph::Op& op, int32_t index, const char* c_type) const {
    const int32_t buffer = plan_.step_scratch.at(index);
    if (buffer < 0) unsupported(op, "needs the backward scratch the plan did not reserve");
    return at(buffer, c_type);
  }

  // The weight scales of a weight layer (emitted once: op<i>_weight_scale) and the factors of its
  // input gradient.
  const ChannelScales& weight_scales(const graph::Op& op) {
    auto known = layers_.find(op.index);
    if (known != layers_.end()) return known->second;
    const GradParams p = grad_params_of(op);
    ChannelScales s = channel_scales(op, *g_.input(op, 1), p.out_c, p.terms);
    const std::string prefix = "op" + std::to_string(op.index);
    defs_ << "\n/* op " << op.index << ": " << op.type << " backward */\nstatic const float " << prefix
          << "_weight_scale[" << p.out_c << "] = {" << float_list(s.weight_scale) << "};\n";
    return layers_.emplace(op.index, std::move(s)).first->second;
  }

  // The grad params struct of a weight layer, op<i>_grad (emitted once), and its factors' array.
  void grad_params(const graph::Op& op) {
    if (!grad_params_emitted_.insert(op.index).second) return;
    const ChannelScales& s = weight_scales(op);
    const GradParams p = grad_params_of(op);
    const std::string prefix = "op" + std::to_string(op.index);
    const int32_t trainable = trainable_of(op.inputs[1]);
    const std::string weights = trainable >= 0 ? value_address(trainable, "int8_t") : "(int8_t *)" + prefix + "_weights";
    if (!s.mult.empty())
      defs_ << "static const int32_t " << prefix << "_grad_mult[" << p.out_c << "] = {" << int_list(s.mult) << "};\n";
    defs_ << "static const " << p.type << " " << prefix << "_grad = {" << p.in_h << ", " << p.in_w << ", " << p.in_c
          << ", " << p.out_h << ", " << p.out_w << ", " << (p.type == "ta_conv_grad_params" ? p.out_c : p.multiplier)
          << ", " << p.kh << ", " << p.kw << ", " << p.sh << ", " << p.sw << ", " << p.pt << ", " << p.pl << ", "
          << p.zp << ", " << weights << ", NULL, " << (s.mult.empty() ? "NULL" : prefix + "_grad_mult");
    if (const training::LayerUpdate* part = partial_update(op.index))  // the frozen channels stay in flash
      defs_ << ", " << prefix << "_weights, " << part->weight_channels;
    defs_ << "};\n";
  }

  // The fields of a weight layer's ta_conv_grad_params / ta_dwconv_grad_params.
  struct GradParams {
    std::string type = "ta_conv_grad_params";
    int32_t in_h = 1, in_w = 1, in_c = 1, out_h = 1, out_w = 1, out_c = 1, kh = 1, kw = 1, sh = 1, sw = 1, pt = 0,
            pl = 0, zp = 0, multiplier = 1;
    int64_t terms = 1;  // the most products one input-gradient element sums
  };

  GradParams grad_params_of(const graph::Op& op) const {
    GradParams g;
    if (op.type == "FULLY_CONNECTED") {
      const ta_fc_params p = op_params::fully_connected_kernel(g_, op).params;
      g.in_h = g.out_h = p.batches, g.in_c = p.in_depth, g.out_c = p.out_depth, g.zp = -p.input_offset;
      g.terms = g.out_c;
      return g;
    }
    if (op.type == "CONV_2D") {
      const op_params::ConvKernel k = op_params::conv_kernel(g_, op);
      window_fields(op, k.images, k.params, g);
      g.out_c = k.params.out_c;
      g.terms = int64_t{ceil_div(g.kh, g.sh)} * ceil_div(g.kw, g.sw) * g.out_c;
      return g;
    }
    const op_params::DepthwiseKernel k = op_params::depthwise_kernel(g_, op);
    window_fields(op, k.images, k.params, g);
    g.type = "ta_dwconv_grad_params";
    g.multiplier = k.params.depth_multiplier;
    g.out_c = g.in_c * g.multiplier;
    g.terms = int64_t{ceil_div(g.kh, g.sh)} * ceil_div(g.kw, g.sw) * g.multiplier;
    return g;
  }

  template <typename Params>
  static void window_fields(const graph::Op& op, int32_t images, const Params& p, GradParams& g) {
    if (images != 1 || p.dilation_h != 1 || p.dilation_w != 1) unsupported(op, "needs one image and dilation 1");
    g.in_h = p.in_h, g.in_w = p.in_w, g.in_c = p.in_c, g.out_h = p.out_h, g.out_w = p.out_w;
    g.kh = p.kernel_h, g.kw = p.kernel_w, g.sh = p.stride_h, g.sw = p.stride_w, g.pt = p.pad_top, g.pl = p.pad_left;
    g.zp = -p.input_offset;
  }

  static bool is_weight_layer(const graph::Op& op) {
    return op.type == "CONV_2D" || op.type == "DEPTHWISE_CONV_2D" || op.type == "FULLY_CONNECTED";
  }

  void emit_input_grad(const graph::Op& op, const TrainStep& step, int32_t index, std::ostringstream& out) {
    const int32_t gy = step.reads.at(0), gx = step.writes.at(0);
    const std::string to = value_address(gx, "int8_t"), from = value_address(gy, "int8_t");
    if (is_weight_layer(op)) {
      const ChannelScales& s = weight_scales(op);
      grad_params(op);
      const char* kernel = op.type == "DEPTHWISE_CONV_2D" ? "ta_dwconv_grad_input_s8" : "ta_conv_grad_input_s8";
      out << "  shift = " << kernel << "(&op" << op.index << "_grad, " << from << ", " << to << ", "
          << step_scratch(op, index, "int32_t") << ");\n"
          << "  " << scale(gx) << " = ldexpf(" << scale(gy) << " * " << float_literal(s.max_scale) << ", shift - "
          << s.bits << ");\n";
    } else if (op.type == "AVERAGE_POOL_2D" || op.type == "MEAN") {
      emit_pool_grad(op, from, to, gx, gy, out);
    } else if (op.type == "PAD" || op.type == "PADV2") {  // the forward op's params: its padding
      out << "  ta_pad_grad_input_s8(&op" << op.index << "_params, " << from << ", " << to << ");\n"
          << "  " << scale(gx) << " = " << scale(gy) << ";\n";
    } else {
      unsupported(op, "has no input gradient kernel for " + op.type);
    }
    trace_gradient(out, gx);
  }

  void emit_pool_grad(const graph::Op& op, const std::string& from, const std::string& to, int32_t gx, int32_t gy,
                      std::ostringstream& out) {
    const graph::Tensor& x = g_.tensors[op.inputs[0]];
    const graph::Tensor& y = g_.tensors[op.outputs[0]];
    if (x.shape.size() != 4 || x.shape[0] != 1) unsupported(op, "needs a 4-D input of one image");
    const int32_t h = x.shape[1], w = x.shape[2], c = x.shape[3];
    int32_t oh = 1, ow = 1, fh = h, fw = w, sh = h, sw = w;
    if (op.type == "AVERAGE_POOL_2D") {
      oh = y.shape[1], ow = y.shape[2], fh = op.options.filter_h, fw = op.options.filter_w;
      sh = op.options.stride_h, sw = op.options.stride_w;
      if (fh > sh || fw > sw || (oh - 1) * sh + fh > h || (ow - 1) * sw + fw > w)
        unsupported(op, "needs pooling windows that neither overlap nor leave the input");
    } else if (y.element_count != c) {
      unsupported(op, "handles MEAN over height and width only");
    }
    out << "  ta_avgpool_grad_input_s8(" << from << ", " << h << ", " << w << ", " << c << ", " << oh << ", " << ow
        << ", " << fh << ", " << fw << ", " << sh << ", " << sw << ", " << to << ");\n"
        << "  " << scale(gx) << " = " << scale(gy) << " / " << fh * fw << ".0f;\n";
  }

  float input_scale(const graph::Op& op) const { return g_.tensors[op.inputs[0]].quantization.scale.at(0); }

  void emit_bias_grad(const TrainStep& step, std::ostringstream& out) {
    const int32_t gy = step.reads.at(0), grad = step.writes.at(0);
    const int64_t channels = t_.values[grad].bytes / 4;
    out << "  ta_grad_bias_s32(" << value_address(gy, "int8_t") << ", " << t_.values[gy].bytes / channels << ", "
        << channels << ", " << value_address(grad, "int32_t") << ");\n"
        << "  TA_TRAIN_TRACE(2, " << grad << ", -1, " << value_address(grad, "void") << ", " << t_.values[grad].bytes
        << ", " << scale(gy) << ");\n";
    grad_scale_of_[grad] = gy;
  }

  void emit_bias_update(const graph::Op& op, const TrainStep& step, std::ostringstream& out) {
    const int32_t grad = step.reads.at(0), bias = step.reads.at(1);
    weight_scales(op);
    out << "  ta_sgd_update_bias_s32(" << value_address(bias, "int32_t") << ", " << value_address(grad, "int32_t")
        << ", " << t_.values[bias].bytes / 4 << ", learning_rate, " << scale(grad_scale_of_.at(grad)) << ", "
        << float_literal(input_scale(op)) << ", op" << op.index << "_weight_scale);\n";
  }

  // The updated output channels of a weight layer and the weights of one (tinyarena_training.h).
  int32_t updated_channels(const graph::Op& op) const {
    const training::LayerUpdate* part = partial_update(op.index);
    return part ? part->weight_channels : g_.tensors[op.outputs[0]].shape.back();
  }
  int64_t channel_weights(const graph::Op& op) const {
    return t_.values[trainable_of(op.inputs[1])].bytes / updated_channels(op);
  }

  // Updates at the end: the whole int32 weight gradient, one output channel at a time.
  void emit_weight_grad(const graph::Op& op, const TrainStep& step, std::ostringstream& out) {
    const int32_t gy = step.reads.at(0), grad = step.writes.at(0), trainable = trainable_of(op.inputs[1]);
    grad_params(op);
    const int64_t cw = channel_weights(op);
    const std::string channel = "(" + value_address(grad, "int32_t") + " + co * " + std::to_string(cw) + ")";
    out << "  for (int32_t co = 0; co < " << updated_channels(op) << "; ++co) {\n    "
        << (op.type == "DEPTHWISE_CONV_2D" ? "ta_dwconv" : "ta_conv") << "_grad_weight_channel_s32(&op" << op.index
        << "_grad, " << value_address(gy, "int8_t") << ", " << ctx_.address(step.saved.at(0)) << ", co, " << channel
        << ");\n    TA_TRAIN_TRACE(1, " << trainable << ", co, " << channel << ", " << cw * 4 << ", " << scale(gy)
        << " * " << float_literal(input_scale(op)) << ");\n  }\n";
    grad_scale_of_[grad] = gy;
  }

  void emit_weight_update(const graph::Op& op, const TrainStep& step, std::ostringstream& out) {
    const int32_t grad = step.reads.at(0), weights = step.reads.at(1);
    weight_scales(op);
    const int64_t cw = channel_weights(op);
    const bool depthwise = op.type == "DEPTHWISE_CONV_2D";
    out << "  ta_sgd_update_weights_s8(" << value_address(weights, "int8_t") << ", " << (depthwise ? 1 : cw) << ", "
        << (depthwise ? g_.tensors[op.outputs[0]].shape.back() : 1) << ", " << value_address(grad, "int32_t") << ", "
        << updated_channels(op) << ", " << cw << ", learning_rate, " << scale(grad_scale_of_.at(grad)) << ", "
        << float_literal(input_scale(op)) << ", op" << op.index << "_weight_scale);\n";
  }

  void emit_channel_update(const graph::Op& op, const TrainStep& step, int32_t index, std::ostringstream& out) {
    const int32_t gy = step.reads.at(0), weights = step.reads.at(1), x = step.saved.at(0);
    grad_params(op);
    const bool depthwise = op.type == "DEPTHWISE_CONV_2D";
    const std::string p = "&op" + std::to_string(op.index) + "_grad", scratch = step_scratch(op, index, "int32_t");
    const std::string g = value_address(gy, "int8_t"), in = ctx_.address(x);
    const int32_t out_c = updated_channels(op);
    const int64_t channel_bytes = channel_weights(op) * 4;
    out << "#ifdef TINYARENA_TRACE\n  for (int32_t co = 0; co < " << out_c << "; ++co) {\n    "
        << (depthwise ? "ta_dwconv_grad_weight_channel_s32(" : "ta_conv_grad_weight_channel_s32(") << p << ", " << g
        << ", " << in << ", co, " << scratch << ");\n    TA_TRAIN_TRACE(1, " << weights << ", co, " << scratch << ", "
        << channel_bytes << ", " << scale(gy) << " * " << float_literal(input_scale(op)) << ");\n  }\n#endif\n"
        << "  " << (depthwise ? "ta_dwconv_backward_update(" : "ta_conv_backward_update(") << p << ", " << g << ", "
        << in << ", learning_rate, " << scale(gy) << ", " << float_literal(input_scale(op)) << ", op" << op.index
        << "_weight_scale, " << scratch << ", NULL);\n";
  }

  TrainingCode training_code(const Program& program, const std::string& step_body) {
    const std::string api = "tinyarena_" + name_;
    TrainingCode code;
    code.kernel_sources = {"training.c"};
    code.cflags = "-DTA_NO_SIMD";
    code.invoke_prologue = "  if (!ta_trainables_ready) " + api + "_train_init();\n";
    code.declarations =
        "\n/* On-device training (spec " + plan_.spec + ", " + std::to_string(t_.updated_parameters) +
        " parameters). The trainable tensors are SRAM copies of their flash\n * values inside the arena; invoke and "
        "train_step make them on their first call. */\n/* Copies the trainable tensors from flash again (undoes "
        "every update). */\nvoid " + api + "_train_init(void);\n"
        "/* One SGD step on one example (label in [0, classes)); returns its softmax cross-entropy loss. */\n"
        "float " + api + "_train_step(const int8_t *input, int32_t label, float learning_rate);\n";
    std::ostringstream defs;
    defs << "\n/* ---- on-device training: the portable kernels read the trainable SRAM copies ---- */\n"
         << "#if TA_KERNELS_SIMD\n#error \"training builds use the portable kernels: compile with -DTA_NO_SIMD\"\n"
         << "#endif\n#include <math.h>\n#include \"tinyarena_training.h\"\n\n"
         << "#ifdef TINYARENA_TRACE\nvoid tinyarena_train_trace(int kind, int value, int channel, const void *data, "
         << "size_t bytes, float scale);\n#define TA_TRAIN_TRACE(kind, value, channel, data, bytes, scale) \\\n"
         << "  tinyarena_train_trace((kind), (value), (channel), (data), (bytes), (scale))\n#else\n"
         << "#define TA_TRAIN_TRACE(kind, value, channel, data, bytes, scale) ((void)0)\n#endif\n"
         << defs_.str() << "\nvoid " << api << "_train_init(void) {\n";
    for (const auto& [op, value] : trainables_) {
      const bool weights = t_.values[value].tensor == g_.ops[op].inputs[1];
      defs << "  memcpy(" << value_address(value, "void") << ", op" << op << (weights ? "_weights" : "_bias") << ", "
           << t_.values[value].bytes << ");\n";
    }
    defs << "  ta_trainables_ready = 1;\n}\n\nfloat " << api
         << "_train_step(const int8_t *input, int32_t label, float learning_rate) {\n"
         << "  float gs[" << t_.values.size() << "] = {0}; /* the run-time scale of each activation gradient */\n"
         << "  float loss = 0.0f;\n  int32_t shift;\n  (void)shift;\n  (void)gs;\n"
         << "  if (!ta_trainables_ready) " << api << "_train_init();\n"
         << step_body << "}\n";
    code.definitions = defs.str();
    code.globals = "\nstatic int ta_trainables_ready; /* the trainable SRAM copies hold their values */\n";
    code.harness = training_harness(program);
    return code;
  }

  const training::TrainingPlan& plan_;
  const training::TrainingGraph& t_;
  const graph::Graph& g_;
  LoweringContext ctx_;
  std::string name_;
  std::vector<std::pair<int32_t, int32_t>> trainables_;  // (op, trainable value), ascending op: weights, then bias
  std::map<int32_t, ChannelScales> layers_;             // weight layers whose scales are emitted
  std::set<int32_t> grad_params_emitted_;               // weight layers whose op<i>_grad is emitted
  std::map<int32_t, int32_t> grad_scale_of_;          // parameter gradient value -> the activation gradient it reads
  std::ostringstream defs_;
};

}  // namespace

Program lower_training_program(const training::TrainingPlan& plan, const std::string& name) {
  const plan::Plan view = forward_view(plan);
  return TrainingLowering(plan, view, name).lower();
}

}  // namespace tinyarena::codegen
