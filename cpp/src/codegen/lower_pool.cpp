// AVERAGE_POOL_2D and MAX_POOL_2D -> ta_avg_pool_s8 / ta_max_pool_s8.
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/codegen/quantization.h"
#include "tinyarena/common/errors.h"

namespace tinyarena::codegen {
namespace {

constexpr int32_t kAveragePool = 1, kMaxPool = 17;

KernelCall lower_pool(const LoweringContext& context, const graph::Op& op, const char* kernel) {
  const graph::Graph& g = context.graph();
  const graph::Tensor* in = g.input(op, 0);
  const graph::Tensor* out = g.output(op, 0);
  if (!in || !out || in->shape.size() != 4 || out->shape.size() != 4)
    throw UnsupportedError("op " + std::to_string(op.index) + " (" + op.type + ") needs 4-D input and output");
  const auto& o = op.options;
  const AxisPadding ph = compute_padding(in->shape[1], o.filter_h, o.stride_h, 1, o.padding);
  const AxisPadding pw = compute_padding(in->shape[2], o.filter_w, o.stride_w, 1, o.padding);
  const auto [act_min, act_max] = activation_range(o.activation, scale_of(*out), zero_point_of(*out));
  KernelCall call = start_call(context, op, "pooling.c");
  call.params_type = "ta_pool_params";
  call.params = Fields()
                    .add("in_h", in->shape[1]).add("in_w", in->shape[2]).add("channels", in->shape[3])
                    .add("out_h", out->shape[1]).add("out_w", out->shape[2])
                    .add("filter_h", o.filter_h).add("filter_w", o.filter_w)
                    .add("stride_h", o.stride_h).add("stride_w", o.stride_w)
                    .add("pad_top", ph.before).add("pad_left", pw.before)
                    .add("pad_bottom", ph.after).add("pad_right", pw.after)
                    .add("act_min", act_min).add("act_max", act_max)
                    .take();
  const int64_t in_image = int64_t{in->shape[1]} * in->shape[2] * in->shape[3];
  const int64_t out_image = int64_t{out->shape[1]} * out->shape[2] * out->shape[3];
  call.call = "for (int b = 0; b < " + std::to_string(in->shape[0]) + "; ++b)\n  " + kernel + "(&op" +
              std::to_string(op.index) + "_params, " + context.address(in->index) + " + b * " +
              std::to_string(in_image) + ", " + context.address(out->index) + " + b * " + std::to_string(out_image) +
              ", 0, " + std::to_string(out->shape[1]) + ");";
  return call;
}

KernelCall lower_average_pool(const LoweringContext& context, const graph::Op& op) {
  return lower_pool(context, op, "ta_avg_pool_s8");
}

KernelCall lower_max_pool(const LoweringContext& context, const graph::Op& op) {
  return lower_pool(context, op, "ta_max_pool_s8");
}

}  // namespace

std::vector<OpLowering> pool_lowerings() {
  return {{kAveragePool, "AVERAGE_POOL_2D", lower_average_pool}, {kMaxPool, "MAX_POOL_2D", lower_max_pool}};
}

}  // namespace tinyarena::codegen
