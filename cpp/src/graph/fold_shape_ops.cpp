#include "tinyarena/graph/fold_shape_ops.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>

#include "tinyarena/graph/slicing.h"

namespace tinyarena::graph {
namespace {

constexpr int32_t kConcatenation = 2, kReshape = 22, kStridedSlice = 45, kShape = 77, kPack = 83, kFill = 94;

constexpr int64_t kMaxFillBytes = int64_t{1} << 20;  // a larger FILL stays an op (and a clear error later)

bool is_integer(DType dtype) { return dtype == DType::Int32 || dtype == DType::Int64; }

// The bytes of a folded output, or empty when the op cannot fold.
using Bytes = std::vector<uint8_t>;

// An integer vector as `dtype` (Int32 or Int64) bytes.
Bytes integer_bytes(const std::vector<int64_t>& values, DType dtype) {
  const size_t width = dtype == DType::Int64 ? 8 : 4;
  Bytes bytes(values.size() * width);
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t v64 = values[i];
    const int32_t v32 = static_cast<int32_t>(values[i]);
    std::memcpy(bytes.data() + i * width, width == 8 ? static_cast<const void*>(&v64) : &v32, width);
  }
  return bytes;
}

// The values of a constant Int32 / Int64 tensor (empty for other types).
std::vector<int64_t> integer_values(const Tensor& t, const Bytes& model) {
  std::vector<int64_t> values;
  if (!t.is_constant() || !is_integer(t.dtype)) return values;
  const size_t width = t.dtype == DType::Int64 ? 8 : 4;
  if (t.data->size < static_cast<size_t>(t.element_count) * width) return values;
  for (int64_t i = 0; i < t.element_count; ++i) {
    int64_t v64 = 0;
    int32_t v32 = 0;
    std::memcpy(width == 8 ? static_cast<void*>(&v64) : &v32, model.data() + t.data->offset + i * width, width);
    values.push_back(width == 8 ? v64 : v32);
  }
  return values;
}

Bytes fold_shape(const Graph& graph, const Op& op) {
  const Tensor* in = graph.input(op, 0);
  const Tensor* out = graph.output(op, 0);
  if (!in || !out || (out->dtype != DType::Int32 && out->dtype != DType::Int64)) return {};
  if (out->element_count != static_cast<int64_t>(in->shape.size())) return {};
  return integer_bytes(std::vector<int64_t>(in->shape.begin(), in->shape.end()), out->dtype);
}

// The constant integer values of input `position` (nullopt when absent or not constant).
std::optional<std::vector<int64_t>> constant_integers(const Graph& graph, const Op& op, size_t position,
                                                      const Bytes& model) {
  const Tensor* t = graph.input(op, position);
  if (!t || !t->is_constant() || !is_integer(t->dtype)) return std::nullopt;
  std::vector<int64_t> values = integer_values(*t, model);
  if (static_cast<int64_t>(values.size()) != t->element_count) return std::nullopt;
  return values;
}

// STRIDED_SLICE of a constant integer vector.
Bytes fold_vector_slice(const Graph& graph, const Op& op, const Bytes& model) {
  const Tensor* in = graph.input(op, 0);
  const Tensor* out = graph.output(op, 0);
  const auto values = constant_integers(graph, op, 0, model), begin = constant_integers(graph, op, 1, model),
             end = constant_integers(graph, op, 2, model), strides = constant_integers(graph, op, 3, model);
  const OpOptions& o = op.options;
  if (!values || !begin || !end || !strides || in->shape.size() != 1 || begin->size() != 1 || end->size() != 1 ||
      strides->size() != 1 || (*strides)[0] == 0 || o.ellipsis_mask || o.new_axis_mask || o.slice_offset ||
      out->dtype != in->dtype)
    return {};
  const int32_t stride = static_cast<int32_t>((*strides)[0]);
  const SliceAxis axis = slice_axis(static_cast<int32_t>((*begin)[0]), static_cast<int32_t>((*end)[0]), stride,
                                    in->shape[0], o.begin_mask & 1, o.end_mask & 1, o.shrink_axis_mask & 1);
  std::vector<int64_t> kept;
  for (int32_t i = 0; i < axis.count; ++i) kept.push_back((*values)[axis.start + static_cast<int64_t>(i) * stride]);
  if (static_cast<int64_t>(kept.size()) != out->element_count || kept.empty()) return {};
  return integer_bytes(kept, out->dtype);
}

// PACK along axis 0, or CONCATENATION of vectors, of constant integers: the inputs' values in order.
Bytes fold_vector_join(const Graph& graph, const Op& op, const Bytes& model) {
  const Tensor* out = graph.output(op, 0);
  const bool pack = op.opcode == kPack;
  if (op.options.axis != 0 || (!pack && out->shape.size() != 1) || op.options.activation != Activation::None)
    return {};
  std::vector<int64_t> joined;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const auto values = constant_integers(graph, op, i, model);
    if (!values || graph.input(op, i)->dtype != out->dtype) return {};
    joined.insert(joined.end(), values->begin(), values->end());
  }
  if (static_cast<int64_t>(joined.size()) != out->element_count || joined.empty()) return {};
  return integer_bytes(joined, out->dtype);
}

