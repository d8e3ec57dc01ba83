#include "tinyarena/liveness/scratch.h"

namespace tinyarena::liveness {
namespace {

constexpr int32_t kConv2D = 3;
constexpr int64_t kInt16Bytes = 2, kIm2colColumns = 2;

}  // namespace

int64_t kernel_scratch_bytes(const graph::Graph& graph, const graph::Op& op) {
  if (op.opcode != kConv2D) return 0;
  const graph::Tensor* weights = graph.input(op, 1);
  if (!weights || weights->shape.size() != 4) return 0;
  const int64_t kh = weights->shape[1], kw = weights->shape[2], in_c = weights->shape[3];
  const bool pointwise = kh == 1 && kw == 1 && op.options.stride_h == 1 && op.options.stride_w == 1;
  return pointwise ? 0 : kIm2colColumns * kh * kw * in_c * kInt16Bytes;
}

int64_t inplace_depthwise_scratch_bytes(const graph::Graph& graph, const graph::Op& op) {
  const graph::Tensor* input = graph.input(op, 0);
  if (!input || input->shape.size() != 4) return 0;
  return static_cast<int64_t>(input->shape[1]) * input->shape[2];
}

}  // namespace tinyarena::liveness
