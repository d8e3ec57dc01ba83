#include "tinyarena/op_params/op_support.h"

#include <algorithm>

#include "tinyarena/common/errors.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::op_params {
namespace {

using Check = void (*)(const graph::Graph& graph, const graph::Op& op);

// Derives the op's kernel params (they throw UnsupportedError when the kernel cannot take it).
template <auto Derive>
void derive(const graph::Graph& graph, const graph::Op& op) {
  (void)Derive(graph, op);
}

void quantize(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor* in = graph.input(op, 0);
  if (in && in->dtype == graph::DType::Float32) (void)float_conversion(graph, op);
  else (void)requant_params(graph, op);
}

// ADD, SUB, MUL: the float32 kernels' params for float inputs, else the int8 ones.
void binary(const graph::Graph& graph, const graph::Op& op) {
  if (is_float_binary(graph, op)) (void)binary_f32_params(graph, op);
  else (void)binary_params(graph, op);
}

void nothing(const graph::Graph&, const graph::Op&) {}

struct Entry {
  SupportedOp op;
  Check check;
};

const std::vector<Entry>& table() {
  namespace c = opcode;
  static const std::vector<Entry> entries = {
      {{c::kAdd, "ADD", false, "ta_add_s8", "elementwise.c"}, binary},
      {{c::kAveragePool2D, "AVERAGE_POOL_2D", false, "ta_avg_pool_s8", "pooling.c"}, derive<pool_kernel>},
      {{c::kConcatenation, "CONCATENATION", false, "ta_concat_s8", "data_movement.c"}, derive<concat_plan>},
      {{c::kConv2D, "CONV_2D", false, "ta_conv_s8", "conv.c"}, derive<conv_kernel>},
      {{c::kDepthwiseConv2D, "DEPTHWISE_CONV_2D", false, "ta_depthwise_conv_s8", "depthwise.c"}, derive<depthwise_kernel>},
      {{c::kDequantize, "DEQUANTIZE", false, "ta_dequantize_s8_f32", "activations.c"}, derive<float_conversion>},
      {{c::kFullyConnected, "FULLY_CONNECTED", false, "ta_fully_connected_s8", "fully_connected.c"}, derive<fully_connected_kernel>},
      {{c::kLogistic, "LOGISTIC", false, "ta_lut_s8", "activations.c"}, derive<lut>},
      {{c::kMaxPool2D, "MAX_POOL_2D", false, "ta_max_pool_s8", "pooling.c"}, derive<pool_kernel>},
      {{c::kMul, "MUL", false, "ta_mul_s8", "elementwise.c"}, binary},
      {{c::kRelu, "RELU", false, "ta_requantize_s8", "activations.c"}, derive<requant_params>},
      {{c::kReluN1To1, "RELU_N1_TO_1", false, "ta_requantize_s8", "activations.c"}, derive<requant_params>},
      {{c::kRelu6, "RELU6", false, "ta_requantize_s8", "activations.c"}, derive<requant_params>},
      {{c::kReshape, "RESHAPE", true, nullptr, nullptr}, nothing},
      {{c::kSoftmax, "SOFTMAX", false, "ta_softmax_s8", "softmax.c"}, derive<softmax_params>},
      {{c::kTanh, "TANH", false, "ta_lut_s8", "activations.c"}, derive<lut>},
      {{c::kPad, "PAD", false, "ta_pad_s8", "data_movement.c"}, derive<pad_params>},
      {{c::kGather, "GATHER", false, "ta_gather_s8", "data_movement.c"}, derive<gather_kernel>},
      {{c::kTranspose, "TRANSPOSE", false, "ta_transpose_s8", "data_movement.c"}, derive<transpose_params>},
      {{c::kMean, "MEAN", false, "ta_mean_s8", "mean.c"}, derive<mean_params>},
      {{c::kSub, "SUB", false, "ta_add_s8", "elementwise.c"}, binary},
      {{c::kSqueeze, "SQUEEZE", true, nullptr, nullptr}, nothing},
      {{c::kStridedSlice, "STRIDED_SLICE", false, "ta_strided_slice_s8", "data_movement.c"}, derive<strided_slice_params>},
      {{c::kSplit, "SPLIT", false, "ta_split_s8", "data_movement.c"}, derive<split_plan>},
      {{c::kLogSoftmax, "LOG_SOFTMAX", false, "ta_log_softmax_s8", "softmax.c"}, derive<softmax_params>},
      {{c::kPadV2, "PADV2", false, "ta_pad_s8", "data_movement.c"}, derive<pad_params>},
      {{c::kTile, "TILE", false, "ta_tile_s8", "data_movement.c"}, derive<tile_params>},
      {{c::kExpandDims, "EXPAND_DIMS", true, nullptr, nullptr}, nothing},
      {{c::kPack, "PACK", false, "ta_concat_s8", "data_movement.c"}, derive<concat_plan>},
      {{c::kUnpack, "UNPACK", false, "ta_split_s8", "data_movement.c"}, derive<split_plan>},
      {{c::kResizeNearestNeighbor, "RESIZE_NEAREST_NEIGHBOR", false, "ta_resize_nearest_s8", "data_movement.c"}, derive<resize_nearest_params>},
      {{c::kLeakyRelu, "LEAKY_RELU", false, "ta_leaky_relu_s8", "activations.c"}, derive<leaky_relu_params>},
      {{c::kSquaredDifference, "SQUARED_DIFFERENCE", false, "ta_squared_difference_s8", "elementwise.c"}, derive<binary_params>},
      {{c::kSplitV, "SPLIT_V", false, "ta_split_s8", "data_movement.c"}, derive<split_plan>},
      {{c::kQuantize, "QUANTIZE", false, "ta_requantize_s8", "activations.c"}, quantize},
      {{c::kHardSwish, "HARD_SWISH", false, "ta_hard_swish_s8", "activations.c"}, derive<hard_swish_params>},
      {{c::kUnidirectionalSequenceLstm, "UNIDIRECTIONAL_SEQUENCE_LSTM", false, "ta_lstm_s8", "lstm.c"}, derive<lstm_kernel>},
  };
  return entries;
}

}  // namespace

const std::vector<SupportedOp>& supported_ops() {
  static const std::vector<SupportedOp> ops = [] {
    std::vector<SupportedOp> all;
    for (const Entry& e : table()) all.push_back(e.op);
    return all;
  }();
  return ops;
}

std::string unsupported_reason(const graph::Graph& graph, const graph::Op& op) {
  if (op.elided) return "";
  const auto& entries = table();
  const auto it = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.op.opcode == op.opcode; });
  const std::string label = "op " + std::to_string(op.index) + " (" + op.type + ")";
  if (it == entries.end()) return label + " has no kernel in tinyarena's library";
  try {
    it->check(graph, op);
    return "";
  } catch (const UnsupportedError& e) {
    const std::string why = e.what();
    return why.rfind(label, 0) == 0 ? why : label + ": " + why;
  }
}

std::vector<std::pair<int32_t, std::string>> unsupported_ops(const graph::Graph& graph) {
  std::vector<std::pair<int32_t, std::string>> reasons;
  for (const graph::Op& op : graph.ops) {
    std::string why = unsupported_reason(graph, op);
    if (!why.empty()) reasons.emplace_back(op.index, std::move(why));
  }
  return reasons;
}

}  // namespace tinyarena::op_params
