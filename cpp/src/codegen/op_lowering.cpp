#include "tinyarena/codegen/op_lowering.h"

#include <cstring>

namespace tinyarena::codegen {

Fields& Fields::add(const char* name, int64_t value) {
  fields_.push_back({name, value == INT32_MIN ? "INT32_MIN" : std::to_string(value)});
  return *this;
}

Fields& Fields::add(const char* name, const std::string& expression) {
  fields_.push_back({name, expression});
  return *this;
}

Fields& Fields::add_list(const char* name, const std::vector<int32_t>& values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  fields_.push_back({name, text + "}"});
  return *this;
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

}  // namespace tinyarena::codegen
