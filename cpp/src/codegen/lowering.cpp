#include "tinyarena/codegen/lowering.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "memory_arenas.h"
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/common/errors.h"
#include "tinyarena/op_params/op_support.h"

namespace tinyarena::codegen {
namespace {

bool is_view(int32_t opcode) {
  const auto& ops = op_params::supported_ops();
  return std::any_of(ops.begin(), ops.end(), [&](const op_params::SupportedOp& s) { return s.view && s.opcode == opcode; });
}

// Ops that become a kernel call (views and elided ops emit nothing).
bool has_call(const graph::Op& op) { return !is_view(op.opcode) && !op.elided; }

// opcode -> lowering function; filled by the lower_*.cpp files' tables, one
// per op of the library's table (op_params::supported_ops) that is not a view.
const std::map<int32_t, LowerFn>& lowering_table() {
  static const std::map<int32_t, LowerFn> table = [] {
    std::map<int32_t, LowerFn> t;
    std::map<int32_t, std::string> names;
    for (const auto& entry : all_op_lowerings()) {
      t[entry.opcode] = entry.lower;
      names[entry.opcode] = entry.name;
    }
    size_t kernel_ops = 0;
    for (const op_params::SupportedOp& op : op_params::supported_ops()) {
      if (op.view) continue;
      ++kernel_ops;
      if (names[op.opcode] != op.name) throw std::logic_error(std::string("no lowering registered for ") + op.name);
    }
    if (kernel_ops != t.size()) throw std::logic_error("a lowering is registered for an op the library table lacks");
    return t;
  }();
  return table;
}

std::string c_type_of(const graph::Tensor& t) {
  switch (t.dtype) {
    case graph::DType::Float32: return "float";
    case graph::DType::Int32: return "int32_t";
    case graph::DType::Int16: return "int16_t";
    case graph::DType::UInt8: return "uint8_t";
    default: return "int8_t";
  }
}

}  // namespace

ModelIO model_io(const LoweringContext& context, int32_t index) {
  const graph::Tensor& t = context.graph().tensors[index];
  ModelIO io;
  io.name = t.name;
  io.tensor = context.tensor(index);
  io.shape = t.shape;
  io.dtype = graph::dtype_name(t.dtype);
  io.scale = t.quantization.scale.empty() ? 0.0f : t.quantization.scale[0];
  io.zero_point = t.quantization.zero_point.empty() ? 0 : t.quantization.zero_point[0];
  return io;
}

namespace {

// Runs one op's lowering; an UnsupportedError raised below it (e.g. a tensor
// without a planned buffer) is reported with the op's index and type.
KernelCall lower_op(const LoweringContext& context, const graph::Op& op, LowerFn lower) {
  const std::string label = "op " + std::to_string(op.index) + " (" + op.type + ")";
  try {
    return lower(context, op);
  } catch (const UnsupportedError& e) {
    if (std::string(e.what()).rfind(label, 0) == 0) throw;
    throw UnsupportedError(label + ": " + e.what());
  }
}

}  // namespace

namespace {

std::vector<BufferLocation> single_arena_locations(const plan::Plan& plan) {
  std::vector<BufferLocation> locations;
  for (int64_t offset : plan.solution.offsets) locations.push_back({kSingleArena, offset});
  return locations;
}

// `(<c_type> *)(<arena> + <offset>)`
std::string pointer(const std::string& c_type, const std::string& arena, int64_t offset) {
  return "(" + c_type + " *)(" + arena + " + " + std::to_string(offset) + ")";
}

}  // namespace

LoweringContext::LoweringContext(const graph::Graph& graph, const plan::Plan& plan)
    : LoweringContext(graph, plan, single_arena_locations(plan)) {}

LoweringContext::LoweringContext(const graph::Graph& graph, const plan::Plan& plan,
                                 std::vector<BufferLocation> locations)
    : graph_(graph), plan_(plan), locations_(std::move(locations)), scratch_buffer_of_op_(graph.ops.size(), -1) {
  for (size_t b = 0; b < plan.liveness.buffers.size(); ++b)
    if (plan.liveness.buffers[b].kind == liveness::BufferKind::Scratch)
      scratch_buffer_of_op_[plan.liveness.buffers[b].op] = static_cast<int32_t>(b);
}

namespace {

// "input<i>" / "output<i>": the invoke argument holding model tensor `index`, "" if none.
std::string caller_array(const graph::Graph& graph, const liveness::Liveness& liveness, int32_t index) {
  const auto& held = liveness.caller_tensors;
  if (!std::binary_search(held.begin(), held.end(), index)) return "";
  for (const auto* io : {&graph.inputs, &graph.outputs}) {
    const auto at = std::find(io->begin(), io->end(), index);
    if (at != io->end()) return (io == &graph.inputs ? "input" : "output") + std::to_string(at - io->begin());
  }
  return "";
}

}  // namespace

TensorRef LoweringContext::tensor(int32_t index) const {
  const graph::Tensor& t = graph_.tensors.at(index);
  const std::string caller = caller_array(graph_, plan_.liveness, index);
  if (!caller.empty()) return TensorRef{index, caller, 0, t.byte_size.value_or(0), c_type_of(t), true};
  const int32_t buffer = index >= 0 ? plan_.liveness.tensor_buffer[index] : -1;
  if (buffer < 0) throw UnsupportedError("tensor " + std::to_string(index) + " has no planned buffer");
  const BufferLocation& at = locations_[buffer];
  return TensorRef{index, at.arena, at.offset + plan_.liveness.tensor_offset[index], t.byte_size.value_or(0),
                   c_type_of(t)};
}

int32_t LoweringContext::pix_stride(int32_t index) const {
  const graph::Tensor& t = graph_.tensors.at(index);
  return t.placement ? t.placement->pix_stride : 0;
}

std::string LoweringContext::address(int32_t index) const {
  const TensorRef ref = tensor(index);
  return pointer(ref.c_type, ref.arena, ref.offset);
}

std::string LoweringContext::scratch_address(int32_t op_index) const {
  const int32_t buffer = scratch_buffer_of_op_[op_index];
  return buffer < 0 ? "NULL" : pointer("void", locations_[buffer].arena, locations_[buffer].offset);
}

std::string LoweringContext::state_address(int32_t op_index) const {
  for (size_t b = 0; b < plan_.liveness.buffers.size(); ++b) {
    const liveness::LiveBuffer& live = plan_.liveness.buffers[b];
    if (live.kind == liveness::BufferKind::Activation && live.tensors.empty() && live.op == op_index)
      return pointer("int32_t", locations_[b].arena, locations_[b].offset);
  }
  throw UnsupportedError("op " + std::to_string(op_index) + " has no planned state buffer");
}

int64_t LoweringContext::scratch_bytes(int32_t op_index) const {
  const int32_t buffer = scratch_buffer_of_op_[op_index];
  return buffer < 0 ? 0 : plan_.liveness.buffers[buffer].size;
}

bool LoweringContext::in_place(const graph::Op& op) const {
  const auto& ops = plan_.liveness.inplace_ops;
  return std::binary_search(ops.begin(), ops.end(), op.index);
}

KernelCall start_call(const LoweringContext& context, const graph::Op& op, const char* kernel_source) {
  KernelCall call;
  call.op_index = op.index;
  call.op_type = op.type;
  call.kernel_source = kernel_source;
  for (int32_t t : op.outputs) {  // a channel slice is not contiguous, a caller's array not in an arena: not traced
    if (t < 0 || context.pix_stride(t) != 0) continue;
    const TensorRef ref = context.tensor(t);
    if (!ref.in_caller_array) call.outputs.push_back(ref);
  }
  return call;
}

namespace {

// Every op of the plan's schedule lowered in `context`, into `program`.
Program lower_calls(const LoweringContext& context, Program program) {
  const graph::Graph& graph = context.graph();
  const plan::Plan& plan = context.plan();
  for (int32_t t : graph.inputs) program.inputs.push_back(model_io(context, t));
  for (int32_t t : graph.outputs) program.outputs.push_back(model_io(context, t));
  for (int32_t op_index : plan.liveness.order) {
    const graph::Op& op = graph.ops[op_index];
    if (has_call(op)) program.calls.push_back(lower_call(context, op));
  }
  return program;
}

}  // namespace

Program lower_program(const graph::Graph& graph, const plan::Plan& plan, const std::string& name) {
  Program program;
  program.name = name;
  program.arena_bytes = plan.peak_bytes;
  return lower_calls(LoweringContext(graph, plan), std::move(program));
}

Program lower_program(const graph::Graph& graph, const plan::Plan& plan, const std::string& name,
                      const std::vector<allocation::Memory>& memories,
                      const allocation::HierarchySolution& placement) {
  MemoryArenas placed = memory_arenas(plan, name, memories, placement);
  Program program = program_with_arenas(name, placed.arenas);
  return lower_calls(LoweringContext(graph, plan, std::move(placed.locations)), std::move(program));
}

KernelCall lower_call(const LoweringContext& context, const graph::Op& op) {
  const auto it = lowering_table().find(op.opcode);
  if (it == lowering_table().end())
    throw UnsupportedError("op " + std::to_string(op.index) + " (" + op.type + ") has no kernel in tinyarena's library");
  return lower_op(context, op, it->second);
}

namespace {

// The message of the UnsupportedError `lower` throws, if it throws one.
template <typename Lower>
void collect_issue(std::vector<std::string>& issues, Lower lower) {
  try {
    lower();
  } catch (const UnsupportedError& e) {
    issues.emplace_back(e.what());
  }
}

}  // namespace

std::vector<std::string> compile_issues(const graph::Graph& graph) {
  plan::PlanOptions options;
  options.allocator = "greedy_size_first_fit";  // where buffers sit does not matter here
  options.liveness.inplace_depthwise = options.liveness.inplace_elementwise = false;
  const plan::Plan plan = plan::make_plan(graph, options);
  const LoweringContext context(graph, plan);
  std::vector<std::string> issues;
  for (const std::vector<int32_t>* io : {&graph.inputs, &graph.outputs})
    for (int32_t t : *io) collect_issue(issues, [&] { model_io(context, t); });
  for (const graph::Op& op : graph.ops)
    if (has_call(op)) collect_issue(issues, [&] { lower_call(context, op); });
  return issues;
}

std::vector<std::string> supported_op_types() {
  (void)lowering_table();  // checks that every op of the table has its lowering
  std::vector<std::string> names;
  for (const op_params::SupportedOp& op : op_params::supported_ops()) names.push_back(op.name);
  return names;
}

}  // namespace tinyarena::codegen
