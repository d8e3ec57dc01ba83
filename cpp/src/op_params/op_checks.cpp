#include "tinyarena/op_params/op_checks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "tinyarena/common/errors.h"
#include "tinyarena/op_params/quantization.h"
#include "tinyarena_kernels.h"

namespace tinyarena::op_params::detail {
namespace {

constexpr int64_t kMaxElements = INT32_MAX;  // the kernels index with int32

std::string shape_text(const std::vector<int32_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

const graph::Tensor& present(const graph::Op& op, const graph::Tensor* tensor, const char* what) {
  if (!tensor) unsupported(op, std::string(what) + " is missing");
  return *tensor;
}

// The kernels add int8 zero points to int8 values in int32; TFLite keeps them in [-128, 127].
void require_int8_zero_points(const graph::Op& op, const graph::Tensor& t, const std::string& what) {
  for (int64_t zp : t.quantization.zero_point)
    if (zp < -128 || zp > 127)
      unsupported(op, "zero point " + std::to_string(zp) + " of " + what + " is outside the int8 range [-128, 127]");
}

// A scale ratio as printf's %g writes it (1e+30, not thirty-one digits).
std::string ratio_text(double real) {
  std::ostringstream text;
  text << real;
  return text.str();
}

}  // namespace

void unsupported(const graph::Op& op, const std::string& why) {
  throw UnsupportedError("op " + std::to_string(op.index) + " (" + op.type + "): " + why);
}

const graph::Tensor& activation(const graph::Op& op, const graph::Tensor* tensor, graph::DType dtype,
                                const char* what, int rank) {
  const graph::Tensor& t = present(op, tensor, what);
  if (t.dtype != dtype)
    unsupported(op, std::string(what) + " is " + graph::dtype_name(t.dtype) + "; the kernel takes " +
                        graph::dtype_name(dtype));
  const int actual = static_cast<int>(t.shape.size());
  if (rank > 0 ? actual != rank : actual > TA_MAX_DIMS)
    unsupported(op, std::string(what) + " has shape " + shape_text(t.shape) + "; the kernel takes " +
                        (rank > 0 ? std::to_string(rank) : "at most " + std::to_string(TA_MAX_DIMS)) + " dimensions");
  if (t.element_count > kMaxElements) unsupported(op, std::string(what) + " has too many elements");
  if (dtype == graph::DType::Int8) require_int8_zero_points(op, t, what);
  return t;
}

const graph::Tensor& int8_input(const graph::Graph& graph, const graph::Op& op, size_t position, int rank) {
  return activation(op, graph.input(op, position), graph::DType::Int8, "the input", rank);
}

const graph::Tensor& int8_output(const graph::Graph& graph, const graph::Op& op, size_t position, int rank) {
  return activation(op, graph.output(op, position), graph::DType::Int8, "the output", rank);
}

const graph::Tensor& constant_input(const graph::Graph& graph, const graph::Op& op, size_t position,
                                    graph::DType dtype, int rank) {
  const std::string what = "input " + std::to_string(position);
  const graph::Tensor& t = activation(op, graph.input(op, position), dtype, what.c_str(), rank);
  if (!t.is_constant()) unsupported(op, what + " must be a constant");
  return t;
}

std::vector<int32_t> int_values(const graph::Graph& graph, const graph::Op& op, size_t position) {
  const graph::Tensor* t = graph.input(op, position);
  const bool wide = t && t->dtype == graph::DType::Int64;
  const graph::Tensor& c = constant_input(graph, op, position, wide ? graph::DType::Int64 : graph::DType::Int32);
  const uint8_t* data = graph.constant_data(c);
  std::vector<int32_t> values(static_cast<size_t>(c.element_count));
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t v = 0;
    if (wide) {
      std::memcpy(&v, data + 8 * i, 8);
    } else {
      int32_t v32;
      std::memcpy(&v32, data + 4 * i, 4);
      v = v32;
    }
    values[i] = to_int32(op, v, "a constant index");
  }
  return values;
}

std::vector<int32_t> bias_values(const graph::Graph& graph, const graph::Op& op, size_t position, int64_t channels) {
  if (!graph.input(op, position)) return {};
  const graph::Tensor& bias = constant_input(graph, op, position, graph::DType::Int32);
  if (bias.element_count != channels)
    unsupported(op, "the bias has " + std::to_string(bias.element_count) + " values for " + std::to_string(channels) +
                        " output channels");
  std::vector<int32_t> values(static_cast<size_t>(channels));
  if (channels) std::memcpy(values.data(), graph.constant_data(bias), values.size() * sizeof(int32_t));
  return values;
}

std::vector<float> weight_scales(const graph::Op& op, const graph::Tensor& weights, int64_t channels, int axis) {
  const std::vector<float>& scales = weights.quantization.scale;
  if (scales.size() == 1) return std::vector<float>(static_cast<size_t>(channels), scales[0]);
  if (static_cast<int64_t>(scales.size()) != channels || weights.quantization.axis != axis)
    unsupported(op, "the weights have " + std::to_string(scales.size()) + " scales along dimension " +
                        std::to_string(weights.quantization.axis) + "; the kernel takes 1 or " +
                        std::to_string(channels) + " along dimension " + std::to_string(axis));
  return scales;
}

int32_t weights_zero_point(const graph::Op& op, const graph::Tensor& weights) {
  const std::vector<int64_t>& zero_points = weights.quantization.zero_point;
  for (int64_t zp : zero_points)
    if (zp != zero_points[0]) unsupported(op, "the weights' zero points differ between channels");
  require_int8_zero_points(op, weights, "the weights");
  return zero_points.empty() ? 0 : static_cast<int32_t>(zero_points[0]);
}

double requant_scale(const graph::Op& op, double real, const char* what) {
  if (!(real >= 0.0 && std::isfinite(real)))
    unsupported(op, std::string(what) + " (a ratio of scales) is " + ratio_text(real) +
                        "; it must be finite and not negative");
  return real;
}

Multiplier requant_multiplier(const graph::Op& op, double real, const char* what, int max_shift) {
  const Multiplier m = quantize_multiplier(requant_scale(op, real, what));
  if (m.shift > max_shift)
    unsupported(op, std::string(what) + " (a ratio of scales) is " + ratio_text(real) + ", at least 2^" +
                        std::to_string(max_shift) + ": too large for the kernel's fixed-point shift");
  return m;
}

void require_shape(const graph::Op& op, const graph::Tensor& tensor, const std::vector<int64_t>& shape,
                   const char* what) {
  const bool same = tensor.shape.size() == shape.size() && std::equal(shape.begin(), shape.end(), tensor.shape.begin());
  if (same) return;
  std::vector<int32_t> expected;
  for (int64_t d : shape) expected.push_back(static_cast<int32_t>(std::min<int64_t>(d, INT32_MAX)));
  unsupported(op, std::string(what) + " has shape " + shape_text(tensor.shape) + " but the op computes " +
                      shape_text(expected));
}

int32_t to_int32(const graph::Op& op, int64_t value, const char* what) {
  if (value < INT32_MIN || value > INT32_MAX) unsupported(op, std::string(what) + " does not fit in 32 bits");
  return static_cast<int32_t>(value);
}

std::pair<int32_t, int32_t> fused_activation_range(const graph::Op& op, const graph::Tensor& output) {
  const graph::Activation a = op.options.activation;
  if (a == graph::Activation::Tanh || a == graph::Activation::SignBit)
    unsupported(op, std::string("fused activation ") + graph::activation_name(a) + " is not supported");
  return activation_range(a, scale_of(output), zero_point_of(output));
}

Window window(const graph::Op& op, const graph::Tensor& input, int64_t kernel_h, int64_t kernel_w,
              int64_t dilation_h, int64_t dilation_w) {
  const graph::OpOptions& o = op.options;
  if (kernel_h < 1 || kernel_w < 1) unsupported(op, "the window is empty");
  if (o.padding == graph::Padding::Explicit && std::min({o.pad_top, o.pad_left, o.pad_bottom, o.pad_right}) < 0)
    unsupported(op, "negative explicit padding");
  const AxisPadding h = window_padding(o, true, input.shape[1], kernel_h, dilation_h);
  const AxisPadding w = window_padding(o, false, input.shape[2], kernel_w, dilation_w);
  if (h.out_size < 1 || w.out_size < 1) unsupported(op, "the window is larger than the input");
  return {to_int32(op, h.out_size, "the output height"), to_int32(op, w.out_size, "the output width"),
          to_int32(op, h.before, "the padding"), to_int32(op, w.before, "the padding"),
          to_int32(op, h.after, "the padding"), to_int32(op, w.after, "the padding")};
}

std::vector<int32_t> shape6(const std::vector<int32_t>& shape) {
  std::vector<int32_t> out(TA_MAX_DIMS - shape.size(), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

void fill6(int32_t* field, const std::vector<int32_t>& values, int32_t fill) {
  for (size_t i = 0; i < TA_MAX_DIMS; ++i) field[i] = i < values.size() ? values[i] : fill;
}

}  // namespace tinyarena::op_params::detail
