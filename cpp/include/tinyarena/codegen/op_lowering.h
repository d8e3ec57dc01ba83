// The per-op lowering functions, one family per source file
// (lower_conv.cpp, lower_pool.cpp, ...), registered by opcode in lowering.cpp.
// Each takes its params from tinyarena/op_params/kernel_params.h (the exact
// TFLite derivations) and turns them into C: constant arrays, a params
// initializer and the call at the planned addresses.
#pragma once

#include <string>
#include <vector>

#include "tinyarena/codegen/lowering.h"

namespace tinyarena::codegen {

using LowerFn = KernelCall (*)(const LoweringContext& context, const graph::Op& op);

struct OpLowering {
  int32_t opcode;
  const char* name;
  LowerFn lower;
};

// Every registered lowering: the union of the families' tables below.
std::vector<OpLowering> all_op_lowerings();
std::vector<OpLowering> pool_lowerings();
std::vector<OpLowering> softmax_lowerings();
std::vector<OpLowering> conv_lowerings();             // CONV_2D, DEPTHWISE_CONV_2D
std::vector<OpLowering> fully_connected_lowerings();  // FULLY_CONNECTED
std::vector<OpLowering> binary_lowerings();           // ADD, SUB, MUL, SQUARED_DIFFERENCE
std::vector<OpLowering> activation_lowerings();       // RELU*, LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU, (DE)QUANTIZE
std::vector<OpLowering> mean_lowerings();             // MEAN
std::vector<OpLowering> data_movement_lowerings();
std::vector<OpLowering> lstm_lowerings();             // UNIDIRECTIONAL_SEQUENCE_LSTM    // PAD, CONCATENATION, PACK, SPLIT(_V), UNPACK, GATHER, ...

// Builds a params initializer field by field, in the struct's order.
class Fields {
 public:
  Fields& add(const char* name, int64_t value);
  Fields& add(const char* name, const std::string& expression);
  Fields& add_list(const char* name, const std::vector<int32_t>& values);  // `{a, b, c}`
  Fields& add_list(const char* name, const int32_t* values, size_t count);
  // A field emitted only under a preprocessor condition (kWhenSimd, ...).
  Fields& add_when(const char* condition, const char* name, const std::string& expression);
  std::vector<Field> take() { return std::move(fields_); }

 private:
  std::vector<Field> fields_;
};

// The window fields of conv, depthwise and pool params (same names in their
// structs): input/output height and width, strides, padding.
template <typename Params>
Fields& add_window_fields(Fields& fields, const Params& p) {
  return fields.add("in_h", p.in_h).add("in_w", p.in_w).add("out_h", p.out_h).add("out_w", p.out_w)
      .add("stride_h", p.stride_h).add("stride_w", p.stride_w)
      .add("pad_top", p.pad_top).add("pad_left", p.pad_left)
      .add("pad_bottom", p.pad_bottom).add("pad_right", p.pad_right);
}

// Conv, depthwise and pools writing a channel slice of a zero-copy
// concatenation: adds `out_pix_stride` (only then); throws for a batch.
void add_output_stride(const LoweringContext& context, Fields& fields, const graph::Op& op, int32_t images);

// A constant array named op<index>_<what>.
ConstArray const_array(const graph::Op& op, const char* what, ElementType type, const void* data, size_t count);
ConstArray int32_array(const graph::Op& op, const char* what, const std::vector<int32_t>& values);

// Fills the fields every call shares: op index and type, traced outputs.
KernelCall start_call(const LoweringContext& context, const graph::Op& op, const char* kernel_source);

// `&op<index>_params`, the params struct's address in calls.
std::string params_ref(const graph::Op& op);
// `kernel(arg, arg, ...);`
std::string call_text(const std::string& kernel, const std::vector<std::string>& args);
// One kernel call per image of a batch: `kernel(&params, in, out, rest...)`
// with in/out advanced by one image each time (a plain call for one image).
std::string per_image_call(const graph::Op& op, const std::string& kernel, int32_t images, const std::string& in,
                           int64_t in_image, const std::string& out, int64_t out_image,
                           const std::vector<std::string>& rest);

// The address of input `position`: its arena address, or for a constant
// operand (e.g. ADD with a constant) an array of its bytes added to `call`.
std::string operand(const LoweringContext& context, KernelCall& call, const graph::Op& op, size_t position);

// The op's scratch buffer, checked to hold `bytes`; throws UnsupportedError
// when the plan reserved less (plans made without scratch cannot be compiled
// for ops that need it).
std::string scratch_for(const LoweringContext& context, const graph::Op& op, int64_t bytes);

// The weights of a CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED call: the
// int8 `weights` the portable paths read and the packed int16 `packed_weights`
// (TA_PACKED_S16) the SIMD paths read, each compiled in only where it is read
// (kWhenPortable / kWhenSimd), so flash holds one copy. helium_int8: the Helium build reads the
// int8 weights too (DEPTHWISE_CONV_2D: kWhenPortableOrHelium / kWhenDspNotHelium).
void add_weights(KernelCall& call, Fields& fields, const graph::Op& op, const graph::Tensor& weights,
                 const uint8_t* data, const std::vector<int16_t>& packed, bool helium_int8 = false);
// The int8 `weights` alone, read by every build (a layer in op_params::WeightLayout::kPlain: the
// SIMD builds run its portable loop).
void add_plain_weights(KernelCall& call, Fields& fields, const graph::Op& op, const graph::Tensor& weights,
                       const uint8_t* data);
// An int32 array field `name` (op<index>_<name>), or NULL when `values` is empty; with a
// `condition` (kWhenPortable, ...) array and field exist only in the builds it selects.
void add_int32_array(KernelCall& call, Fields& fields, const graph::Op& op, const char* name,
                     const std::vector<int32_t>& values, const char* condition = nullptr);

}  // namespace tinyarena::codegen
