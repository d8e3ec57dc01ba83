// Row-streamed segments: a loop replaying the segment's fixed steps (a
// constant table) -- run an op on rows [y0, y1), load input rows, shift a
// ring -- with kernels addressed through virtual row-0 bases into the rings.
#include <algorithm>
#include <sstream>
#include <utility>

#include "tiled_parts.h"
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::codegen::tiled {
namespace {

namespace op_code = op_params::opcode;
using tiling::RowStream;
using tiling::StepKind;

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
  std::string state(int32_t op) const { return tiled_.state_address(op); }
  std::string ring_base(int32_t r) const {
    const TensorRef ring = tiled_.tensor(stream_.rings[r].tensor);
    return "(" + ring.arena + " + " + std::to_string(ring.offset) + ")";
  }

 private:
  const LoweringContext& tiled_;
  const RowStream& stream_;
};

// The tensors of one call in a column strip: rows [y0, y1) of the called op's output, every
// tensor's columns from the strip's table `C` (see RowStream::strip_columns). A ring holds its
// strip's columns from its first; a whole tensor keeps its full layout.
class StripAddresses : public RegionAddresses {
 public:
  StripAddresses(const graph::Graph& graph, const LoweringContext& tiled, const RowStream& stream)
      : RegionAddresses(graph, tiled), stream_(stream), ring_(tiled, stream) {}

  std::string region(int32_t t, int k) const override {
    if (k < 2) return k == 0 ? "y0" : "y1";
    const auto i = std::find(stream_.strip_tensors.begin(), stream_.strip_tensors.end(), t) - stream_.strip_tensors.begin();
    return "C[" + std::to_string(2 * i + (k - 2)) + "]";
  }
  std::string stride(int32_t t) const override {
    const int32_t r = stream_.ring_of(t);
    return std::to_string(r >= 0 ? stream_.rings[r].row_bytes : row_bytes(graph_.tensors[t]));
  }
  std::string base(int32_t t) const override {
    const int32_t r = stream_.ring_of(t);
    if (r < 0) return tiled_.address(t);
    return "ta_region_base(" + ring_.ring_base(r) + ", lo[" + std::to_string(r) + "], " + region(t, 2) + ", " +
           stride(t) + ", " + channels(t) + ")";
  }

 private:
  const RowStream& stream_;
  SegmentAddresses ring_;
};

// Row `y0` of operand `position` of an elementwise op: row 0 plus y0 rows when the operand has rows.
std::string operand_rows(const graph::Graph& graph, const graph::Op& op, size_t position, const std::string& row0) {
  const graph::Tensor& t = *graph.input(op, position);
  check_operand(op, t);
  if (t.shape.size() != 4 || t.shape[1] == 1) return row0;
  return row0 + " + y0 * " + std::to_string(row_bytes(t));
}

// `(type *)` row y0 of `row0` (any pointer), moved in bytes.
std::string row_y0(const std::string& type, const std::string& row0, int64_t row_bytes) {
  return "(" + type + " *)((int8_t *)(" + row0 + ") + y0 * " + std::to_string(row_bytes) + ")";
}

// QUANTIZE float32 -> int8 or DEQUANTIZE int8 -> float32 of rows [y0, y1).
std::string conversion_call(const graph::Graph& graph, const graph::Op& op, const std::string& in,
                            const std::string& out) {
  const op_params::AffineQuantization q = op_params::float_conversion(graph, op);
  const graph::Tensor &input = *graph.input(op, 0), &output = *graph.output(op, 0);
  const bool quantize = op.opcode == op_code::kQuantize;
  const int64_t row_elements = int64_t{output.shape[2]} * output.shape[3];
  return call_text(quantize ? "ta_quantize_f32_s8" : "ta_dequantize_s8_f32",
                   {row_y0(quantize ? "const float" : "const int8_t", in, row_bytes(input)),
                    row_y0(quantize ? "int8_t" : "float", out, row_bytes(output)),
                    "(y1 - y0) * " + std::to_string(row_elements), float_literal(q.scale),
                    std::to_string(q.zero_point)});
}

// A row reduction (`kernel`_accumulate_s8 / _finish_s8): sums input rows [y0, y1) into the op's
// state; the last rows also write the result.
std::string reduction_call(const graph::Graph& graph, const graph::Op& op, const SegmentAddresses& at,
                           const std::string& kernel) {
  const std::string params = params_ref(op), sums = at.state(op.index);
  const std::string h = std::to_string(graph.input(op, 0)->shape[1]);
  return call_text(kernel + "_accumulate_s8", {params, at.row0(op.inputs[0]), "y0", "y1", sums}) + "\nif (y1 == " +
         h + ") " + call_text(kernel + "_finish_s8", {params, sums, at.row0(op.outputs[0])});
}

// PAD output rows [y0, y1) as a PAD of their own (params dims are NHWC, H at 1): the input rows
// they copy, the padding rows above and below them.
std::string pad_rows_call(const graph::Graph& graph, const graph::Op& op, const SegmentAddresses& at) {
  const graph::Tensor& in = *graph.input(op, 0);
  const std::string in_rb = std::to_string(row_bytes(in)), out_rb = std::to_string(row_bytes(*graph.output(op, 0)));
  return "{\n  ta_pad_params p = op" + std::to_string(op.index) +
         "_params;\n  const int32_t top = p.before[1];\n  const int32_t r0 = ta_max32(y0 - top, 0), r1 = ta_min32(y1 - top, " +
         std::to_string(in.shape[1]) + ");\n  p.in_shape[1] = ta_max32(r1 - r0, 0);\n  p.before[1] = ta_min32(ta_max32(top - y0, 0), y1 - y0);\n" +
         "  p.after[1] = y1 - y0 - p.before[1] - p.in_shape[1];\n  " +
         call_text("ta_pad_s8", {"&p", at.row0(op.inputs[0]) + " + r0 * " + in_rb,
                                 at.row0(op.outputs[0]) + " + y0 * " + out_rb}) + "\n}";
}

// The statement computing output rows [y0, y1) of a segment op.
std::string stripe_call(const graph::Graph& graph, const graph::Op& op, const KernelCall& lowered,
                        const SegmentAddresses& at, const std::string& scratch) {
  const std::string params = params_ref(op);
  const std::string in = at.row0(op.inputs[0]);
  const std::string out = at.row0(op.outputs[0]);
  if (tiling::is_float_conversion(graph, op)) return conversion_call(graph, op, in, out);
  switch (op.opcode) {
    case op_code::kConv2D: return call_text(lowered.window_kernel, {params, in, out, "y0", "y1", scratch});
    case op_code::kDepthwiseConv2D: {
      // The rows as a small image of their own (row y0 at 0, the padding shifted), so the
      // kernel's scratch layout (sized by out_h) fits the stripe's scratch.
      const std::string rb = std::to_string(row_bytes(*graph.output(op, 0)));
      return "{\n  ta_dwconv_params p = op" + std::to_string(op.index) +
             "_params;\n  p.out_h = y1 - y0;\n  p.pad_top -= y0 * p.stride_h;\n  " +
             call_text("ta_depthwise_conv_s8", {"&p", in, out + " + y0 * " + rb, "0", "y1 - y0", scratch}) + "\n}";
    }
    case op_code::kPad:
    case op_code::kPadV2: return pad_rows_call(graph, op, at);
    case op_code::kMean: return reduction_call(graph, op, at, "ta_mean_hw");
    case op_code::kAveragePool2D:
      if (tiling::is_row_reduction(graph, op)) return reduction_call(graph, op, at, "ta_avg_pool_global");
      return call_text("ta_avg_pool_s8", {params, in, out, "y0", "y1"});
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

// What a ring's load runs on the way: a TRANSPOSE from NCHW, and ", scale, zero point" of a
// QUANTIZE of a float input (empty without one).
std::pair<bool, std::string> load_chain(const graph::Graph& graph, const tiling::Ring& ring) {
  bool transpose = false;
  std::string quantize;
  for (int32_t index : tiling::load_ops(graph, ring)) {
    const graph::Op& op = graph.ops[index];
    transpose = transpose || op.opcode == op_code::kTranspose;
    if (op.opcode != op_code::kQuantize) continue;
    const op_params::AffineQuantization q = op_params::float_conversion(graph, op);
    quantize = ", " + float_literal(q.scale) + ", " + std::to_string(q.zero_point);
  }
  return {transpose, quantize};
}

// The load of input rows [y0, y1) into `dst`, running the ring's boundary ops (a TRANSPOSE from NCHW,
// a QUANTIZE of a float input) on the way: one of the TA_INPUT_* macros.
std::string load_call(const graph::Graph& graph, const tiling::Ring& ring, int32_t input, const std::string& dst) {
  const std::string rows = std::to_string(input) + ", " + dst + ", y0, y1 - y0, ";
  if (ring.source < 0) return "TA_INPUT_ROWS(" + rows + std::to_string(ring.row_bytes) + ")";
  const auto [transpose, quantize] = load_chain(graph, ring);
  const graph::Tensor& in = graph.tensors[ring.source];
  if (!transpose) {  // a QUANTIZE alone: the row's elements
    return "TA_INPUT_QUANTIZED_ROWS(" + rows + std::to_string(int64_t{in.shape[2]} * in.shape[3]) + quantize + ")";
  }
  const std::string chw = std::to_string(in.shape[1]) + ", " + std::to_string(in.shape[2]) + ", " +
                          std::to_string(in.shape[3]);
  if (!quantize.empty()) return "TA_INPUT_NCHW_QUANTIZED_ROWS(" + rows + chw + quantize + ")";
  return "TA_INPUT_NCHW_ROWS(" + rows + chw + ", " + std::to_string(*graph::dtype_bytes(in.dtype, 1)) + ")";
}

// The load of columns [col, col + count) of input row y into `dst`, running the ring's boundary
// ops on the way (a column strip's load): one of the TA_INPUT_*PIXELS macros.
std::string load_pixels_call(const graph::Graph& graph, const tiling::Ring& ring, int32_t input,
                             const std::string& dst, const std::string& col, const std::string& count) {
  const std::string pixels = std::to_string(input) + ", " + dst + ", y, " + col + ", " + count + ", ";
  const graph::Tensor& out = graph.tensors[ring.tensor];
  const std::string channels = std::to_string(out.shape[3]);
  if (ring.source < 0) return "TA_INPUT_PIXELS(" + pixels + channels + ", " + std::to_string(row_bytes(out)) + ")";
  const auto [transpose, quantize] = load_chain(graph, ring);
  const std::string hw = std::to_string(out.shape[1]) + ", " + std::to_string(out.shape[2]);
  if (!transpose) return "TA_INPUT_QUANTIZED_PIXELS(" + pixels + channels + ", " + std::to_string(out.shape[2]) + quantize + ")";
  if (!quantize.empty()) return "TA_INPUT_NCHW_QUANTIZED_PIXELS(" + pixels + channels + ", " + hw + quantize + ")";
  const graph::Tensor& in = graph.tensors[ring.source];
  return "TA_INPUT_NCHW_PIXELS(" + pixels + channels + ", " + hw + ", " + std::to_string(*graph::dtype_bytes(in.dtype, 1)) + ")";
}

// The replay loop of one segment (once per column strip); its step table goes into `table`,
// the strips' columns into `table`_columns.
std::string loop_text(const graph::Graph& graph, const RowStream& stream, const std::vector<KernelCall>& lowered,
                         const LoweringContext& tiled, const std::string& table) {
  const SegmentAddresses at(tiled, stream);
  const StripAddresses strip_at(graph, tiled, stream);
  const bool strips = stream.column_strips > 1;
  const std::string scratch = tiled.scratch_address(stream.ops.front());
  std::ostringstream c;
  c << "{\n  /* row-streamed segment: ops " << stream.ops.front() << ".." << stream.ops.back() << ", "
    << stream.rings.size() << " rings, " << stream.steps.size() << " steps";
  if (strips) c << ", replayed on " << stream.column_strips << " column strips (shared columns recomputed)";
  c << " */\n";
  if (strips)
    c << "  for (int32_t strip = 0; strip < " << stream.column_strips << "; ++strip) {\n"
      << "  const int16_t *C = " << table << "_columns + " << 2 * stream.strip_tensors.size() << " * strip;\n";
  const size_t rings = stream.rings.size();  // a segment without rings keeps no held rows
  if (rings) c << "  int32_t lo[" << rings << "] = {0}, hi[" << rings << "] = {0};\n";
  c << "  for (int32_t i = 0; i < " << stream.steps.size() << "; ++i) {\n"
    << "    const int16_t *s = " << table << " + 4 * i;\n"
    << "    const int32_t y0 = s[2], y1 = s[3];\n"
    << "    (void)y1;\n"
    << "    switch (s[0]) {\n";
  std::vector<bool> loaded(graph.ops.size(), false);  // boundary ops a ring's load runs (below)
  for (const tiling::Ring& ring : stream.rings)
    for (int32_t op : tiling::load_ops(graph, ring)) loaded[op] = true;
  for (size_t k = 0; k < stream.ops.size(); ++k) {
    const graph::Op& op = graph.ops[stream.ops[k]];
    if (loaded[op.index]) continue;
    c << "      case " << k << ": /* op " << op.index << " " << op.type << " */\n";
    std::istringstream lines(strips ? region_call(graph, op, lowered[k], strip_at, scratch)
                                    : stripe_call(graph, op, lowered[k], at, scratch));
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
    const int32_t source = stream.rings[r].source;
    int32_t input = -1;
    for (size_t i = 0; i < graph.inputs.size(); ++i)
      if (graph.inputs[i] == (source >= 0 ? source : stream.rings[r].tensor)) input = static_cast<int32_t>(i);
    if (input < 0) continue;
    const std::string dst = base + " + (y0 - lo[" + std::to_string(r) + "]) * " + rb;
    c << "      case " << 2000 + r << ": /* input rows [y0, y1) of input" << input << " */\n";
    if (strips) {  // the strip's columns, row by row
      const int32_t t = stream.rings[r].tensor;
      c << "        for (int32_t y = y0; y < y1; ++y)\n          "
        << load_pixels_call(graph, stream.rings[r], input, strip_at.at(t, "y", strip_at.region(t, 2)),
                            strip_at.region(t, 2), strip_at.cols(t))
        << ";\n";
    } else {
      c << "        " << load_call(graph, stream.rings[r], input, dst) << ";\n";
    }
    c << "        hi[" << r << "] = y1;\n        break;\n";
  }
  c << "    }\n  }\n" << (strips ? "  }\n" : "") << "}";
  return c.str();
}
}  // namespace

std::string row_stream_loop(const graph::Graph& graph, const RowStream& stream, const std::vector<KernelCall>& lowered,
                            const LoweringContext& tiled, const std::string& table) {
  return loop_text(graph, stream, lowered, tiled, table);
}

// The step table: {kind code, 0, y0, y1} per step; kind code = op position,
// 1000 + ring (shift) or 2000 + ring (input rows).
ConstArray row_stream_columns(const RowStream& stream, const std::string& name) {
  return int16_table(name + "_columns", stream.strip_columns);
}

ConstArray row_stream_table(const RowStream& stream, const std::string& name) {
  std::vector<int32_t> values;
  for (const auto& step : stream.steps) {
    int32_t code = (step.kind == StepKind::Shift ? 1000 : 2000) + step.target;
    if (step.kind == StepKind::Run)
      code = static_cast<int32_t>(std::find(stream.ops.begin(), stream.ops.end(), step.target) - stream.ops.begin());
    values.insert(values.end(), {code, 0, step.begin, step.end});
  }
  return int16_table(name, values);
}
}  // namespace tinyarena::codegen::tiled
