// Patch segments: a loop over the patches; each op computes its region of
// the patch through a params copy whose padding fields shift the region to
// the origin (the kernels only ever test input bounds), reading and writing
// per-patch buffers or the whole tensors through virtual (0, 0) bases.
#include <algorithm>
#include <sstream>

#include "tiled_parts.h"
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::codegen::tiled {
namespace {

namespace op_code = op_params::opcode;

// One patch segment's tensors in the current patch. `R` points at the patch's regions (4
// values per tensor, see tiling::PatchRun::regions). A tensor with its own per-patch buffer holds
// exactly its region (rows of the region's width); a whole tensor keeps its full layout.
class PatchAddresses : public RegionAddresses {
 public:
  PatchAddresses(const graph::Graph& graph, const LoweringContext& tiled, const tiling::PatchRun& run)
      : RegionAddresses(graph, tiled), run_(run) {}

  std::string region(int32_t t, int k) const override { return "R[" + std::to_string(4 * local(t) + k) + "]"; }
  std::string stride(int32_t t) const override {
    return own(t) ? "(" + cols(t) + " * " + channels(t) + ")" : std::to_string(row_bytes(graph_.tensors[t]));
  }
  std::string base(int32_t t) const override {
    if (!own(t)) return tiled_.address(t);
    const TensorRef tensor = tiled_.tensor(t);
    return "ta_region_base(" + tensor.arena + " + " + std::to_string(tensor.offset) + ", " + region(t, 0) + ", " +
           region(t, 2) + ", " + stride(t) + ", " + channels(t) + ")";
  }

 private:
  bool own(int32_t t) const {
    for (const auto& b : run_.buffers)
      if (b.tensor == t) return true;
    return false;
  }
  int32_t local(int32_t t) const {
    return static_cast<int32_t>(std::find(run_.tensors.begin(), run_.tensors.end(), t) - run_.tensors.begin());
  }
  const tiling::PatchRun& run_;
};

}  // namespace

// The region as an image of its own: its rows and columns shifted into the padding fields (the
// kernels only ever test input bounds).
std::string region_call(const graph::Graph& graph, const graph::Op& op, const KernelCall& lowered,
                        const RegionAddresses& at, const std::string& scratch) {
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
      return window("ta_conv_params", call_text(lowered.window_kernel, {"&q", in_base, out_at, "0", "q.out_h", scratch}));
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
    std::istringstream lines(region_call(graph, op, lowered[k], at, tiled.scratch_address(op.index)));
    for (std::string line; std::getline(lines, line);) c << "    " << line << "\n";
  }
  c << "  }\n}";
  return c.str();
}
}  // namespace tinyarena::codegen::tiled
