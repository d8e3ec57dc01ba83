// Which ops the kernel library runs: the one table of supported op types
// (the code generator registers one lowering per entry and checks so when it
// builds its table), and for one op of a graph, whether its kernel takes it.
// Stage-neutral like kernel_params.h: planning can ask before any code exists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"

namespace tinyarena::op_params {

struct SupportedOp {
  int32_t opcode;
  const char* name;
  bool view;             // moves no data and runs no kernel (RESHAPE, SQUEEZE, EXPAND_DIMS)
  const char* function;  // the C kernel generated code calls (nullptr for views); QUANTIZE of a
                         // float input calls ta_quantize_f32_s8, float32 ADD / SUB / MUL call
                         // ta_add_f32 / ta_sub_f32 / ta_mul_f32, an in-place depthwise its _inplace twin
  const char* source;    // the kernel library file that defines it (cpp/kernels/src/)
};

// Every supported op type, by opcode.
const std::vector<SupportedOp>& supported_ops();

// Empty when the library runs `op` (a view, an elided op, or an op whose
// kernel params derive), else the one-line reason it cannot, naming the op.
// What depends on the plan (scratch reserved, a batch writing a channel slice)
// is checked by the code generator only.
std::string unsupported_reason(const graph::Graph& graph, const graph::Op& op);

// (op index, unsupported_reason) of every op of `graph` that cannot run, in op order.
std::vector<std::pair<int32_t, std::string>> unsupported_ops(const graph::Graph& graph);

}  // namespace tinyarena::op_params
