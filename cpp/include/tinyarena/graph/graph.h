// The graph IR: tensors and operators of one TFLite subgraph, ops in
// execution order, constants (flash) kept apart from activations (SRAM).
// Plain data; stages read it and return new values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tinyarena::graph {

// TFLite TensorType codes.
enum class DType : uint8_t {
  Float32 = 0, Float16 = 1, Int32 = 2, UInt8 = 3, Int64 = 4, String = 5, Bool = 6, Int16 = 7,
  Complex64 = 8, Int8 = 9, Float64 = 10, Complex128 = 11, UInt64 = 12, Resource = 13,
  Variant = 14, UInt32 = 15, UInt16 = 16, Int4 = 17, BFloat16 = 18, Int2 = 19, UInt4 = 20,
  Float8E4M3FN = 21, Float8E5M2 = 22,
};
constexpr int kMaxDTypeCode = 22;

const char* dtype_name(DType dtype);
// Bytes taken by `elements` values of `dtype` (sub-byte types packed);
// nullopt for types without a fixed size (string, resource, variant).
std::optional<int64_t> dtype_bytes(DType dtype, int64_t elements);

struct Quantization {
  std::vector<float> scale;         // one per tensor, or one per channel
  std::vector<int64_t> zero_point;  // same count as scale
  int32_t axis = 0;                 // quantized dimension when per-channel
};

// Where a constant's bytes sit inside the model buffer.
struct DataRef {
  size_t offset = 0;
  size_t size = 0;
};

// A tensor kept inside another tensor's memory without a copy (a slice of a
// concatenation's output or of a split's input), set by the transforms stage.
struct Placement {
  int32_t base = -1;       // the tensor whose memory holds this one
  int64_t offset = 0;      // bytes from the base's first byte
  int32_t pix_stride = 0;  // elements from one pixel to the next (a channel slice); 0 = dense
};

struct Tensor {
  int32_t index = 0;
  std::string name;
  std::vector<int32_t> shape;
  DType dtype = DType::Float32;
  Quantization quantization;
  std::optional<DataRef> data;  // set for constants (weights, biases, shapes)
  bool is_variable = false;
  std::optional<Placement> placement;  // stored inside another tensor (zero-copy transforms)
  int64_t element_count = 1;
  std::optional<int64_t> byte_size;  // nullopt when the dtype has no fixed size
  int32_t producer = -1;             // op index, -1 for graph inputs and constants
  std::vector<int32_t> consumers;    // op indices, ascending, each once

  bool is_constant() const { return data.has_value(); }
};

// Explicit: pad_top/left/bottom/right of OpOptions (a folded PAD); positions
// outside the input read as the input zero point, as SAME's padding does.
enum class Padding : uint8_t { Same = 0, Valid = 1, Explicit = 2 };
enum class Activation : uint8_t { None = 0, Relu = 1, ReluN1To1 = 2, Relu6 = 3, Tanh = 4, SignBit = 5 };
const char* padding_name(Padding padding);
const char* activation_name(Activation activation);

// Every builtin option the planner and kernels need, with TFLite defaults.
struct OpOptions {
  Padding padding = Padding::Same;
  int32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;  // Padding::Explicit only
  int32_t stride_w = 1, stride_h = 1;
  int32_t dilation_w = 1, dilation_h = 1;
  int32_t filter_w = 1, filter_h = 1;  // pooling window
  int32_t depth_multiplier = 1;
  Activation activation = Activation::None;
  int32_t axis = 0;        // CONCATENATION, GATHER, PACK, UNPACK
  int32_t batch_dims = 0;  // GATHER
  float alpha = 0.0f;      // LEAKY_RELU
  int32_t num_splits = 0;
  bool keep_dims = false;      // reducers (MEAN, ...)
  bool keep_num_dims = false;  // fully connected
  float beta = 1.0f;           // softmax
  bool align_corners = false, half_pixel_centers = false;
  int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
  bool slice_offset = false;
  std::vector<int32_t> new_shape;     // reshape
  std::vector<int32_t> squeeze_dims;  // squeeze
  // UNIDIRECTIONAL_SEQUENCE_LSTM (clips: 0 = none)
  float cell_clip = 0.0f, proj_clip = 0.0f;
  bool time_major = false, asymmetric_quantize_inputs = false, diagonal_recurrent_tensors = false;
};

struct Op {
  int32_t index = 0;
  int32_t opcode = 0;  // BuiltinOperator code (32 = CUSTOM)
  std::string type;    // "CONV_2D", ..., or the custom code
  int32_t version = 1;
  OpOptions options;
  std::vector<int32_t> inputs;   // tensor indices, -1 for an omitted optional input
  std::vector<int32_t> outputs;
  // Tensors that only carry quantization for the kernel (the LSTM's gate and
  // hidden scales); -1 for an omitted one. Never read or written.
  std::vector<int32_t> intermediates;
  // Zero-copy (set by transforms): the op's tensors share memory through
  // placements, so it moves no data and emits no code.
  bool elided = false;
};

struct Graph {
  std::shared_ptr<const std::vector<uint8_t>> model_bytes;  // owns constant data
  std::string description;
  uint32_t schema_version = 0;
  int32_t subgraph_count = 1;  // only subgraph 0 is read
  std::vector<Tensor> tensors;
  std::vector<Op> ops;  // in execution order
  std::vector<int32_t> inputs, outputs;

  const uint8_t* constant_data(const Tensor& tensor) const {
    return tensor.data ? model_bytes->data() + tensor.data->offset : nullptr;
  }
  // The input tensor of `op` at `position`, or nullptr when absent.
  const Tensor* input(const Op& op, size_t position) const;
  const Tensor* output(const Op& op, size_t position) const;
  // ops[index]; std::invalid_argument "op N does not exist" when out of range.
  const Op& op_at(int32_t index) const;
};

// Fills producer/consumer links and checks that the graph is consistent:
// every tensor index in range, every activation produced before it is read,
// produced once, constants never written. Throws ModelError naming the op.
Graph link_graph(Graph graph);

}  // namespace tinyarena::graph
