// TFLite BuiltinOperator codes and their names.
#pragma once

#include <cstdint>
#include <string>

namespace tinyarena::graph {

constexpr int32_t kCustomOpcode = 32;

// "CONV_2D" for 3; "BUILTIN_<code>" for a code this table does not know.
std::string builtin_op_name(int32_t code);

}  // namespace tinyarena::graph
