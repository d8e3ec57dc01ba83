#include "tinyarena/codegen/op_lowering.h"

#include <cstring>

#include "tinyarena/common/errors.h"

namespace tinyarena::codegen {

Fields& Fields::add(const char* name, int64_t value) {
  fields_.push_back({name, value == INT32_MIN ? "INT32_MIN" : std::to_string(value), ""});
  return *this;
}

Fields& Fields::add(const char* name, const std::string& expression) {
  fields_.push_back({name, expression, ""});
  return *this;
}

Fields& Fields::add_list(const char* name, const std::vector<int32_t>& values) {
  return add_list(name, values.data(), values.size());
}

Fields& Fields::add_list(const char* name, const int32_t* values, size_t count) {
  std::string text = "{";
  for (size_t i = 0; i < count; ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  fields_.push_back({name, text + "}", ""});
  return *this;
}

Fields& Fields::add_when(const char* condition, const char* name, const std::string& expression) {
  fields_.push_back({name, expression, condition});
  return *this;
}

void add_output_stride(const LoweringContext& context, Fields& fields, const graph::Op& op, int32_t images) {
  const int32_t stride = context.pix_stride(op.outputs.at(0));
  if (stride == 0) return;
  if (images != 1)
    throw UnsupportedError("op " + std::to_string(op.index) + " (" + op.type +
                           ") writes a channel slice of a concatenation, which needs a single image");
  fields.add("out_pix_stride", stride);
}

ConstArray const_array(const graph::Op& op, const char* what, ElementType type, const void* data, size_t count) {
  ConstArray array;
  array.name = "op" + std::to_string(op.index) + "_" + what;
  array.type = type;
  array.bytes.resize(count * element_bytes(type));
  if (count) std::memcpy(array.bytes.data(), data, array.bytes.size());
  return array;
}

ConstArray int32_array(const graph::Op& op, const char* what, const std::vector<int32_t>& values) {
  return const_array(op, what, ElementType::Int32, values.data(), values.size());
}

std::string params_ref(const graph::Op& op) { return "&op" + std::to_string(op.index) + "_params"; }

std::string call_text(const std::string& kernel, const std::vector<std::string>& args) {
  std::string text = kernel + "(";
  for (size_t i = 0; i < args.size(); ++i) text += (i ? ", " : "") + args[i];
  return text + ");";
}

std::string per_image_call(const graph::Op& op, const std::string& kernel, int32_t images, const std::string& in,
                           int64_t in_image, const std::string& out, int64_t out_image,
                           const std::vector<std::string>& rest) {
  std::vector<std::string> args = {params_ref(op), in, out};
  if (images == 1) {
    args.insert(args.end(), rest.begin(), rest.end());
    return call_text(kernel, args);
  }
  args[1] += " + b * " + std::to_string(in_image);
  args[2] += " + b * " + std::to_string(out_image);
  args.insert(args.end(), rest.begin(), rest.end());
  return "for (int b = 0; b < " + std::to_string(images) + "; ++b)\n  " + call_text(kernel, args);
}

std::string operand(const LoweringContext& context, KernelCall& call, const graph::Op& op, size_t position) {
  const graph::Tensor* t = context.graph().input(op, position);
  if (!t || !t->is_constant()) return context.address(op.inputs.at(position));
  const std::string what = "in" + std::to_string(position);
  const bool float32 = t->dtype == graph::DType::Float32;
  call.arrays.push_back(const_array(op, what.c_str(), float32 ? ElementType::Float32 : ElementType::Int8,
                                    context.graph().constant_data(*t),
                                    static_cast<size_t>(float32 ? t->element_count : t->byte_size.value_or(0))));
  return call.arrays.back().name;
}

std::string scratch_for(const LoweringContext& context, const graph::Op& op, int64_t bytes) {
  const int64_t planned = context.scratch_bytes(op.index);
  if (planned < bytes)
    throw UnsupportedError("op " + std::to_string(op.index) + " (" + op.type + ") needs " + std::to_string(bytes) +
                           " B of kernel scratch but the plan reserved " + std::to_string(planned) +
                           " B: plan with scratch enabled");
  return context.scratch_address(op.index);
}

void add_weights(KernelCall& call, Fields& fields, const graph::Op& op, const graph::Tensor& weights,
                 const uint8_t* data, const std::vector<int16_t>& packed, bool helium_int8) {
  const char* const int8_builds = helium_int8 ? kWhenPortableOrHelium : kWhenPortable;
  const char* const packed_builds = helium_int8 ? kWhenDspNotHelium : kWhenSimd;
  call.arrays.push_back(const_array(op, "weights", ElementType::Int8, data, static_cast<size_t>(weights.element_count)));
  call.arrays.back().condition = int8_builds;
  call.arrays.push_back(const_array(op, "packed_weights", ElementType::Int16, packed.data(), packed.size()));
  call.arrays.back().condition = packed_builds;
  const std::string prefix = "op" + std::to_string(op.index);
  fields.add_when(int8_builds, "weights", prefix + "_weights");
  fields.add_when(packed_builds, "packed_weights", prefix + "_packed_weights");
}

void add_plain_weights(KernelCall& call, Fields& fields, const graph::Op& op, const graph::Tensor& weights,
                       const uint8_t* data) {
  call.arrays.push_back(const_array(op, "weights", ElementType::Int8, data, static_cast<size_t>(weights.element_count)));
  fields.add("weights", call.arrays.back().name);
}

void add_int32_array(KernelCall& call, Fields& fields, const graph::Op& op, const char* name,
                     const std::vector<int32_t>& values, const char* condition) {
  if (values.empty()) {
    if (!condition) fields.add(name, std::string("NULL"));
    return;
  }
  call.arrays.push_back(int32_array(op, name, values));
  if (!condition) {
    fields.add(name, call.arrays.back().name);
    return;
  }
  call.arrays.back().condition = condition;
  fields.add_when(condition, name, call.arrays.back().name);
}

}  // namespace tinyarena::codegen
