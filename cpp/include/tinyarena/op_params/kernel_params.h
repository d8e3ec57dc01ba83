// The kernel library (cpp/kernels) seen from the compiler: for an op of the
// graph IR, the params struct its kernel takes, derived exactly as TFLite's
// reference kernels derive them in their Prepare steps, and the scratch the
// kernel asks for. Stage-neutral: liveness asks it for scratch sizes, the
// code generator for the values it emits, so both always agree.
//
// Every builder validates what the kernel needs (int8 activations with int8
// zero points, ranks, constant weights, the output shape it computes against
// the tensor's, requantization shifts the kernel can apply, int32 accumulators
// that cannot overflow for any int8 input) and throws UnsupportedError naming
// the op's index and type (and output channel) otherwise. Pointer
// fields of the C structs are left NULL: weights, biases and per-channel
// arrays are the caller's to place (they come back as vectors here).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/op_params/integer_rescale.h"
#include "tinyarena_kernels.h"

namespace tinyarena::op_params {

// BuiltinOperator codes of the ops the library runs.
namespace opcode {
constexpr int32_t kAdd = 0, kAveragePool2D = 1, kConcatenation = 2, kConv2D = 3, kDepthwiseConv2D = 4,
                  kDequantize = 6, kFullyConnected = 9, kLogistic = 14, kMaxPool2D = 17, kMul = 18,
                  kRelu = 19, kReluN1To1 = 20, kRelu6 = 21, kReshape = 22, kSoftmax = 25, kTanh = 28,
                  kPad = 34, kGather = 36, kTranspose = 39, kMean = 40, kSub = 41, kSqueeze = 43,
                  kUnidirectionalSequenceLstm = 44, kStridedSlice = 45, kSplit = 49, kLogSoftmax = 50,
                  kPadV2 = 60, kTile = 69, kExpandDims = 70, kShape = 77, kPack = 83, kUnpack = 88, kFill = 94,
                  kResizeNearestNeighbor = 97,
                  kLeakyRelu = 98, kSquaredDifference = 99, kSplitV = 102, kQuantize = 114,
                  kHardSwish = 117;
}  // namespace opcode

// Per-output-channel requantization, (mult, shift) pairs as QuantizeMultiplier gives them.
struct ChannelRequant {
  std::vector<int32_t> mult, shift;
};

// CONV_2D: one call per image (`images` of them). The layout of its weights in the SIMD builds
// is the plan's (weight_layouts.h); the scratch is the same for every layout
// (ta_conv_s8_scratch_bytes gives the largest need).
struct ConvKernel {
  ta_conv_params params{};
  int32_t images = 1;
  ChannelRequant requant;
  std::vector<int32_t> bias;  // empty when the op has none
};
ConvKernel conv_kernel(const graph::Graph& graph, const graph::Op& op);

// DEPTHWISE_CONV_2D: one call per image.
struct DepthwiseKernel {
  ta_dwconv_params params{};
  int32_t images = 1;
  ChannelRequant requant;
  std::vector<int32_t> bias;
};
DepthwiseKernel depthwise_kernel(const graph::Graph& graph, const graph::Op& op);

// FULLY_CONNECTED, rescaled in double as TFLite's current reference kernel does
// (`out_scale_f64`: one value, or one per output channel when `params.per_channel`), or, where
// integer_rescale proves it equal for every channel, by one int32 multiply (`rescale`, then
// `out_scale_f64` is empty).
struct FullyConnectedKernel {
  ta_fc_params params{};
  std::vector<double> out_scale_f64;
  std::vector<IntegerRescale> rescale;
  std::vector<int32_t> bias;
};
FullyConnectedKernel fully_connected_kernel(const graph::Graph& graph, const graph::Op& op);

// UNIDIRECTIONAL_SEQUENCE_LSTM, TFLite's integer 8x8->16 kernel (int8 input and
// hidden state, int16 cell state): the effective biases per gate (input matrix:
// bias - input zero point * row sums; recurrent: -hidden zero point * row
// sums) and the weight tensors' indices (-1 for the input gate of a CIFG LSTM).
// Peephole, projection, layer norm and diagonal recurrent weights are refused.
struct LstmKernel {
  ta_lstm_params params{};
  std::array<std::vector<int32_t>, 4> input_bias, recurrent_bias;
  std::array<int32_t, 4> input_weights_tensor{-1, -1, -1, -1}, recurrent_weights_tensor{-1, -1, -1, -1};
};
LstmKernel lstm_kernel(const graph::Graph& graph, const graph::Op& op);
// An LSTM whose input's QUANTIZE the zero_copy transform folded in: input 0
// is the float32 sequence, quantized a step at a time (its sixth intermediate
// carries the int8 input's scale and zero point).
bool lstm_reads_float_input(const graph::Op& op);
// A variable tensor (an LSTM's hidden or cell state) that the generated code
// resets at its one reader, an UNIDIRECTIONAL_SEQUENCE_LSTM, on every invoke:
// it holds data only during that op (TFLite's state after a reset).
bool state_reset_by_reader(const graph::Graph& graph, const graph::Tensor& tensor);

// AVERAGE_POOL_2D / MAX_POOL_2D: one call per image.
struct PoolKernel {
  ta_pool_params params{};
  int32_t images = 1;
};
PoolKernel pool_kernel(const graph::Graph& graph, const graph::Op& op);

ta_softmax_params softmax_params(const graph::Graph& graph, const graph::Op& op);  // SOFTMAX, LOG_SOFTMAX
// ADD, SUB, MUL, SQUARED_DIFFERENCE (SUB: ADD's params with input2_mult negated).
ta_binary_params binary_params(const graph::Graph& graph, const graph::Op& op);
// ADD, SUB, MUL of float32 tensors (ta_add_f32 / ta_sub_f32 / ta_mul_f32): shapes and the fused
// activation's float range (CalculateActivationRange).
ta_binary_f32_params binary_f32_params(const graph::Graph& graph, const graph::Op& op);
// Whether an ADD / SUB / MUL computes in float32 (its first input is float32).
bool is_float_binary(const graph::Graph& graph, const graph::Op& op);
// RELU, RELU6, RELU_N1_TO_1 and QUANTIZE int8 -> int8.
ta_requant_params requant_params(const graph::Graph& graph, const graph::Op& op);
ta_hard_swish_params hard_swish_params(const graph::Graph& graph, const graph::Op& op);
ta_leaky_relu_params leaky_relu_params(const graph::Graph& graph, const graph::Op& op);
// LOGISTIC / TANH as the 256-entry table TFLite's reference kernel builds.
std::array<int8_t, 256> lut(const graph::Graph& graph, const graph::Op& op);

// QUANTIZE float32 -> int8 and DEQUANTIZE int8 -> float32: the int8 side's quantization.
struct AffineQuantization {
  float scale = 1.0f;
  int32_t zero_point = 0;
  int64_t elements = 0;
};
AffineQuantization float_conversion(const graph::Graph& graph, const graph::Op& op);

ta_mean_params mean_params(const graph::Graph& graph, const graph::Op& op);
ta_pad_params pad_params(const graph::Graph& graph, const graph::Op& op);  // PAD, PADV2
ta_transpose_params transpose_params(const graph::Graph& graph, const graph::Op& op);
ta_slice_params strided_slice_params(const graph::Graph& graph, const graph::Op& op);
ta_tile_params tile_params(const graph::Graph& graph, const graph::Op& op);  // constant multiples
ta_resize_params resize_nearest_params(const graph::Graph& graph, const graph::Op& op);

// CONCATENATION / PACK (ta_concat_s8) and SPLIT / SPLIT_V / UNPACK (ta_split_s8):
// outer size and one copy size per input (output). PACK and UNPACK are the
// copies of a concatenation / split along a new axis of size one per part.
struct CopyPlan {
  int32_t outer_size = 0;
  std::vector<int32_t> copy_sizes;
};
CopyPlan concat_plan(const graph::Graph& graph, const graph::Op& op);  // CONCATENATION, PACK
CopyPlan split_plan(const graph::Graph& graph, const graph::Op& op);   // SPLIT, SPLIT_V, UNPACK
// The input position of the tensor a SPLIT / SPLIT_V / UNPACK cuts apart.
size_t split_input(const graph::Op& op);

// GATHER along one axis with constant indices (batch_dims 0); `indices` is
// left NULL, their values come back here.
struct GatherKernel {
  ta_gather_params params{};
  std::vector<int32_t> indices;
};
GatherKernel gather_kernel(const graph::Graph& graph, const graph::Op& op);

// Element count of an elementwise op's output (RELU*, LUT ops, HARD_SWISH, LEAKY_RELU, requantize).
int32_t elementwise_count(const graph::Graph& graph, const graph::Op& op);

// Scratch bytes the op's kernel asks for (the library's *_scratch_bytes(), the
// same on every build); `in_place` selects the in-place depthwise kernel. It
// depends on shapes only; 0 for ops without scratch and for shapes the library
// cannot run (the code generator then reports why).
int64_t scratch_bytes(const graph::Graph& graph, const graph::Op& op, bool in_place);

// CONV_2D's per-channel records (ta_conv_s8_rq_records), built on the host so the
// generated code keeps them in flash; with them the kernel's scratch is the
// column buffer only (conv_scratch_bytes, what the planner reserves).
std::vector<int32_t> conv_rq_records(const ConvKernel& k, const int8_t* weights);
// Whether the SIMD path may run k on doubled weights (ta_conv_s8_can_double; weights int8 OHWI),
// and k's weights packed as its params.packed_doubled says (ta_conv_s8_pack_weights).
bool conv_can_double(const ConvKernel& k, const int8_t* weights);
std::vector<int16_t> packed_conv_weights(const ConvKernel& k, const int8_t* weights);
// k's weights in the TA_PACKED_S8 layout (ta_conv_s8_pack_weights_s8: constant channels zeroed
// when params.packed_doubled).
std::vector<int8_t> packed_conv_weights_s8(const ConvKernel& k, const int8_t* weights);
// The Helium build's CONV_2D constants on int8 weights: the weights in the TA_PACKED_MVE layout
// (ta_conv_s8_pack_weights_mve) and its records (ta_conv_s8_mve_records: input offset folded in).
std::vector<int8_t> packed_conv_weights_mve(const ConvKernel& k, const int8_t* weights);
std::vector<int32_t> conv_mve_records(const ConvKernel& k, const int8_t* weights);
int64_t conv_scratch_bytes(const ta_conv_params& params);

// Weights in the library's TA_PACKED_S16 layouts (for the SIMD paths).
std::vector<int16_t> packed_gemm_weights(const int8_t* weights, int32_t n, int32_t k, int32_t weights_offset);
std::vector<int16_t> packed_depthwise_weights(const int8_t* weights, int32_t out_c, int32_t kernel_h,
                                              int32_t kernel_w);

}  // namespace tinyarena::op_params
