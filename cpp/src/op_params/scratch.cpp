// Scratch sizes and packed weights, straight from the kernel library's own
// host-side functions, so the planner reserves exactly what the kernels use.
// Scratch depends on shapes only, so a graph without quantization (or with
// one the kernel would refuse) still gets its scratch planned.
#include "tinyarena/op_params/geometry.h"
#include "tinyarena/common/errors.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::op_params {
namespace {

int64_t library_scratch_bytes(const graph::Graph& graph, const graph::Op& op, bool in_place) {
  switch (op.opcode) {
    case opcode::kConv2D: {
      const ConvKernel k = detail::conv_geometry(graph, op);
      return conv_scratch_bytes(k.params);
    }
    case opcode::kDepthwiseConv2D: {
      const DepthwiseKernel k = detail::depthwise_geometry(graph, op);
      return static_cast<int64_t>(in_place ? ta_depthwise_conv_s8_inplace_scratch_bytes(&k.params)
                                           : ta_depthwise_conv_s8_scratch_bytes(&k.params));
    }
    case opcode::kFullyConnected: {
      const FullyConnectedKernel k = detail::fully_connected_geometry(graph, op);
      return static_cast<int64_t>(ta_fully_connected_s8_scratch_bytes(&k.params));
    }
    case opcode::kUnidirectionalSequenceLstm: {  // the step's quantized input, with the QUANTIZE folded in
      const LstmKernel k = lstm_kernel(graph, op);
      return k.params.input_is_float ? static_cast<int64_t>(ta_lstm_s8_float_input_scratch_bytes(&k.params)) : 0;
    }

    default: return 0;
  }
}

}  // namespace

int64_t scratch_bytes(const graph::Graph& graph, const graph::Op& op, bool in_place) {
  try {
    return library_scratch_bytes(graph, op, in_place);
  } catch (const UnsupportedError&) {
    return 0;  // the planner plans any model; the code generator reports why this op cannot run
  }
}

namespace {

// k's params with its constant arrays (and the int8 weights, when given) attached.
ta_conv_params conv_params_with_constants(const ConvKernel& k, const int8_t* weights) {
  ta_conv_params p = k.params;
  p.weights = weights;
  p.out_mult = k.requant.mult.data();
  p.out_shift = k.requant.shift.data();
  p.bias = k.bias.empty() ? nullptr : k.bias.data();
  return p;
}

}  // namespace

bool conv_can_double(const ConvKernel& k, const int8_t* weights) {
  const ta_conv_params p = conv_params_with_constants(k, weights);
  return ta_conv_s8_can_double(&p) != 0;
}

std::vector<int16_t> packed_conv_weights(const ConvKernel& k, const int8_t* weights) {
  const ta_conv_params p = conv_params_with_constants(k, weights);
  std::vector<int16_t> packed(ta_pack_gemm_weights_s16_bytes(p.out_c, p.kernel_h * p.kernel_w * p.in_c) /
                              sizeof(int16_t));
  ta_conv_s8_pack_weights(&p, packed.data());
  return packed;
}

std::vector<int8_t> packed_conv_weights_s8(const ConvKernel& k, const int8_t* weights) {
  const ta_conv_params p = conv_params_with_constants(k, weights);
  std::vector<int8_t> packed(ta_conv_s8_pack_weights_s8_bytes(p.out_c, p.kernel_h * p.kernel_w * p.in_c));
  ta_conv_s8_pack_weights_s8(&p, packed.data());
  return packed;
}

std::vector<int8_t> packed_conv_weights_mve(const ConvKernel& k, const int8_t* weights) {
  const ta_conv_params p = conv_params_with_constants(k, weights);
  std::vector<int8_t> packed(ta_conv_s8_pack_weights_mve_bytes(p.out_c, p.kernel_h * p.kernel_w * p.in_c));
  ta_conv_s8_pack_weights_mve(&p, packed.data());
  return packed;
}

std::vector<int32_t> conv_mve_records(const ConvKernel& k, const int8_t* weights) {
  const ta_conv_params p = conv_params_with_constants(k, weights);
  std::vector<int32_t> records(ta_conv_s8_mve_records_words(p.out_c));
  ta_conv_s8_mve_records(&p, records.data());
  return records;
}

std::vector<int32_t> conv_rq_records(const ConvKernel& k, const int8_t* weights) {
  const ta_conv_params p = conv_params_with_constants(k, weights);
  std::vector<int32_t> records(static_cast<size_t>(p.out_c) * TA_CONV_RQ_WORDS);
  ta_conv_s8_rq_records(&p, records.data());
  return records;
}

int64_t conv_scratch_bytes(const ta_conv_params& params) {
  return static_cast<int64_t>(ta_conv_s8_scratch_bytes(&params));
}

std::vector<int16_t> packed_gemm_weights(const int8_t* weights, int32_t n, int32_t k, int32_t weights_offset) {
  std::vector<int16_t> packed(ta_pack_gemm_weights_s16_bytes(n, k) / sizeof(int16_t));
  ta_pack_gemm_weights_s16(weights, n, k, weights_offset, packed.data());
  return packed;
}

std::vector<int16_t> packed_depthwise_weights(const int8_t* weights, int32_t out_c, int32_t kernel_h,
                                              int32_t kernel_w) {
  std::vector<int16_t> packed(ta_pack_dw_weights_s16_bytes(out_c, kernel_h, kernel_w) / sizeof(int16_t));
  ta_pack_dw_weights_s16(weights, out_c, kernel_h, kernel_w, packed.data());
  return packed;
}

}  // namespace tinyarena::op_params
