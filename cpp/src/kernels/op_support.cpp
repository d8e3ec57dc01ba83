#include "tinyarena/kernels/op_support.h"

#include <algorithm>

#include "tinyarena/common/errors.h"
#include "tinyarena/kernels/kernel_params.h"

namespace tinyarena::kernels {
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

void nothing(const graph::Graph&, const graph::Op&) {}

struct Entry {
  SupportedOp op;
  Check check;
};

const std::vector<Entry>& table() {
  namespace c = opcode;
  static const std::vector<Entry> entries = {
      {{c::kAdd, "ADD", false}, derive<binary_params>},
      {{c::kAveragePool2D, "AVERAGE_POOL_2D", false}, derive<pool_kernel>},
      {{c::kConcatenation, "CONCATENATION", false}, derive<concat_plan>},
      {{c::kConv2D, "CONV_2D", false}, derive<conv_kernel>},
      {{c::kDepthwiseConv2D, "DEPTHWISE_CONV_2D", false}, derive<depthwise_kernel>},
      {{c::kDequantize, "DEQUANTIZE", false}, derive<float_conversion>},
      {{c::kFullyConnected, "FULLY_CONNECTED", false}, derive<fully_connected_kernel>},
      {{c::kLogistic, "LOGISTIC", false}, derive<lut>},
      {{c::kMaxPool2D, "MAX_POOL_2D", false}, derive<pool_kernel>},
      {{c::kMul, "MUL", false}, derive<binary_params>},
      {{c::kRelu, "RELU", false}, derive<requant_params>},
      {{c::kReluN1To1, "RELU_N1_TO_1", false}, derive<requant_params>},
      {{c::kRelu6, "RELU6", false}, derive<requant_params>},
      {{c::kReshape, "RESHAPE", true}, nothing},
      {{c::kSoftmax, "SOFTMAX", false}, derive<softmax_params>},
      {{c::kTanh, "TANH", false}, derive<lut>},
      {{c::kPad, "PAD", false}, derive<pad_params>},
      {{c::kGather, "GATHER", false}, derive<gather_kernel>},
      {{c::kTranspose, "TRANSPOSE", false}, derive<transpose_params>},
      {{c::kMean, "MEAN", false}, derive<mean_params>},
      {{c::kSub, "SUB", false}, derive<binary_params>},
      {{c::kSqueeze, "SQUEEZE", true}, nothing},
      {{c::kStridedSlice, "STRIDED_SLICE", false}, derive<strided_slice_params>},
      {{c::kSplit, "SPLIT", false}, derive<split_plan>},
      {{c::kLogSoftmax, "LOG_SOFTMAX", false}, derive<softmax_params>},
      {{c::kPadV2, "PADV2", false}, derive<pad_params>},
      {{c::kExpandDims, "EXPAND_DIMS", true}, nothing},
      {{c::kPack, "PACK", false}, derive<concat_plan>},
      {{c::kUnpack, "UNPACK", false}, derive<split_plan>},
      {{c::kResizeNearestNeighbor, "RESIZE_NEAREST_NEIGHBOR", false}, derive<resize_nearest_params>},
      {{c::kLeakyRelu, "LEAKY_RELU", false}, derive<leaky_relu_params>},
      {{c::kSquaredDifference, "SQUARED_DIFFERENCE", false}, derive<binary_params>},
      {{c::kSplitV, "SPLIT_V", false}, derive<split_plan>},
      {{c::kQuantize, "QUANTIZE", false}, quantize},
      {{c::kHardSwish, "HARD_SWISH", false}, derive<hard_swish_params>},
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

}  // namespace tinyarena::kernels
