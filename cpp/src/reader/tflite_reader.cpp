#include "tinyarena/reader/tflite_reader.h"

#include <fstream>
#include <iterator>

#include "tinyarena/common/errors.h"
#include "tinyarena/graph/fold_shape_ops.h"
#include "tinyarena/graph/op_names.h"
#include "tinyarena/reader/flatbuffer_view.h"

namespace tinyarena::reader {
namespace {

using graph::Activation;
using graph::DType;
using graph::Graph;
using graph::Op;
using graph::OpOptions;
using graph::Padding;
using graph::Tensor;

constexpr int kMaxRank = 16;
constexpr int64_t kMaxElements = int64_t{1} << 40;

// Field slots of the TFLite schema tables we read (schema.fbs, in field order).
namespace slot {
constexpr int kModelVersion = 0, kModelOpcodes = 1, kModelSubgraphs = 2, kModelDescription = 3,
              kModelBuffers = 4;
constexpr int kSubgraphTensors = 0, kSubgraphInputs = 1, kSubgraphOutputs = 2, kSubgraphOperators = 3;
constexpr int kTensorShape = 0, kTensorType = 1, kTensorBuffer = 2, kTensorName = 3,
              kTensorQuantization = 4, kTensorIsVariable = 5;
constexpr int kQuantScale = 2, kQuantZeroPoint = 3, kQuantAxis = 6;
constexpr int kOperatorOpcode = 0, kOperatorInputs = 1, kOperatorOutputs = 2,
              kOperatorOptionsType = 3, kOperatorOptions = 4, kOperatorIntermediates = 8;
constexpr int kOpcodeDeprecatedBuiltin = 0, kOpcodeCustom = 1, kOpcodeVersion = 2, kOpcodeBuiltin = 3;
constexpr int kBufferData = 0, kBufferOffset = 1;
}  // namespace slot

// BuiltinOptions union type codes.
namespace options_type {
constexpr uint8_t kConv2D = 1, kDepthwiseConv2D = 2, kPool2D = 5, kFullyConnected = 8, kSoftmax = 9,
                  kConcatenation = 10, kAdd = 11, kResizeBilinear = 15, kReshape = 17, kMul = 21,
                  kGather = 23, kReducer = 27, kSub = 28, kDiv = 29, kSqueeze = 30,
                  kStridedSlice = 32, kSplit = 35, kTransposeConv = 49, kPack = 59, kUnpack = 64,
                  kResizeNearestNeighbor = 74, kLeakyRelu = 75, kSplitV = 79,
                  kUnidirectionalSequenceLstm = 71;
}  // namespace options_type

struct Opcode {
  int32_t code = 0;
  std::string custom;
  int32_t version = 1;
};

Padding read_padding(const Table& t, int field) {
  const auto value = t.scalar<uint8_t>(field, 0);
  if (value > 1) throw ModelError("corrupt model: padding value " + std::to_string(value));
  return static_cast<Padding>(value);
}

Activation read_activation(const Table& t, int field) {
  const auto value = t.scalar<uint8_t>(field, 0);
  if (value > 5) throw ModelError("corrupt model: fused activation value " + std::to_string(value));
  return static_cast<Activation>(value);
}

int32_t read_positive(const Table& t, int field, const char* name) {
  const auto value = t.scalar<int32_t>(field, 1);
  if (value < 1) throw ModelError(std::string("invalid ") + name + " " + std::to_string(value));
  return value;
}

std::vector<int32_t> read_int_vector(const Table& t, int field, const char* what) {
  const Vector v = t.vector(field, 4, what);
  std::vector<int32_t> values(v.size());
  for (uint32_t i = 0; i < v.size(); ++i) values[i] = v.scalar<int32_t>(i);
  return values;
}

void read_window(const Table& t, OpOptions& o, int padding, int stride_w, int stride_h) {
  o.padding = read_padding(t, padding);
  o.stride_w = read_positive(t, stride_w, "stride_w");
  o.stride_h = read_positive(t, stride_h, "stride_h");
}

// Fills the options of one BuiltinOptions union member.
void read_options(uint8_t type, const Table& t, OpOptions& o) {
  namespace ot = options_type;
  switch (type) {
    case ot::kConv2D:
      read_window(t, o, 0, 1, 2);
      o.activation = read_activation(t, 3);
      o.dilation_w = read_positive(t, 4, "dilation_w");
      o.dilation_h = read_positive(t, 5, "dilation_h");
      break;
    case ot::kDepthwiseConv2D:
      read_window(t, o, 0, 1, 2);
      o.depth_multiplier = t.scalar<int32_t>(3, 1);
      o.activation = read_activation(t, 4);
      o.dilation_w = read_positive(t, 5, "dilation_w");
      o.dilation_h = read_positive(t, 6, "dilation_h");
      break;
    case ot::kPool2D:
      read_window(t, o, 0, 1, 2);
      o.filter_w = read_positive(t, 3, "filter_width");
      o.filter_h = read_positive(t, 4, "filter_height");
      o.activation = read_activation(t, 5);
      break;
    case ot::kTransposeConv:
      read_window(t, o, 0, 1, 2);
      o.activation = read_activation(t, 3);
      break;
    case ot::kFullyConnected:
      o.activation = read_activation(t, 0);
      o.keep_num_dims = t.scalar<uint8_t>(2, 0) != 0;
      break;
    case ot::kSoftmax: o.beta = t.scalar<float>(0, 1.0f); break;
    case ot::kConcatenation:
      o.axis = t.scalar<int32_t>(0, 0);
      o.activation = read_activation(t, 1);
      break;
    case ot::kAdd: case ot::kMul: case ot::kSub: case ot::kDiv:
      o.activation = read_activation(t, 0);
      break;
    case ot::kReshape: o.new_shape = read_int_vector(t, 0, "reshape new_shape"); break;
    case ot::kSqueeze: o.squeeze_dims = read_int_vector(t, 0, "squeeze_dims"); break;
    case ot::kReducer: o.keep_dims = t.scalar<uint8_t>(0, 0) != 0; break;
    case ot::kResizeNearestNeighbor:
      o.align_corners = t.scalar<uint8_t>(0, 0) != 0;
      o.half_pixel_centers = t.scalar<uint8_t>(1, 0) != 0;
      break;
    case ot::kResizeBilinear:
      o.align_corners = t.scalar<uint8_t>(2, 0) != 0;
      o.half_pixel_centers = t.scalar<uint8_t>(3, 0) != 0;
      break;
    case ot::kStridedSlice:
      o.begin_mask = t.scalar<int32_t>(0, 0);
      o.end_mask = t.scalar<int32_t>(1, 0);
      o.ellipsis_mask = t.scalar<int32_t>(2, 0);
      o.new_axis_mask = t.scalar<int32_t>(3, 0);
      o.shrink_axis_mask = t.scalar<int32_t>(4, 0);
      o.slice_offset = t.scalar<uint8_t>(5, 0) != 0;
      break;
    case ot::kSplit: case ot::kSplitV: o.num_splits = t.scalar<int32_t>(0, 0); break;
    case ot::kGather:
      o.axis = t.scalar<int32_t>(0, 0);
      o.batch_dims = t.scalar<int32_t>(1, 0);
      break;
    case ot::kPack: case ot::kUnpack: o.axis = t.scalar<int32_t>(1, 0); break;
    case ot::kLeakyRelu: o.alpha = t.scalar<float>(0, 0.0f); break;
    case ot::kUnidirectionalSequenceLstm:
      o.activation = read_activation(t, 0);
      o.cell_clip = t.scalar<float>(1, 0.0f);
      o.proj_clip = t.scalar<float>(2, 0.0f);
      o.time_major = t.scalar<uint8_t>(3, 0) != 0;
      o.asymmetric_quantize_inputs = t.scalar<uint8_t>(4, 0) != 0;
      o.diagonal_recurrent_tensors = t.scalar<uint8_t>(5, 0) != 0;
      break;
    default: break;  // options this compiler does not use
  }
}

std::vector<Opcode> read_opcodes(const Table& model) {
  const Vector codes = model.vector(slot::kModelOpcodes, 4, "operator_codes");
  std::vector<Opcode> opcodes(codes.size());
  for (uint32_t i = 0; i < codes.size(); ++i) {
    const Table code = codes.table(i);
    const int32_t deprecated = code.scalar<int8_t>(slot::kOpcodeDeprecatedBuiltin, 0);
    const int32_t builtin = code.scalar<int32_t>(slot::kOpcodeBuiltin, 0);
    opcodes[i].code = std::max(deprecated, builtin);
    opcodes[i].custom = code.string(slot::kOpcodeCustom, "custom_code");
    opcodes[i].version = code.scalar<int32_t>(slot::kOpcodeVersion, 1);
  }
  return opcodes;
}

graph::Quantization read_quantization(const Table& t, const Tensor& tensor) {
  graph::Quantization q;
  const Vector scale = t.vector(slot::kQuantScale, 4, "quantization scale");
  const Vector zero_point = t.vector(slot::kQuantZeroPoint, 8, "quantization zero_point");
  for (uint32_t i = 0; i < scale.size(); ++i) q.scale.push_back(scale.scalar<float>(i));
  for (uint32_t i = 0; i < zero_point.size(); ++i) q.zero_point.push_back(zero_point.scalar<int64_t>(i));
  q.axis = t.scalar<int32_t>(slot::kQuantAxis, 0);
  if (!q.scale.empty() && !q.zero_point.empty() && q.scale.size() != q.zero_point.size())
    throw ModelError("tensor '" + tensor.name + "' has " + std::to_string(q.scale.size()) +
                     " scales but " + std::to_string(q.zero_point.size()) + " zero points");
  // quantized_dimension is not checked against the shape: real converters
  // leave stale values on biases (person_detect has axis 3 on a 1-D bias).
  return q;
}

void read_shape(const Table& t, Tensor& tensor) {
  tensor.shape = read_int_vector(t, slot::kTensorShape, "tensor shape");
  if (tensor.shape.size() > kMaxRank)
    throw ModelError("tensor '" + tensor.name + "' has rank " + std::to_string(tensor.shape.size()));
  tensor.element_count = 1;
  for (int32_t dim : tensor.shape) {
    if (dim < 0)
      throw ModelError("tensor '" + tensor.name + "' has dynamic or negative dimension " +
                       std::to_string(dim));
    // Checked before multiplying, so the count never exceeds kMaxElements (no signed overflow).
    if (dim != 0 && tensor.element_count > kMaxElements / dim)
      throw ModelError("tensor '" + tensor.name + "' is implausibly large");
    tensor.element_count *= dim;
  }
}

// The constant data of buffer `index`, or nullopt for an empty buffer.
std::optional<graph::DataRef> read_buffer(const Vector& buffers, uint32_t index, const Tensor& tensor) {
  if (index == 0) return std::nullopt;
  if (index >= buffers.size())
    throw ModelError("tensor '" + tensor.name + "' refers to buffer " + std::to_string(index) +
                     " of " + std::to_string(buffers.size()));
  const Table buffer = buffers.table(index);
  if (buffer.scalar<uint64_t>(slot::kBufferOffset, 0) > 1)
    throw ModelError("tensor '" + tensor.name + "' keeps its data outside the flatbuffer (files over 2 GB are not supported)");
  const Vector data = buffer.vector(slot::kBufferData, 1, "buffer data");
  if (data.size() == 0) return std::nullopt;
  return graph::DataRef{data.data_position(), data.size()};
}

Tensor read_tensor(const Table& t, int32_t index, const Vector& buffers) {
  Tensor tensor;
  tensor.index = index;
  tensor.name = t.string(slot::kTensorName, "tensor name");
  const auto type = t.scalar<int8_t>(slot::kTensorType, 0);
  if (type < 0 || type > graph::kMaxDTypeCode)
    throw ModelError("tensor '" + tensor.name + "' has unknown type " + std::to_string(type));
  tensor.dtype = static_cast<DType>(type);
  read_shape(t, tensor);
  tensor.byte_size = graph::dtype_bytes(tensor.dtype, tensor.element_count);
  if (auto q = t.table(slot::kTensorQuantization, "quantization")) tensor.quantization = read_quantization(*q, tensor);
  tensor.is_variable = t.scalar<uint8_t>(slot::kTensorIsVariable, 0) != 0;
  tensor.data = read_buffer(buffers, t.scalar<uint32_t>(slot::kTensorBuffer, 0), tensor);
  if (tensor.data && tensor.byte_size && static_cast<int64_t>(tensor.data->size) < *tensor.byte_size)
    throw ModelError("constant tensor '" + tensor.name + "' has " + std::to_string(tensor.data->size) +
                     " bytes of data but its shape needs " + std::to_string(*tensor.byte_size));
  return tensor;
}

Op read_operator(const Table& t, int32_t index, const std::vector<Opcode>& opcodes) {
  Op op;
  op.index = index;
  const uint32_t opcode_index = t.scalar<uint32_t>(slot::kOperatorOpcode, 0);
  if (opcode_index >= opcodes.size())
    throw ModelError("op " + std::to_string(index) + " refers to operator code " +
                     std::to_string(opcode_index) + " of " + std::to_string(opcodes.size()));
  const Opcode& code = opcodes[opcode_index];
  op.opcode = code.code;
  op.version = code.version;
  op.type = code.code == graph::kCustomOpcode && !code.custom.empty() ? code.custom
                                                                      : graph::builtin_op_name(code.code);
  op.inputs = read_int_vector(t, slot::kOperatorInputs, "operator inputs");
  op.outputs = read_int_vector(t, slot::kOperatorOutputs, "operator outputs");
  op.intermediates = read_int_vector(t, slot::kOperatorIntermediates, "operator intermediates");
  if (auto options = t.table(slot::kOperatorOptions, "builtin options"))
    read_options(t.scalar<uint8_t>(slot::kOperatorOptionsType, 0), *options, op.options);
  return op;
}

Graph read_model(const FlatbufferView& view) {
  if (view.size() < 8) throw ModelError("not a TFLite model: file has only " + std::to_string(view.size()) + " bytes");
  if (std::memcmp(view.data() + 4, "TFL3", 4) != 0)
    throw ModelError("not a TFLite model: file identifier is not 'TFL3'");
  const Table model(view, view.follow(0, "model root"), "model");
  Graph graph;
  graph.schema_version = model.scalar<uint32_t>(slot::kModelVersion, 0);
  graph.description = model.string(slot::kModelDescription, "model description");
  const auto opcodes = read_opcodes(model);
  const Vector buffers = model.vector(slot::kModelBuffers, 4, "buffers");
  const Vector subgraphs = model.vector(slot::kModelSubgraphs, 4, "subgraphs");
  if (subgraphs.size() == 0) throw ModelError("model has no subgraph");
  graph.subgraph_count = static_cast<int32_t>(subgraphs.size());
  const Table subgraph = subgraphs.table(0);
  const Vector tensors = subgraph.vector(slot::kSubgraphTensors, 4, "tensors");
  for (uint32_t i = 0; i < tensors.size(); ++i)
    graph.tensors.push_back(read_tensor(tensors.table(i), static_cast<int32_t>(i), buffers));
  const Vector operators = subgraph.vector(slot::kSubgraphOperators, 4, "operators");
  for (uint32_t i = 0; i < operators.size(); ++i)
    graph.ops.push_back(read_operator(operators.table(i), static_cast<int32_t>(i), opcodes));
  graph.inputs = read_int_vector(subgraph, slot::kSubgraphInputs, "subgraph inputs");
  graph.outputs = read_int_vector(subgraph, slot::kSubgraphOutputs, "subgraph outputs");
  return graph;
}

}  // namespace

Graph read_tflite(std::vector<uint8_t> bytes) {
  auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  const FlatbufferView view(owned->data(), owned->size());
  Graph graph = read_model(view);
  graph.model_bytes = std::move(owned);
  return graph::fold_shape_ops(graph::link_graph(std::move(graph)));
}

Graph read_tflite_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ModelError("cannot open model file '" + path + "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return read_tflite(std::move(bytes));
}

}  // namespace tinyarena::reader
