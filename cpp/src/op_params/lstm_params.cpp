// UNIDIRECTIONAL_SEQUENCE_LSTM params as TFLite's integer kernel derives them
// (unidirectional_sequence_lstm.cc, PopulateQuantizedLstmParams8x8_16 and the
// precomputed zero-point row sums): the effective scales are float32 products
// and quotients, each then split by QuantizeMultiplier; gate inputs are Q3.12
// (TFLite's default intermediate scale 2^-12 when there is no layer norm).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "accumulators.h"
#include "tinyarena/op_params/op_checks.h"
#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena/op_params/quantization.h"

namespace tinyarena::op_params {

using namespace detail;

namespace {

// Input positions (TFLite's lstm_shared.h order).
constexpr size_t kInput = 0, kInputWeights = 1, kRecurrentWeights = 5, kPeephole = 9, kBias = 12,
                 kProjectionWeights = 16, kProjectionBias = 17, kHiddenState = 18, kCellState = 19,
                 kLayerNorm = 20;
constexpr size_t kHiddenIntermediate = 4, kQuantizedInputIntermediate = 5;
constexpr int kGates = 4;

bool present(const graph::Graph& graph, const graph::Op& op, size_t position) {
  return graph.input(op, position) != nullptr;
}

void refuse_present(const graph::Graph& graph, const graph::Op& op, size_t first, size_t count, const char* what) {
  for (size_t position = first; position < first + count; ++position)
    if (present(graph, op, position)) unsupported(op, std::string(what) + " are not supported");
}

const graph::Tensor& weights(const graph::Graph& graph, const graph::Op& op, size_t position, int32_t rows,
                             int32_t cols) {
  const graph::Tensor& w = constant_input(graph, op, position, graph::DType::Int8, 2);
  require_shape(op, w, {rows, cols}, ("input " + std::to_string(position)).c_str());
  return w;
}

const graph::Tensor& state(const graph::Graph& graph, const graph::Op& op, size_t position, graph::DType dtype,
                           int64_t elements) {
  const std::string what = "the state tensor at input " + std::to_string(position);
  const graph::Tensor& t = activation(op, graph.input(op, position), dtype, what.c_str());
  if (!t.is_variable || t.is_constant()) unsupported(op, what + " must be a variable tensor without data");
  if (t.element_count != elements)
    unsupported(op, what + " has " + std::to_string(t.element_count) + " values; the op keeps " +
                        std::to_string(elements));
  if (t.consumers.size() != 1)
    unsupported(op, what + " is read by " + std::to_string(t.consumers.size()) +
                        " ops; the compiled code resets it for one op per invoke");
  return t;
}

// sum of each row of w [rows][cols] times `scalar`, added to `base` (TFLite's effective bias).
std::vector<int32_t> fold_zero_point(const graph::Op& op, const int8_t* w, int32_t rows, int32_t cols, int32_t scalar,
                                     const std::vector<int32_t>& base) {
  std::vector<int32_t> out(static_cast<size_t>(rows), 0);
  for (int32_t r = 0; r < rows; ++r) {
    int64_t row_sum = 0;
    for (int32_t c = 0; c < cols; ++c) row_sum += w[static_cast<size_t>(r) * cols + c];
    out[r] = to_int32(op, (base.empty() ? 0 : base[r]) + row_sum * scalar, "an effective gate bias");
  }
  return out;
}

float single_scale(const graph::Op& op, const graph::Tensor& t, const char* what) {
  if (t.quantization.scale.size() != 1)
    unsupported(op, std::string(what) + " needs one scale (per-tensor quantization)");
  return t.quantization.scale[0];
}

// The cell state's scale as a power of two (TFLite's check, in float32).
int32_t cell_scale_log2(const graph::Op& op, const graph::Tensor& cell) {
  const float x_log2 = std::log(single_scale(op, cell, "the cell state")) * (1.0f / std::log(2.0f));
  const float rounded = std::round(x_log2);
  if (std::abs(x_log2 - rounded) >= 1e-3f)
    unsupported(op, "the cell state's scale is not a power of two");
  const int32_t log2 = static_cast<int32_t>(rounded);
  if (log2 < -15 || log2 > -9)
    unsupported(op, "the cell state's scale is 2^" + std::to_string(log2) + "; the kernel takes 2^-15 .. 2^-9");
  return log2;
}

// The int8 input sequence's tensor: input 0, or, once zero_copy folded the
// input's QUANTIZE into the op, the sixth intermediate carrying its scale and
// zero point (input 0 is then the float32 sequence the kernel quantizes).
const graph::Tensor& quantized_input(const graph::Graph& graph, const graph::Op& op) {
  if (!lstm_reads_float_input(op)) return int8_input(graph, op, kInput, 3);
  const graph::Tensor& in = activation(op, graph.input(op, kInput), graph::DType::Float32,
                                       "the input (its QUANTIZE folded into the LSTM)", 3);
  const int32_t carrier = op.intermediates[kQuantizedInputIntermediate];
  if (carrier < 0 || graph.tensors[carrier].dtype != graph::DType::Int8 || graph.tensors[carrier].shape != in.shape)
    unsupported(op, "the quantized input's intermediate tensor is not int8 of the input's shape");
  return graph.tensors[carrier];
}

// Sizes and layout from the input, the forget gate's weights and the output.
LstmKernel lstm_geometry(const graph::Graph& graph, const graph::Op& op) {
  if (op.inputs.size() != 20 && op.inputs.size() != 24)
    unsupported(op, "has " + std::to_string(op.inputs.size()) + " inputs; the LSTM takes 20 or 24");
  const graph::Tensor& in = quantized_input(graph, op);
  const graph::Tensor& forget = constant_input(graph, op, kInputWeights + 1, graph::DType::Int8, 2);
  LstmKernel k;
  ta_lstm_params& p = k.params;
  p.time_major = op.options.time_major;
  p.input_is_float = lstm_reads_float_input(op);
  p.steps = in.shape[p.time_major ? 0 : 1];
  p.batches = in.shape[p.time_major ? 1 : 0];
  p.n_input = in.shape[2];
  p.n_cell = forget.shape[0];
  p.use_cifg = !present(graph, op, kInputWeights) && !present(graph, op, kRecurrentWeights);
  // The sequence output, or (after the zero_copy transform) the last step's hidden state alone.
  const graph::Tensor& out = int8_output(graph, op, 0);
  const bool sequence = out.shape == std::vector<int32_t>{in.shape[0], in.shape[1], p.n_cell};
  p.output_last_step_only = !sequence && out.element_count == int64_t{p.batches} * p.n_cell;
  if (!sequence && !p.output_last_step_only)
    require_shape(op, out, {in.shape[0], in.shape[1], p.n_cell}, "the output");
  return k;
}

}  // namespace

bool lstm_reads_float_input(const graph::Op& op) {
  return op.opcode == opcode::kUnidirectionalSequenceLstm && op.intermediates.size() > kQuantizedInputIntermediate;
}

LstmKernel lstm_kernel(const graph::Graph& graph, const graph::Op& op) {
  LstmKernel k = lstm_geometry(graph, op);
  ta_lstm_params& p = k.params;
  refuse_present(graph, op, kPeephole, 3, "peephole (cell-to-gate) weights");
  refuse_present(graph, op, kProjectionWeights, 2, "projection weights and bias");
  refuse_present(graph, op, kLayerNorm, 4, "layer normalization coefficients");
  if (op.options.diagonal_recurrent_tensors) unsupported(op, "diagonal recurrent weights are not supported");
  if (op.intermediates.size() != 5 && !(p.input_is_float && op.intermediates.size() == 6))
    unsupported(op, "has " + std::to_string(op.intermediates.size()) +
                        " intermediate tensors; TFLite's 8x8->16 integer kernel takes 5");
  const int32_t hidden_index = op.intermediates[kHiddenIntermediate];
  if (hidden_index < 0) unsupported(op, "the hidden-state intermediate tensor is missing");
  const graph::Tensor& hidden_q = graph.tensors[hidden_index];
  const graph::Tensor& in = quantized_input(graph, op);
  const int64_t state_values = int64_t{p.batches} * p.n_cell;
  const graph::Tensor& hidden = state(graph, op, kHiddenState, graph::DType::Int8, state_values);
  const graph::Tensor& cell = state(graph, op, kCellState, graph::DType::Int16, state_values);
  if (!cell.quantization.zero_point.empty() && cell.quantization.zero_point[0] != 0)
    unsupported(op, "the cell state's zero point is not 0");
  p.cell_scale_log2 = cell_scale_log2(op, cell);
  const float cell_scale = scale_of(cell);
  if (op.options.cell_clip < 0.0f) unsupported(op, "the cell clip is negative");
  p.cell_clip = op.options.cell_clip > 0.0f
                    ? static_cast<int16_t>(std::min(std::max(op.options.cell_clip / cell_scale, -32768.0f), 32767.0f))
                    : 0;
  const int32_t input_zp = zero_point_of(in), hidden_zp = zero_point_of(hidden);
  const float input_scale = single_scale(op, in, "the input");
  p.input_scale = input_scale;
  p.input_zero_point = input_zp;
  const float hidden_scale = single_scale(op, hidden, "the hidden state");
  const float gate_scale = std::pow(2.0f, -12.0f);
  for (int g = p.use_cifg ? 1 : 0; g < kGates; ++g) {
    const graph::Tensor& wx = weights(graph, op, kInputWeights + g, p.n_cell, p.n_input);
    const graph::Tensor& wh = weights(graph, op, kRecurrentWeights + g, p.n_cell, p.n_cell);
    if (weights_zero_point(op, wx) != 0 || weights_zero_point(op, wh) != 0)
      unsupported(op, "the gate weights are not symmetric (zero point 0)");
    const float wx_scale = single_scale(op, wx, "input weights"), wh_scale = single_scale(op, wh, "recurrent weights");
    const float input_effective = wx_scale * input_scale / gate_scale;
    const float recurrent_effective = wh_scale * hidden_scale / gate_scale;
    const Multiplier mx = requant_multiplier(op, static_cast<double>(input_effective), "an input gate scale");
    const Multiplier mh = requant_multiplier(op, static_cast<double>(recurrent_effective), "a recurrent gate scale");
    p.input_mult[g] = mx.mult;
    p.input_shift[g] = mx.shift;
    p.recurrent_mult[g] = mh.mult;
    p.recurrent_shift[g] = mh.shift;
    const auto* wx_data = reinterpret_cast<const int8_t*>(graph.constant_data(wx));
    const auto* wh_data = reinterpret_cast<const int8_t*>(graph.constant_data(wh));
    const std::vector<int32_t> bias = bias_values(graph, op, kBias + g, p.n_cell);
    if (bias.empty()) unsupported(op, "the bias of gate " + std::to_string(g) + " is missing");
    k.input_bias[g] = fold_zero_point(op, wx_data, p.n_cell, p.n_input, -input_zp, bias);
    k.recurrent_bias[g] = fold_zero_point(op, wh_data, p.n_cell, p.n_cell, -hidden_zp, {});
    prove_weight_accumulators(op, {wx_data, p.n_cell, p.n_input, p.n_input, 1}, k.input_bias[g], 0, 0);
    prove_weight_accumulators(op, {wh_data, p.n_cell, p.n_cell, p.n_cell, 1}, k.recurrent_bias[g], 0, 0);
    k.input_weights_tensor[g] = wx.index;
    k.recurrent_weights_tensor[g] = wh.index;
  }
  if (p.use_cifg && present(graph, op, kBias)) unsupported(op, "a CIFG LSTM has an input gate bias");
  // 2^-15 / hidden scale * 2^-15, in float32 as TFLite computes it.
  const float hidden_effective =
      std::pow(2.0f, -15.0f) / single_scale(op, hidden_q, "the hidden intermediate") * std::pow(2.0f, -15.0f);
  const Multiplier mo = requant_multiplier(op, static_cast<double>(hidden_effective), "the hidden-state scale");
  p.hidden_mult = mo.mult;
  p.hidden_shift = mo.shift;
  p.hidden_zero_point = zero_point_of(hidden_q);
  if (p.hidden_zero_point < -128 || p.hidden_zero_point > 127)
    unsupported(op, "the hidden intermediate's zero point is outside int8");
  p.state_zero_point = hidden_zp;
  return k;
}

bool state_reset_by_reader(const graph::Graph& graph, const graph::Tensor& tensor) {
  if (!tensor.is_variable || tensor.is_constant() || tensor.producer >= 0 || tensor.consumers.size() != 1) return false;
  const auto reader = std::find_if(graph.ops.begin(), graph.ops.end(),
                                   [&](const graph::Op& op) { return op.index == tensor.consumers[0]; });
  if (reader == graph.ops.end() || reader->opcode != opcode::kUnidirectionalSequenceLstm) return false;
  return (reader->inputs.size() > kHiddenState && reader->inputs[kHiddenState] == tensor.index) ||
         (reader->inputs.size() > kCellState && reader->inputs[kCellState] == tensor.index);
}

}  // namespace tinyarena::op_params
