// AVERAGE_POOL_2D / MAX_POOL_2D params (TFLite's pooling.cc Prepare:
// ComputePaddingHeightWidth, fused activation range of the output).
#include <algorithm>
#include <tuple>

#include "accumulators.h"
#include "tinyarena/op_params/op_checks.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::op_params {

using namespace detail;

PoolKernel pool_kernel(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor& in = int8_input(graph, op, 0, 4);
  const graph::Tensor& out = int8_output(graph, op, 0, 4);
  const graph::OpOptions& o = op.options;
  const Window win = window(op, in, o.filter_h, o.filter_w, 1, 1);
  require_shape(op, out, {in.shape[0], win.out_h, win.out_w, in.shape[3]}, "the output");
  PoolKernel k;
  ta_pool_params& p = k.params;
  fill_window(p, op, in, win);
  p.channels = in.shape[3];
  p.filter_h = o.filter_h;
  p.filter_w = o.filter_w;
  std::tie(p.act_min, p.act_max) = fused_activation_range(op, out);
  if (op.opcode == opcode::kAveragePool2D)  // sums the window's taps inside the input
    prove_int8_sum(op, std::min<int64_t>(o.filter_h, in.shape[1]) * std::min<int64_t>(o.filter_w, in.shape[2]),
                   "the window");
  k.images = in.shape[0];
  return k;
}

}  // namespace tinyarena::op_params
