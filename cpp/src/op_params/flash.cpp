// Constant arrays per op and build, sized the way the code generator fills
// them: packed layouts from the library's own *_bytes() functions, requant
// arrays from the same builders the generated params come from.
#include "tinyarena/op_params/flash.h"

#include <algorithm>
#include <map>

#include "tinyarena/common/errors.h"
#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena/op_params/op_support.h"

namespace tinyarena::op_params {
namespace {

constexpr int64_t kInt32 = 4, kInt16 = 2, kDouble = 8, kLutBytes = 256;

int64_t constant_tensor_bytes(const graph::Tensor* t) {
  return t && t->is_constant() ? t->byte_size.value_or(static_cast<int64_t>(t->data ? t->data->size : 0)) : 0;
}

bool emits_no_call(const graph::Op& op) {
  return op.elided || op.opcode == opcode::kReshape || op.opcode == opcode::kSqueeze ||
         op.opcode == opcode::kExpandDims;
}

// Bytes of the constant inputs the call passes as data (an array each).
int64_t constant_operand_bytes(const graph::Graph& graph, const graph::Op& op) {
  int64_t bytes = 0;
  for (size_t position = 0; position < op.inputs.size(); ++position) {
    const bool data = op.opcode == opcode::kConcatenation ? true
                      : op.opcode == opcode::kSplit       ? position == 1
                      : op.opcode == opcode::kAdd || op.opcode == opcode::kSub || op.opcode == opcode::kMul
                          ? position <= 1
                          : position == 0;
    if (data) bytes += constant_tensor_bytes(graph.input(op, position));
  }
  return bytes;
}

int64_t int32s(size_t count) { return kInt32 * static_cast<int64_t>(count); }

// Bias, per-channel multipliers and shifts of CONV_2D and DEPTHWISE_CONV_2D.
template <typename Kernel>
void add_channel_arrays(const Kernel& k, ConstantBytes& bytes) {
  bytes.biases += int32s(k.bias.size());
  bytes.requant += int32s(k.requant.mult.size()) + int32s(k.requant.shift.size());
}

// The layout a build stores: the portable build kPlain; the Helium build's depthwise the model's
// int8 weights (its conv: conv_bytes; fully connected: fully_connected_bytes).
WeightLayout stored_layout(Build build, WeightLayout layout, int32_t op_code) {
  if (build == Build::Portable) return WeightLayout::kPlain;
  if (build == Build::Helium && op_code == opcode::kDepthwiseConv2D) return WeightLayout::kPlain;  // depthwise_mve.c
  return layout;
}

ConstantBytes conv_bytes(const graph::Graph& graph, const graph::Op& op, WeightLayout layout, Build build) {
  const ConvKernel k = conv_kernel(graph, op);
  const ta_conv_params& p = k.params;
  ConstantBytes bytes;
  const int32_t taps = p.kernel_h * p.kernel_w * p.in_c;
  if (build == Build::Helium && layout == WeightLayout::kPackedInt8) {  // conv_mve.c's weights and records
    bytes.weights = static_cast<int64_t>(ta_conv_s8_pack_weights_mve_bytes(p.out_c, taps));
    bytes.requant += int32s(ta_conv_s8_mve_records_words(p.out_c));
    return bytes;
  }
  if (layout == WeightLayout::kPlain)
    bytes.weights = graph.input(op, 1)->element_count;
  else if (layout == WeightLayout::kPackedInt8)
    bytes.weights = static_cast<int64_t>(ta_conv_s8_pack_weights_s8_bytes(p.out_c, taps));
  else
    bytes.weights = static_cast<int64_t>(ta_pack_gemm_weights_s16_bytes(p.out_c, taps));
  if (layout == WeightLayout::kPlain)
    add_channel_arrays(k, bytes);
  else  // the SIMD paths read bias, multiplier and shift from the records alone
    bytes.requant += int32s(static_cast<size_t>(p.out_c) * TA_CONV_RQ_WORDS);
  return bytes;
}

ConstantBytes depthwise_bytes(const graph::Graph& graph, const graph::Op& op, WeightLayout layout) {
  const DepthwiseKernel k = depthwise_kernel(graph, op);
  const ta_dwconv_params& p = k.params;
  ConstantBytes bytes;
  bytes.weights = layout == WeightLayout::kPackedInt16
                      ? static_cast<int64_t>(ta_pack_dw_weights_s16_bytes(p.in_c * p.depth_multiplier, p.kernel_h,
                                                                          p.kernel_w))
                      : graph.input(op, 1)->element_count;
  add_channel_arrays(k, bytes);
  return bytes;
}

ConstantBytes fully_connected_bytes(const graph::Graph& graph, const graph::Op& op, WeightLayout layout, Build build) {
  const FullyConnectedKernel k = fully_connected_kernel(graph, op);
  const ta_fc_params& p = k.params;
  ConstantBytes bytes;
  // Helium reads int8 weights where the int8 loops apply (no weights offset), else packed int16
  if (build == Build::Helium && layout == WeightLayout::kPackedInt8 && p.weights_offset != 0)
    layout = WeightLayout::kPackedInt16;
  bytes.weights = layout == WeightLayout::kPackedInt16
                      ? static_cast<int64_t>(ta_pack_gemm_weights_s16_bytes(p.out_depth, p.in_depth))
                      : graph.input(op, 1)->element_count;
  bytes.biases = int32s(k.bias.size());
  bytes.requant = kDouble * static_cast<int64_t>(k.out_scale_f64.size()) + int32s(2 * k.rescale.size());
  return bytes;
}

ConstantBytes lstm_bytes(const graph::Graph& graph, const graph::Op& op) {
  const LstmKernel k = lstm_kernel(graph, op);
  ConstantBytes bytes;
  for (int g = 0; g < 4; ++g) {
    for (int32_t tensor : {k.input_weights_tensor[g], k.recurrent_weights_tensor[g]})
      if (tensor >= 0) bytes.weights += graph.tensors[tensor].element_count;
    bytes.biases += int32s(k.input_bias[g].size()) + int32s(k.recurrent_bias[g].size());
  }
  return bytes;
}

// The op's own arrays, besides constant data inputs; throws UnsupportedError as the builders do.
ConstantBytes call_arrays(const graph::Graph& graph, const graph::Op& op, WeightLayout layout, Build build) {
  ConstantBytes bytes;
  switch (op.opcode) {
    case opcode::kConv2D: return conv_bytes(graph, op, layout, build);
    case opcode::kDepthwiseConv2D: return depthwise_bytes(graph, op, layout);
    case opcode::kFullyConnected: return fully_connected_bytes(graph, op, layout, build);
    case opcode::kUnidirectionalSequenceLstm: return lstm_bytes(graph, op);
    case opcode::kLogistic: case opcode::kTanh: lut(graph, op); bytes.tables = kLutBytes; return bytes;
    case opcode::kConcatenation: bytes.tables = int32s(concat_plan(graph, op).copy_sizes.size()); return bytes;
    case opcode::kSplit: bytes.tables = int32s(split_plan(graph, op).copy_sizes.size()); return bytes;
    default: return bytes;
  }
}

// Every constant input as it is stored in the model (an op the library cannot run).
ConstantBytes raw_constants(const graph::Graph& graph, const graph::Op& op) {
  ConstantBytes bytes;
  for (size_t position = 0; position < op.inputs.size(); ++position)
    bytes.weights += constant_tensor_bytes(graph.input(op, position));
  return bytes;
}

// A code-size table's figure for `name`; 0 for code the table does not hold.
int64_t bytes_or_zero(const std::map<std::string, int64_t>& table, const std::string& name) {
  const auto found = table.find(name);
  return found == table.end() ? 0 : found->second;
}

}  // namespace

ConstantBytes constant_bytes(const graph::Graph& graph, const graph::Op& op, Build build, WeightLayout layout) {
  if (emits_no_call(op)) return {};
  if (kernel_function(graph, op, false).function.empty()) return raw_constants(graph, op);
  try {
    ConstantBytes bytes = call_arrays(graph, op, stored_layout(build, layout, op.opcode), build);
    bytes.weights += constant_operand_bytes(graph, op);
    return bytes;
  } catch (const UnsupportedError&) {
    return raw_constants(graph, op);
  }
}

ConstantBytes constant_bytes(const graph::Graph& graph, const graph::Op& op, Build build) {
  return constant_bytes(graph, op, build, default_layout(graph, op));
}

KernelFunction kernel_function(const graph::Graph& graph, const graph::Op& op, bool in_place, WeightLayout layout) {
  if (emits_no_call(op)) return {};
  const auto& ops = supported_ops();
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const SupportedOp& s) { return s.opcode == op.opcode; });
  if (it == ops.end() || it->view) return {};
  const graph::Tensor* in = graph.input(op, 0);
  if (op.opcode == opcode::kQuantize && in && in->dtype == graph::DType::Float32)
    return {"ta_quantize_f32_s8", it->source};
  if (is_float_binary(graph, op))
    return {op.opcode == opcode::kAdd ? "ta_add_f32" : op.opcode == opcode::kSub ? "ta_sub_f32" : "ta_mul_f32",
            it->source};
  if (lstm_reads_float_input(op)) return {"ta_lstm_s8_float_input", it->source};
  if (op.opcode == opcode::kDepthwiseConv2D && in_place)
    return {"ta_depthwise_conv_s8_inplace", it->source, kernel_variants(graph, op, layout)};
  if (op.opcode == opcode::kConv2D && layout == WeightLayout::kPackedInt16)
    return {"ta_conv_s8_packed16", it->source, kernel_variants(graph, op, layout)};
  return {it->function, it->source, kernel_variants(graph, op, layout)};
}

