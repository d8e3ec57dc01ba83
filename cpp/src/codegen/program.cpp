#include "tinyarena/codegen/program.h"

#include <cstdio>
#include <stdexcept>

#include "tinyarena/op_params/targets.h"

namespace tinyarena::codegen {

const char* c_type_name(ElementType type) {
  switch (type) {
    case ElementType::Int8: return "int8_t";
    case ElementType::Int16: return "int16_t";
    case ElementType::Int32: return "int32_t";
    case ElementType::Float32: return "float";
    case ElementType::Float64: return "double";
  }
  return "int8_t";
}

size_t element_bytes(ElementType type) {
  switch (type) {
    case ElementType::Int8: return 1;
    case ElementType::Int16: return 2;
    case ElementType::Int32: case ElementType::Float32: return 4;
    case ElementType::Float64: return 8;
  }
  return 1;
}

namespace {

// `%.<digits>g` of `value`, with a decimal point so C reads it as floating.
std::string shortest_g(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  std::string s = text;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

namespace {

// Whether the preprocessor condition (kWhen*) holds in `build`.
bool compiled_in(const std::string& condition, op_params::Build build) {
  using op_params::Build;
  if (condition.empty()) return true;
  if (condition == kWhenPortable) return build == Build::Portable;
  if (condition == kWhenSimd) return build != Build::Portable;
  if (condition == kWhenDspNotHelium) return build == Build::Simd;
  if (condition == kWhenHelium) return build == Build::Helium;
  if (condition == kWhenNotHelium) return build != Build::Helium;
  if (condition == kWhenPortableOrHelium) return build != Build::Simd;
  throw std::logic_error("unknown array condition '" + condition + "'");
}

}  // namespace

int64_t const_array_bytes(const Program& program, const std::string& target) {
  const op_params::Build build = op_params::target_build(target);
  int64_t bytes = 0;
  for (const KernelCall& call : program.calls)
    for (const ConstArray& array : call.arrays)
      if (compiled_in(array.condition, build)) bytes += static_cast<int64_t>(array.bytes.size());
  return bytes;
}

// 9 significant digits round-trip a float, 17 a double.
std::string float_literal(float value) { return shortest_g(value, 9) + "f"; }
std::string double_literal(double value) { return shortest_g(value, 17); }

}  // namespace tinyarena::codegen
