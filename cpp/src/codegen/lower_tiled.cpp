#include "tinyarena/codegen/tiled_lowering.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "tinyarena/codegen/lowering.h"
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/common/errors.h"
#include "tinyarena/kernels/kernel_params.h"
#include "tinyarena/liveness/liveness.h"

namespace tinyarena::codegen {
namespace {

namespace op_code = kernels::opcode;
using tiling::RowStream;
using tiling::StepKind;

int64_t row_bytes(const graph::Tensor& t) { return int64_t{t.shape[2]} * t.shape[3]; }

// C expressions for one segment's tensors: rings through their virtual row-0 base.
class SegmentAddresses {
 public:
  SegmentAddresses(const LoweringContext& tiled, const RowStream& stream) : tiled_(tiled), stream_(stream) {}

  // Row 0 of tensor `t`, wherever it lives (`lo[r]` is ring r's first held row).
  std::string row0(int32_t t) const {
    const int32_t r = stream_.ring_of(t);
    if (r < 0) return tiled_.address(t);
    return "ta_ring_row0(" + ring_base(r) + ", lo[" + std::to_string(r) + "], " +
           std::to_string(stream_.rings[r].row_bytes) + ")";
  }
  std::string ring_base(int32_t r) const {
    return "(ta_arena + " + std::to_string(tiled_.tensor(stream_.rings[r].tensor).offset) + ")";
  }

