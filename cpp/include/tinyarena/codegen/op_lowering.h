// The per-op lowering functions, one family per source file
// (lower_conv.cpp, lower_pool.cpp, ...), registered by opcode in lowering.cpp.
#pragma once

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

// Builds a params initializer field by field, in the struct's order.
class Fields {
 public:
  Fields& add(const char* name, int64_t value);
  Fields& add(const char* name, const std::string& expression);
  Fields& add_list(const char* name, const std::vector<int32_t>& values);  // `{a, b, c}`
  std::vector<Field> take() { return std::move(fields_); }

 private:
  std::vector<Field> fields_;
};

// A constant array named op<index>_<what>.
ConstArray const_array(const graph::Op& op, const char* what, ElementType type, const void* data, size_t count);
ConstArray int32_array(const graph::Op& op, const char* what, const std::vector<int32_t>& values);

// Fills the fields every call shares: op index and type, traced outputs.
KernelCall start_call(const LoweringContext& context, const graph::Op& op, const char* kernel_source);

}  // namespace tinyarena::codegen