Bytes fold_fill(const Graph& graph, const Op& op, const Bytes& model) {
  const Tensor* dims = graph.input(op, 0);
  const Tensor* value = graph.input(op, 1);
  const Tensor* out = graph.output(op, 0);
  if (!dims || !value || !out || !value->is_constant() || value->element_count != 1 || value->dtype != out->dtype)
    return {};
  const std::vector<int64_t> shape = integer_values(*dims, model);
  if (!dims->is_constant() || !std::equal(shape.begin(), shape.end(), out->shape.begin(), out->shape.end())) return {};
  const std::optional<int64_t> width = dtype_bytes(value->dtype, 1);
  if (!width || value->data->size < static_cast<size_t>(*width) || !out->byte_size || *out->byte_size > kMaxFillBytes)
    return {};
  Bytes bytes;
  const uint8_t* first = model.data() + value->data->offset;
  for (int64_t i = 0; i < out->element_count; ++i) bytes.insert(bytes.end(), first, first + *width);
  return bytes;
}

// The output shape a RESHAPE computes from its constant shape input (one -1 resolved from the
// input's element count), or nullopt when the input is absent, not constant or does not fit.
std::optional<std::vector<int32_t>> reshape_target(const Graph& graph, const Op& op, const Bytes& model) {
  const Tensor* in = graph.input(op, 0);
  const auto values = constant_integers(graph, op, 1, model);
  if (!in || !values) return std::nullopt;
  std::vector<int32_t> shape;
  int64_t known = 1;
  std::optional<size_t> free_dim;
  for (size_t d = 0; d < values->size(); ++d) {
    const int64_t v = (*values)[d];
    if (v == -1 && !free_dim) free_dim = d;
    else if (v < 0 || v > INT32_MAX) return std::nullopt;
    else known *= v;
    shape.push_back(static_cast<int32_t>(std::max<int64_t>(v, 0)));
  }
  if (free_dim) {
    if (known == 0 || in->element_count % known != 0 || in->element_count / known > INT32_MAX) return std::nullopt;
    shape[*free_dim] = static_cast<int32_t>(in->element_count / known);
  } else if (known != in->element_count) {
    return std::nullopt;
  }
  return shape;
}

// A RESHAPE whose shape input is (now) constant gets the output shape that input gives: a file
// made under a free batch stores the converter's guess for dimensions it computed at run time
// (Keras 3 UpSampling2D's [1, 1, 10, 32] for [1, 8, 10, 32]); TFLite's Prepare uses the values.
void resolve_reshape_output(Graph& graph, const Op& op, const Bytes& model) {
  if (op.opcode != kReshape || op.outputs.size() != 1 || op.outputs[0] < 0) return;
  const auto shape = reshape_target(graph, op, model);
  Tensor& out = graph.tensors[op.outputs[0]];
  if (!shape || *shape == out.shape) return;
  out.shape = *shape;
  out.element_count = graph.input(op, 0)->element_count;
  out.byte_size = dtype_bytes(out.dtype, out.element_count);
}

}  // namespace

Graph fold_shape_ops(Graph graph) {
  if (std::none_of(graph.ops.begin(), graph.ops.end(), [](const Op& op) { return op.opcode == kShape; }) &&
      std::none_of(graph.ops.begin(), graph.ops.end(), [](const Op& op) { return op.opcode == kFill; }))
    return graph;
  Bytes model = *graph.model_bytes;
  std::vector<Op> kept;
  for (Op& op : graph.ops) {
    const bool writes_model_output = std::any_of(op.outputs.begin(), op.outputs.end(), [&](int32_t t) {
      return std::find(graph.outputs.begin(), graph.outputs.end(), t) != graph.outputs.end();
    });
    Bytes folded;
    if (op.outputs.size() == 1 && op.outputs[0] >= 0 && !writes_model_output) {
      const bool integer_out = is_integer(graph.tensors[op.outputs[0]].dtype);
      if (op.opcode == kShape) folded = fold_shape(graph, op);
      if (op.opcode == kFill) folded = fold_fill(graph, op, model);
      if (op.opcode == kStridedSlice && integer_out) folded = fold_vector_slice(graph, op, model);
      if ((op.opcode == kPack || op.opcode == kConcatenation) && integer_out)
        folded = fold_vector_join(graph, op, model);
    }
    if (folded.empty()) {
      resolve_reshape_output(graph, op, model);
      op.index = static_cast<int32_t>(kept.size());
      kept.push_back(std::move(op));
      continue;
    }
    model.resize((model.size() + 15) / 16 * 16);  // constants stay 16-byte aligned
    graph.tensors[op.outputs[0]].data = DataRef{model.size(), folded.size()};
    model.insert(model.end(), folded.begin(), folded.end());
  }
  graph.ops = std::move(kept);
  graph.model_bytes = std::make_shared<const std::vector<uint8_t>>(std::move(model));
  return link_graph(std::move(graph));
}

}  // namespace tinyarena::graph