 private:
  const LoweringContext& tiled_;
  const RowStream& stream_;
};

[[noreturn]] void cannot_tile(const graph::Op& op, const std::string& why) {
  throw UnsupportedError("op " + std::to_string(op.index) + " (" + op.type + ") " + why);
}

// An elementwise operand: rank 4, or lower with nothing along rows and columns.
void check_operand(const graph::Op& op, const graph::Tensor& t) {
  const size_t rank = t.shape.size();
  const bool flat = rank < 2 || (t.shape[rank - 2] == 1 && (rank < 3 || t.shape[rank - 3] == 1));
  if (rank != 4 && !flat) cannot_tile(op, "has an operand of rank " + std::to_string(rank) + " spanning rows");
}

// Row `y0` of operand `position` of an elementwise op: row 0 plus y0 rows when the operand has rows.
std::string operand_rows(const graph::Graph& graph, const graph::Op& op, size_t position, const std::string& row0) {
  const graph::Tensor& t = *graph.input(op, position);
  check_operand(op, t);
  if (t.shape.size() != 4 || t.shape[1] == 1) return row0;
  return row0 + " + y0 * " + std::to_string(row_bytes(t));
}

// A constant operand's array (the plain lowering emitted it as op<index>_in<position>).
std::string constant_operand(const graph::Op& op, size_t position) {
  return "op" + std::to_string(op.index) + "_in" + std::to_string(position);
}

// `kernel` and first argument of a one-input elementwise call `kernel(first, in, out, n)`.
std::pair<std::string, std::string> unary_kernel(const graph::Op& op, const KernelCall& lowered) {
  const std::string& text = lowered.call;
  const size_t open = text.find('('), comma = text.find(',');
  if (open == std::string::npos || comma == std::string::npos || text.find('\n') != std::string::npos)
    cannot_tile(op, "cannot run on tiles");
  return {text.substr(0, open), text.substr(open + 1, comma - open - 1)};
}

// The statement computing output rows [y0, y1) of a segment op.
std::string stripe_call(const graph::Graph& graph, const graph::Op& op, const KernelCall& lowered,
                        const SegmentAddresses& at, const std::string& scratch) {
  const std::string params = params_ref(op);
  const std::string in = at.row0(op.inputs[0]);
  const std::string out = at.row0(op.outputs[0]);
  switch (op.opcode) {
    case op_code::kConv2D: return call_text("ta_conv_s8", {params, in, out, "y0", "y1", scratch});
    case op_code::kDepthwiseConv2D: {
      // The rows as a small image of their own (row y0 at 0, the padding shifted), so the
      // kernel's scratch layout (sized by out_h) fits the stripe's scratch.
      const std::string rb = std::to_string(row_bytes(*graph.output(op, 0)));
      return "{\n  ta_dwconv_params p = op" + std::to_string(op.index) +
             "_params;\n  p.out_h = y1 - y0;\n  p.pad_top -= y0 * p.stride_h;\n  " +
             call_text("ta_depthwise_conv_s8", {"&p", in, out + " + y0 * " + rb, "0", "y1 - y0", scratch}) + "\n}";
    }
    case op_code::kAveragePool2D: return call_text("ta_avg_pool_s8", {params, in, out, "y0", "y1"});
    case op_code::kMaxPool2D: return call_text("ta_max_pool_s8", {params, in, out, "y0", "y1"});
    case op_code::kAdd:
    case op_code::kMul: {
      // The params with the rows' height (a broadcast operand keeps its size-1 height).
      std::string operands[2];
      for (size_t p = 0; p < 2; ++p) {
        const graph::Tensor& t = *graph.input(op, p);
        operands[p] = operand_rows(graph, op, p, t.is_constant() ? constant_operand(op, p) : at.row0(op.inputs[p]));
      }
      const std::string h = "[TA_MAX_DIMS - 3]";
      return "{\n  ta_binary_params p = op" + std::to_string(op.index) + "_params;\n  p.out_shape" + h +
             " = y1 - y0;\n  if (p.shape1" + h + " != 1) p.shape1" + h + " = y1 - y0;\n  if (p.shape2" + h +
             " != 1) p.shape2" + h + " = y1 - y0;\n  " +
             call_text(op.opcode == op_code::kAdd ? "ta_add_s8" : "ta_mul_s8",
                       {"&p", operands[0], operands[1], out + " + y0 * " + std::to_string(row_bytes(*graph.output(op, 0)))}) +
             "\n}";
    }
    default: {
      // One-input elementwise kernels: `kernel(first, in, out, n)`, as the plain lowering calls them.
      const auto [kernel, first] = unary_kernel(op, lowered);
      const std::string rb = std::to_string(row_bytes(*graph.output(op, 0)));
      return call_text(kernel, {first, in + " + y0 * " + rb, out + " + y0 * " + rb, "(y1 - y0) * " + rb});
    }
  }
}

// The replay loop of one segment; its step table goes into `table`.
std::string segment_loop(const graph::Graph& graph, const RowStream& stream, const std::vector<KernelCall>& lowered,
                         const LoweringContext& tiled, const std::string& table) {
  const SegmentAddresses at(tiled, stream);
  const std::string scratch = tiled.scratch_address(stream.ops.front());
  std::ostringstream c;
  c << "{\n  /* row-streamed segment: ops " << stream.ops.front() << ".." << stream.ops.back() << ", "
    << stream.rings.size() << " rings, " << stream.steps.size() << " steps */\n";
  const size_t rings = std::max<size_t>(stream.rings.size(), 1);
  c << "  int32_t lo[" << rings << "] = {0}, hi[" << rings << "] = {0};\n";
  c << "  for (int32_t i = 0; i < " << stream.steps.size() << "; ++i) {\n"
    << "    const int16_t *s = " << table << " + 4 * i;\n"
    << "    const int32_t y0 = s[2], y1 = s[3];\n"
    << "    (void)y1;\n"
    << "    switch (s[0]) {\n";
  for (size_t k = 0; k < stream.ops.size(); ++k) {
    const graph::Op& op = graph.ops[stream.ops[k]];
    c << "      case " << k << ": /* op " << op.index << " " << op.type << " */\n";
    std::istringstream lines(stripe_call(graph, op, lowered[k], at, scratch));
    for (std::string line; std::getline(lines, line);) c << "        " << line << "\n";
    const int32_t r = stream.ring_of(op.outputs[0]);
    if (r >= 0) c << "        hi[" << r << "] = y1;\n";
    c << "        break;\n";
  }
  for (size_t r = 0; r < stream.rings.size(); ++r) {
    const graph::Tensor& t = graph.tensors[stream.rings[r].tensor];
    const std::string rb = std::to_string(stream.rings[r].row_bytes);
    const std::string base = at.ring_base(static_cast<int32_t>(r));
    c << "      case " << 1000 + r << ": /* shift ring " << r << " (" << t.name << ") to row y0 */\n"
      << "        memmove(" << base << ", " << base << " + (y0 - lo[" << r << "]) * " << rb << ", (size_t)(hi[" << r
      << "] - y0) * " << rb << ");\n"
      << "        lo[" << r << "] = y0;\n        break;\n";
    int32_t input = -1;
    for (size_t i = 0; i < graph.inputs.size(); ++i)
      if (graph.inputs[i] == stream.rings[r].tensor) input = static_cast<int32_t>(i);
    if (input < 0) continue;
    c << "      case " << 2000 + r << ": /* input rows [y0, y1) of input" << input << " */\n"
      << "        TA_INPUT_ROWS(" << input << ", " << base << " + (y0 - lo[" << r << "]) * " << rb << ", y0, y1 - y0, "
      << rb << ");\n        hi[" << r << "] = y1;\n        break;\n";
  }
  c << "    }\n  }\n}";
  return c.str();
}

// C expressions for one patch segment's tensors in the current patch. `R` points at the
// patch's regions (4 values per tensor, see tiling::PatchRun::regions). A tensor with its own
// per-patch buffer holds exactly its region (origin at the buffer's start, rows of the
// region's width); a whole tensor keeps its full layout. base() is the virtual address of
// element (0, 0), so element (y, x) is base + y * stride + x * channels either way.
class PatchAddresses {
 public:
  PatchAddresses(const graph::Graph& graph, const LoweringContext& tiled, const tiling::PatchRun& run)
      : graph_(graph), tiled_(tiled), run_(run) {}