int64_t KernelCodeTally::add(const KernelFunction& kernel) {
  int64_t added = 0;
  for (const std::string& variant : kernel.variants)
    if (variants_.insert(variant).second) added += kernel_variant_code_bytes(variant);
  if (kernel.function.empty() || !functions_.insert(kernel.function).second) return added;
  int64_t& source = by_source_[kernel.source];
  const int64_t before = source;
  source = std::min(source + kernel_code_bytes(kernel.function), kernel_source_code_bytes(kernel.source));
  return added + source - before;
}

int64_t kernel_code_bytes(const std::string& function) {
  // written by python tools/kernel_code_bytes.py --write
  static const std::map<std::string, int64_t> kBytes = {
      {"ta_conv_s8", 3608},
      {"ta_conv_s8_packed16", 8128},
      {"ta_depthwise_conv_s8", 4},
      {"ta_depthwise_conv_s8_inplace", 4},
      {"ta_fully_connected_s8", 1800},
      {"ta_avg_pool_s8", 452},
      {"ta_max_pool_s8", 368},
      {"ta_add_s8", 2296},
      {"ta_mul_s8", 2216},
      {"ta_squared_difference_s8", 776},
      {"ta_add_f32", 584},
      {"ta_sub_f32", 584},
      {"ta_mul_f32", 584},
      {"ta_softmax_s8", 944},
      {"ta_log_softmax_s8", 2420},
      {"ta_requantize_s8", 180},
      {"ta_lut_s8", 28},
      {"ta_hard_swish_s8", 532},
      {"ta_quantize_f32_s8", 144},
      {"ta_dequantize_s8_f32", 40},
      {"ta_leaky_relu_s8", 304},
      {"ta_mean_s8", 1232},
      {"ta_pad_s8", 456},
      {"ta_concat_s8", 80},
      {"ta_split_s8", 80},
      {"ta_transpose_s8", 376},
      {"ta_strided_slice_s8", 476},
      {"ta_resize_nearest_s8", 404},
      {"ta_gather_s8", 96},
      {"ta_tile_s8", 376},
      {"ta_lstm_s8", 2012},
      {"ta_lstm_s8_float_input", 2012},
      {"ta_lstm_s8_reset_state", 40}};
  return bytes_or_zero(kBytes, function);
}

