#include "tinyarena/codegen/tiled_lowering.h"

#include <algorithm>

#include "memory_arenas.h"
#include "tiled_parts.h"
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/common/errors.h"
#include "tinyarena/graph/storage.h"

namespace tinyarena::codegen {
namespace tiled {

[[noreturn]] void cannot_tile(const graph::Op& op, const std::string& why) {
  throw UnsupportedError("op " + std::to_string(op.index) + " (" + op.type + ") " + why);
}

void check_operand(const graph::Op& op, const graph::Tensor& t) {
  const size_t rank = t.shape.size();
  const bool flat = rank < 2 || (t.shape[rank - 2] == 1 && (rank < 3 || t.shape[rank - 3] == 1));
  if (rank != 4 && !flat) cannot_tile(op, "has an operand of rank " + std::to_string(rank) + " spanning rows");
}

std::string constant_operand(const graph::Op& op, size_t position) {
  return "op" + std::to_string(op.index) + "_in" + std::to_string(position);
}

std::pair<std::string, std::string> unary_kernel(const graph::Op& op, const KernelCall& lowered) {
  if (lowered.elementwise_kernel.empty()) cannot_tile(op, "cannot run on tiles");
  return {lowered.elementwise_kernel, lowered.elementwise_first};
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

}  // namespace tiled

namespace {

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
    "#ifndef TA_INPUT_NCHW_ROWS\n"
    "/* Rows [first, first + rows) of NCHW input `index` (`bytes` per element), transposed to NHWC into\n"
    " * `dst`: what the model's TRANSPOSE to NHWC would make of them. Define it to pull the rows from a\n"
    " * camera line buffer instead. */\n"
    "#define TA_INPUT_NCHW_ROWS(index, dst, first, rows, channels, height, width, bytes) \\\n"
    "  do { \\\n"
    "    const int8_t *src_ = (const int8_t *)input##index; \\\n"
    "    int8_t *dst_ = (int8_t *)(dst); \\\n"
    "    for (int32_t y_ = 0; y_ < (rows); ++y_) \\\n"
    "      for (int32_t x_ = 0; x_ < (width); ++x_) \\\n"
    "        for (int32_t c_ = 0; c_ < (channels); ++c_) \\\n"
    "          memcpy(dst_ + ((size_t)(y_ * (width) + x_) * (channels) + c_) * (bytes), \\\n"
    "                 src_ + (((size_t)c_ * (height) + (first) + y_) * (width) + x_) * (bytes), (bytes)); \\\n"
    "  } while (0)\n"
    "#endif\n"
    "#ifndef TA_INPUT_QUANTIZED_ROWS\n"
    "/* Rows [first, first + rows) of float input `index`, `row_elements` each, quantized into `dst`. */\n"
    "#define TA_INPUT_QUANTIZED_ROWS(index, dst, first, rows, row_elements, scale, zero_point) \\\n"
    "  ta_quantize_f32_s8((const float *)input##index + (size_t)(first) * (row_elements), (int8_t *)(dst), \\\n"
    "                     (rows) * (row_elements), (scale), (zero_point))\n"
    "#endif\n"
    "#ifndef TA_INPUT_NCHW_QUANTIZED_ROWS\n"
    "/* The same of float NCHW input `index`, transposed to NHWC and quantized. */\n"
    "#define TA_INPUT_NCHW_QUANTIZED_ROWS(index, dst, first, rows, channels, height, width, scale, zero_point) \\\n"
    "  do { \\\n"
    "    const float *src_ = (const float *)input##index; \\\n"
    "    int8_t *dst_ = (int8_t *)(dst); \\\n"
    "    for (int32_t y_ = 0; y_ < (rows); ++y_) \\\n"
    "      for (int32_t x_ = 0; x_ < (width); ++x_) \\\n"
    "        for (int32_t c_ = 0; c_ < (channels); ++c_) \\\n"
    "          ta_quantize_f32_s8(src_ + ((size_t)c_ * (height) + (first) + y_) * (width) + x_, \\\n"
    "                             dst_ + (size_t)(y_ * (width) + x_) * (channels) + c_, 1, (scale), (zero_point)); \\\n"
    "  } while (0)\n"
    "#endif\n"
    "#ifndef TA_INPUT_PIXELS\n"
    "/* The same for a patch: `count` pixels of row `row` from column `col`. */\n"
    "#define TA_INPUT_PIXELS(index, dst, row, col, count, channels, row_bytes) \\\n"
    "  memcpy((dst), (const int8_t *)input##index + (size_t)(row) * (row_bytes) + (size_t)(col) * (channels), \\\n"
    "         (size_t)(count) * (channels))\n"
    "#endif\n"
    "#ifndef TA_INPUT_QUANTIZED_PIXELS\n"
    "/* `count` pixels of row `row` of float input `index` (`width` pixels a row) from column `col`,\n"
    " * quantized into `dst`. */\n"
    "#define TA_INPUT_QUANTIZED_PIXELS(index, dst, row, col, count, channels, width, scale, zero_point) \\\n"
    "  ta_quantize_f32_s8((const float *)input##index + ((size_t)(row) * (width) + (col)) * (channels), \\\n"
    "                     (int8_t *)(dst), (count) * (channels), (scale), (zero_point))\n"
    "#endif\n"
    "#ifndef TA_INPUT_NCHW_PIXELS\n"
    "/* `count` pixels of row `row` of NCHW input `index` from column `col`, transposed to NHWC. */\n"
    "#define TA_INPUT_NCHW_PIXELS(index, dst, row, col, count, channels, height, width, bytes) \\\n"
    "  do { \\\n"
    "    const int8_t *src_ = (const int8_t *)input##index; \\\n"
    "    int8_t *dst_ = (int8_t *)(dst); \\\n"
    "    for (int32_t x_ = 0; x_ < (count); ++x_) \\\n"
    "      for (int32_t c_ = 0; c_ < (channels); ++c_) \\\n"
    "        memcpy(dst_ + ((size_t)x_ * (channels) + c_) * (bytes), \\\n"
    "               src_ + (((size_t)c_ * (height) + (row)) * (width) + (col) + x_) * (bytes), (bytes)); \\\n"
    "  } while (0)\n"
    "#endif\n"
    "#ifndef TA_INPUT_NCHW_QUANTIZED_PIXELS\n"
    "/* The same of float NCHW input `index`, transposed to NHWC and quantized. */\n"
    "#define TA_INPUT_NCHW_QUANTIZED_PIXELS(index, dst, row, col, count, channels, height, width, scale, zero_point) \\\n"
    "  do { \\\n"
    "    const float *src_ = (const float *)input##index; \\\n"
    "    int8_t *dst_ = (int8_t *)(dst); \\\n"
    "    for (int32_t x_ = 0; x_ < (count); ++x_) \\\n"
    "      for (int32_t c_ = 0; c_ < (channels); ++c_) \\\n"
    "        ta_quantize_f32_s8(src_ + ((size_t)c_ * (height) + (row)) * (width) + (col) + x_, \\\n"
    "                           dst_ + (size_t)x_ * (channels) + c_, 1, (scale), (zero_point)); \\\n"
    "  } while (0)\n"
    "#endif\n";

// The tiled plan's ops into `program`, every planned buffer where `context` puts it.
Program lower_tiled_calls(const graph::Graph& graph, const tiling::TiledPlan& tiled, const LoweringContext& context,
                          Program program) {
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
  for (int32_t t : graph.inputs) {
    program.inputs.push_back(model_io(context, t));
    for (const tiling::RowStream& stream : tiled.streams)
      for (const tiling::Ring& ring : stream.rings) program.inputs.back().streamed |= ring.tensor == t || ring.source == t;
    for (const tiling::PatchRun& run : tiled.patch_runs)
      for (const auto& b : run.buffers) program.inputs.back().streamed |= b.tensor == t;
  }
  for (int32_t t : graph.outputs) program.outputs.push_back(model_io(context, t));
  for (int32_t op_index : tiled.plan.liveness.order) {
    const graph::Op& op = graph.ops[op_index];
    if (graph::is_view_op(op.opcode) || op.elided) continue;  // no code: views and zero-copy slices
    const int32_t s = segment_of[op_index];
    if (s < 0) {
      program.calls.push_back(lower_call(context, op));
      continue;
    }
    const std::vector<int32_t>& ops = tiled.segments[s].ops;
    if (op_index != ops.front()) continue;
    std::vector<KernelCall> lowered;
    const bool rows = tiled.segments[s].mode == tiling::Mode::Rows;
    for (int32_t index : ops) {  // an input transpose is the segment's load: no call, no data
      const graph::Op& segment_op = graph.ops[index];
      lowered.push_back(tiling::is_input_transpose(graph, segment_op) ? start_call(plain_context, segment_op, "")
                                                                      : lower_call(plain_context, segment_op));
      if (!rows || tiled.streams[s].column_strips > 1)  // regions: their pads shifted
        lowered.back().variants =
            op_params::region_kernel_variants(graph, segment_op, plain_context.weight_layout(segment_op));
    }
    const std::string table = "seg" + std::to_string(ops.front()) + (rows ? "_steps" : "_regions");
    const std::string loop = rows ? tiled::row_stream_loop(graph, tiled.streams[s], lowered, context, table)
                                  : tiled::patch_loop(graph, tiled.patch_runs[s], lowered, context, table);
    for (KernelCall& call : lowered) {  // constants and params only; the loop makes the calls
      call.outputs.clear();
      call.call.clear();
    }
    KernelCall& last = lowered.back();
    last.arrays.push_back(rows ? tiled::row_stream_table(tiled.streams[s], table) : tiled::int16_table(table, tiled.patch_runs[s].regions));
    if (rows && tiled.streams[s].column_strips > 1) last.arrays.push_back(tiled::row_stream_columns(tiled.streams[s], table));
    last.call = std::string(kRingHelpers) + kInputRows + loop;
    const std::vector<int32_t> outputs =
        rows ? tiled.streams[s].full_outputs : std::vector<int32_t>{tiled.patch_runs[s].full_output};
    for (int32_t t : outputs) last.outputs.push_back(context.tensor(t));
    program.calls.insert(program.calls.end(), lowered.begin(), lowered.end());
  }
  return program;
}

}  // namespace

Program lower_tiled_program(const graph::Graph& graph, const tiling::TiledPlan& tiled, const std::string& name) {
  Program program;
  program.name = name;
  program.arena_bytes = tiled.plan.peak_bytes;
  return lower_tiled_calls(graph, tiled, LoweringContext(graph, tiled.plan), std::move(program));
}

Program lower_tiled_program(const graph::Graph& graph, const tiling::TiledPlan& tiled, const std::string& name,
                            const std::vector<allocation::Memory>& memories,
                            const allocation::HierarchySolution& placement) {
  MemoryArenas placed = memory_arenas(tiled.plan, name, memories, placement);
  Program program = program_with_arenas(name, placed.arenas);
  return lower_tiled_calls(graph, tiled, LoweringContext(graph, tiled.plan, std::move(placed.locations)),
                           std::move(program));
}

}  // namespace tinyarena::codegen