  std::string region(int32_t t, int k) const { return "R[" + std::to_string(4 * local(t) + k) + "]"; }
  std::string rows(int32_t t) const { return "(" + region(t, 1) + " - " + region(t, 0) + ")"; }
  std::string cols(int32_t t) const { return "(" + region(t, 3) + " - " + region(t, 2) + ")"; }
  std::string channels(int32_t t) const { return std::to_string(graph_.tensors[t].shape[3]); }
  bool own(int32_t t) const {
    for (const auto& b : run_.buffers)
      if (b.tensor == t) return true;
    return false;
  }
  std::string stride(int32_t t) const {
    return own(t) ? "(" + cols(t) + " * " + channels(t) + ")" : std::to_string(row_bytes(graph_.tensors[t]));
  }
  std::string base(int32_t t) const {
    if (!own(t)) return tiled_.address(t);
    return "ta_region_base(ta_arena + " + std::to_string(tiled_.tensor(t).offset) + ", " + region(t, 0) + ", " +
           region(t, 2) + ", " + stride(t) + ", " + channels(t) + ")";
  }
  // Element (row, column) of `t` as a C expression.
  std::string at(int32_t t, const std::string& row, const std::string& col) const {
    return base(t) + " + (" + row + ") * " + stride(t) + " + (" + col + ") * " + channels(t);
  }