int64_t kernel_source_code_bytes(const std::string& source) {
  // written by python tools/kernel_code_bytes.py --write
  static const std::map<std::string, int64_t> kBytes = {
      {"conv.c", 10072},
      {"depthwise.c", 8},
      {"fully_connected.c", 1800},
      {"pooling.c", 820},
      {"elementwise.c", 4960},
      {"softmax.c", 2868},
      {"activations.c", 1228},
      {"mean.c", 1232},
      {"data_movement.c", 2344},
      {"lstm.c", 2080}};
  return bytes_or_zero(kBytes, source);
}

int64_t kernel_variant_code_bytes(const std::string& variant) {
  // written by python tools/kernel_code_bytes.py --write
  static const std::map<std::string, int64_t> kBytes = {
      {"TA_CONV_PORTABLE", 2656},
      {"TA_CONV_COL_PIXEL", 1276},
      {"TA_CONV_S8W_GENERAL", 652},
      {"TA_DW_3X3_S1", 1132},
      {"TA_DW_3X3_S1_ASM", 556},
      {"TA_DW_3X3_S2", 468},
      {"TA_DW_3X3_S2_ASM", 748},
      {"TA_DW_WIDE5_S1", 2112},
      {"TA_DW_WIDE5_S2", 1824},
      {"TA_DW_WIDE7_S1", 2804},
      {"TA_DW_WIDE7_S2", 2624},
      {"TA_DW_GENERIC", 2364},
      {"TA_DW_PORTABLE", 5404},
      {"TA_DW_CHANNELS", 2164},
      {"depthwise.c SIMD path", 4472},
      {"TA_FC_PACKED16", 364},
      {"TA_FC_PORTABLE", 396}};
  return bytes_or_zero(kBytes, variant);
}

}  // namespace tinyarena::op_params
