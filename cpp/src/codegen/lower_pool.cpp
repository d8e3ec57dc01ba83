// AVERAGE_POOL_2D and MAX_POOL_2D -> ta_avg_pool_s8 / ta_max_pool_s8, one call per image.
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::codegen {
namespace {

KernelCall lower_pool(const LoweringContext& context, const graph::Op& op, const char* kernel) {
  const op_params::PoolKernel k = op_params::pool_kernel(context.graph(), op);
  const ta_pool_params& p = k.params;
  KernelCall call = start_call(context, op, "pooling.c");
  call.params_type = "ta_pool_params";
  Fields fields;
  add_window_fields(fields, p)
      .add("channels", p.channels).add("filter_h", p.filter_h).add("filter_w", p.filter_w)
      .add("act_min", p.act_min).add("act_max", p.act_max);
  add_output_stride(context, fields, op, k.images);
  call.params = fields.take();
  const int64_t in_image = int64_t{p.in_h} * p.in_w * p.channels;
  const int64_t out_image = int64_t{p.out_h} * p.out_w * p.channels;
  call.call = per_image_call(op, kernel, k.images, operand(context, call, op, 0), in_image,
                             context.address(op.outputs[0]), out_image, {"0", std::to_string(p.out_h)});
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
  return {{op_params::opcode::kAveragePool2D, "AVERAGE_POOL_2D", lower_average_pool},
          {op_params::opcode::kMaxPool2D, "MAX_POOL_2D", lower_max_pool}};
}

}  // namespace tinyarena::codegen