 private:
  int32_t local(int32_t t) const {
    return static_cast<int32_t>(std::find(run_.tensors.begin(), run_.tensors.end(), t) - run_.tensors.begin());
  }
  const graph::Graph& graph_;
  const LoweringContext& tiled_;
  const tiling::PatchRun& run_;
};

// The statement computing op's output region in the current patch.
std::string patch_call(const graph::Graph& graph, const graph::Op& op, const KernelCall& lowered,
                       const PatchAddresses& at, const std::string& scratch) {
  const int32_t in = op.inputs[0], out = op.outputs[0];
  const std::string r0 = at.region(out, 0), c0 = at.region(out, 2), oc = at.channels(out);
  const std::string index = std::to_string(op.index);
  auto window = [&](const char* type, const std::string& call) {
    // The region as an image of its own: rows and columns shifted into the padding fields.
    return std::string("{\n  ") + type + " q = op" + index + "_params;\n  q.out_h = " + at.rows(out) +
           ";\n  q.out_w = " + at.cols(out) + ";\n  q.pad_top -= " + r0 + " * q.stride_h;\n  q.pad_left -= " + c0 +
           " * q.stride_w;\n  q.in_row_stride = " + at.stride(in) + ";\n  q.out_row_stride = " + at.stride(out) +
           ";\n  " + call + "\n}";
  };
  const std::string in_base = at.base(in), out_at = at.at(out, r0, c0);
  switch (op.opcode) {
    case op_code::kConv2D:
      return window("ta_conv_params", call_text("ta_conv_s8", {"&q", in_base, out_at, "0", "q.out_h", scratch}));
    case op_code::kDepthwiseConv2D:
      return window("ta_dwconv_params", call_text("ta_depthwise_conv_s8", {"&q", in_base, out_at, "0", "q.out_h", scratch}));
    case op_code::kAveragePool2D:
      return window("ta_pool_params", call_text("ta_avg_pool_s8", {"&q", in_base, out_at, "0", "q.out_h"}));
    case op_code::kMaxPool2D:
      return window("ta_pool_params", call_text("ta_max_pool_s8", {"&q", in_base, out_at, "0", "q.out_h"}));
    default: break;
  }
  // Elementwise: one call per row of the region.
  std::string body;
  if (op.opcode == op_code::kAdd || op.opcode == op_code::kMul) {
    std::string operands[2];
    for (size_t p = 0; p < 2; ++p) {
      const graph::Tensor& t = *graph.input(op, p);
      check_operand(op, t);
      const bool rank4 = t.shape.size() == 4;
      const std::string row = rank4 && t.shape[1] > 1 ? "y" : "0", col = rank4 && t.shape[2] > 1 ? c0 : "0";
      operands[p] = !t.is_constant() ? at.at(op.inputs[p], row, col)
                  : rank4 ? constant_operand(op, p) + " + (" + row + ") * " + std::to_string(row_bytes(t)) + " + (" +
                                col + ") * " + std::to_string(t.shape[3])
                          : constant_operand(op, p);
    }
    const std::string h = "[TA_MAX_DIMS - 3]", w = "[TA_MAX_DIMS - 2]";
    body = "ta_binary_params q = op" + index + "_params;\n  q.out_shape" + h + " = q.shape1" + h + " = q.shape2" + h +
           " = 1;\n  q.out_shape" + w + " = " + at.cols(out) + ";\n  if (q.shape1" + w + " != 1) q.shape1" + w + " = " +
           at.cols(out) + ";\n  if (q.shape2" + w + " != 1) q.shape2" + w + " = " + at.cols(out) + ";\n  for (int32_t y = " +
           r0 + "; y < " + at.region(out, 1) + "; ++y)\n    " +
           call_text(op.opcode == op_code::kAdd ? "ta_add_s8" : "ta_mul_s8", {"&q", operands[0], operands[1], at.at(out, "y", c0)});
  } else {
    const auto [kernel, first] = unary_kernel(op, lowered);
    body = "for (int32_t y = " + r0 + "; y < " + at.region(out, 1) + "; ++y)\n    " +
           call_text(kernel, {first, at.at(in, "y", c0), at.at(out, "y", c0), at.cols(out) + " * " + oc});
  }
  return "{\n  " + body + "\n}";
}

// The loop over one patch segment's patches; its region table goes into `table`.
std::string patch_loop(const graph::Graph& graph, const tiling::PatchRun& run, const std::vector<KernelCall>& lowered,
                       const LoweringContext& tiled, const std::string& table) {
  const PatchAddresses at(graph, tiled, run);
  const int32_t patches = run.grid_h * run.grid_w, count = static_cast<int32_t>(run.tensors.size());
  std::ostringstream c;
  c << "{\n  /* patch segment: ops " << run.ops.front() << ".." << run.ops.back() << " on " << run.grid_h << "x"
    << run.grid_w << " patches (halos recomputed) */\n"
    << "  for (int32_t patch = 0; patch < " << patches << "; ++patch) {\n"
    << "    const int16_t *R = " << table << " + " << 4 * count << " * patch;\n";
  for (const auto& b : run.buffers) {  // a streamed input's region, pixel row by pixel row
    int32_t input = -1;
    for (size_t i = 0; i < graph.inputs.size(); ++i)
      if (graph.inputs[i] == b.tensor) input = static_cast<int32_t>(i);
    if (input < 0) continue;
    const int32_t t = b.tensor;
    c << "    for (int32_t y = " << at.region(t, 0) << "; y < " << at.region(t, 1) << "; ++y) /* input" << input
      << " */\n      TA_INPUT_PIXELS(" << input << ", " << at.at(t, "y", at.region(t, 2)) << ", y, " << at.region(t, 2)
      << ", " << at.cols(t) << ", " << at.channels(t) << ", " << row_bytes(graph.tensors[t]) << ");\n";
  }
  for (size_t k = 0; k < run.ops.size(); ++k) {
    const graph::Op& op = graph.ops[run.ops[k]];
    c << "    /* op " << op.index << " " << op.type << " */\n";
    std::istringstream lines(patch_call(graph, op, lowered[k], at, tiled.scratch_address(op.index)));
    for (std::string line; std::getline(lines, line);) c << "    " << line << "\n";
  }
  c << "  }\n}";
  return c.str();
}

ConstArray int16_table(const std::string& name, const std::vector<int32_t>& values) {
  ConstArray array;
  array.name = name;
  array.type = ElementType::Int16;
  for (int32_t v : values) {
    if (v > INT16_MAX || v < INT16_MIN) throw UnsupportedError("a tiled tensor is too large for the step tables");
    const int16_t x = static_cast<int16_t>(v);
    array.bytes.push_back(static_cast<uint8_t>(x & 0xff));
    array.bytes.push_back(static_cast<uint8_t>((x >> 8) & 0xff));
  }
  return array;
}

// The step table: {kind code, 0, y0, y1} per step; kind code = op position,
// 1000 + ring (shift) or 2000 + ring (input rows).
ConstArray step_table(const RowStream& stream, const std::string& name) {
  std::vector<int32_t> values;
  for (const auto& step : stream.steps) {
    int32_t code = (step.kind == StepKind::Shift ? 1000 : 2000) + step.target;
    if (step.kind == StepKind::Run)
      code = static_cast<int32_t>(std::find(stream.ops.begin(), stream.ops.end(), step.target) - stream.ops.begin());
    values.insert(values.end(), {code, 0, step.begin, step.end});
  }
  return int16_table(name, values);
}

constexpr const char* kRingHelpers =
    "#ifndef TA_RING_HELPERS\n#define TA_RING_HELPERS\n"
    "/* Row 0 of a ring holding rows from `first` on: kernels only touch the rows the stripe needs. */\n"
    "#define ta_ring_row0(base, first, row_bytes) ((int8_t *)((uintptr_t)(base) - (uintptr_t)(first) * (uintptr_t)(row_bytes)))\n"
    "/* Element (0, 0) of a patch buffer holding the region from (row, col) on, `stride` bytes a row. */\n"
    "#define ta_region_base(base, row, col, stride, channels) \\\n"
    "  ((int8_t *)((uintptr_t)(base) - (uintptr_t)((row) * (stride)) - (uintptr_t)((col) * (channels))))\n"
    "#endif\n";

constexpr const char* kInputRows =
    "#ifndef TA_INPUT_ROWS\n"
    "/* The streamed model input: rows [first, first + rows) of input `index` into `dst`. Define\n"
    " * TA_INPUT_ROWS to pull them from a camera line buffer instead of the invoke() argument. */\n"
    "#define TA_INPUT_ROWS(index, dst, first, rows, row_bytes) \\\n"
    "  memcpy((dst), (const int8_t *)input##index + (size_t)(first) * (row_bytes), (size_t)(rows) * (row_bytes))\n"
    "#endif\n"
    "#ifndef TA_INPUT_PIXELS\n"
    "/* The same for a patch: `count` pixels of row `row` from column `col`. */\n"
    "#define TA_INPUT_PIXELS(index, dst, row, col, count, channels, row_bytes) \\\n"
    "  memcpy((dst), (const int8_t *)input##index + (size_t)(row) * (row_bytes) + (size_t)(col) * (channels), \\\n"
    "         (size_t)(count) * (channels))\n"
    "#endif\n";

}  // namespace

Program lower_tiled_program(const graph::Graph& graph, const tiling::TiledPlan& tiled, const std::string& name) {
  std::vector<int32_t> segment_of(graph.ops.size(), -1);
  for (size_t s = 0; s < tiled.segments.size(); ++s)
    for (int32_t op : tiled.segments[s].ops) segment_of[op] = static_cast<int32_t>(s);
  // Segment ops take their constants and params from an ordinary plan's lowering (addresses unused).
  plan::PlanOptions plain_options = tiled.plan.options;
  for (const auto& seg : tiled.segments)
    plain_options.liveness.not_inplace_ops.insert(plain_options.liveness.not_inplace_ops.end(), seg.ops.begin(),
                                                  seg.ops.end());
  plain_options.liveness.scratch = true;
  const plan::Plan plain = plan::make_plan(graph, plain_options);
  const LoweringContext plain_context(graph, plain);
  const LoweringContext context(graph, tiled.plan);

  Program program;
  program.name = name;
  program.arena_bytes = tiled.plan.peak_bytes;
  for (int32_t t : graph.inputs) {
    program.inputs.push_back(model_io(context, t));
    for (const RowStream& stream : tiled.streams) program.inputs.back().streamed |= stream.ring_of(t) >= 0;
    for (const tiling::PatchRun& run : tiled.patch_runs)
      for (const auto& b : run.buffers) program.inputs.back().streamed |= b.tensor == t;
  }
  for (int32_t t : graph.outputs) program.outputs.push_back(model_io(context, t));
  for (int32_t op_index : tiled.plan.liveness.order) {
    const graph::Op& op = graph.ops[op_index];
    if (liveness::is_view_op(op.opcode)) continue;
    const int32_t s = segment_of[op_index];
    if (s < 0) {
      program.calls.push_back(lower_call(context, op));
      continue;
    }
    const std::vector<int32_t>& ops = tiled.segments[s].ops;
    if (op_index != ops.front()) continue;
    std::vector<KernelCall> lowered;
    for (int32_t index : ops) lowered.push_back(lower_call(plain_context, graph.ops[index]));
    const bool rows = tiled.segments[s].mode == tiling::Mode::Rows;
    const std::string table = "seg" + std::to_string(ops.front()) + (rows ? "_steps" : "_regions");
    const std::string loop = rows ? segment_loop(graph, tiled.streams[s], lowered, context, table)
                                  : patch_loop(graph, tiled.patch_runs[s], lowered, context, table);
    for (KernelCall& call : lowered) {  // constants and params only; the loop makes the calls
      call.outputs.clear();
      call.call.clear();
    }
    KernelCall& last = lowered.back();
    last.arrays.push_back(rows ? step_table(tiled.streams[s], table) : int16_table(table, tiled.patch_runs[s].regions));
    last.call = std::string(kRingHelpers) + kInputRows + loop;
    const std::vector<int32_t> outputs =
        rows ? tiled.streams[s].full_outputs : std::vector<int32_t>{tiled.patch_runs[s].full_output};
    for (int32_t t : outputs) last.outputs.push_back(context.tensor(t));
    program.calls.insert(program.calls.end(), lowered.begin(), lowered.end());
  }
  return program;
}

}  // namespace tinyarena::codegen
