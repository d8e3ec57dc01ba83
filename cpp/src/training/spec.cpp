#include "tinyarena/training/spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace tinyarena::training {

namespace {

const char* kSyntax = "bias, last:K, layers:I[,J...][@FRACTION] or auto";

[[noreturn]] void bad(const std::string& spec, const std::string& why) {
  throw std::invalid_argument("bad update spec '" + spec + "': " + why);
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A whole number in [lowest, 2^31 - 1]; `what` names it in the error.
int32_t whole_number(const std::string& spec, const std::string& part, int32_t lowest, const char* what) {
  if (!all_digits(part) || part.size() > 10 || std::stoll(part) > INT32_MAX || std::stoll(part) < lowest)
    bad(spec, "'" + part + "' is not " + what);
  return static_cast<int32_t>(std::stoll(part));
}

// A plain decimal (digits, one optional point) in (0, 1].
double fraction(const std::string& spec, const std::string& part) {
  size_t point = part.find('.');
  std::string whole = part.substr(0, point), tail = point == std::string::npos ? "" : part.substr(point + 1);
  bool decimal = (whole.empty() || all_digits(whole)) && (point == std::string::npos || all_digits(tail)) &&
                 !(whole.empty() && tail.empty()) && part.size() <= 20;
  double value = decimal ? std::strtod(part.c_str(), nullptr) : 0.0;
  if (!decimal || !(value > 0.0 && value <= 1.0))
    bad(spec, "FRACTION '" + part + "' is not a decimal number above 0 and at most 1");
  return value;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == separator) parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

UpdateSpec parse_layers(const std::string& spec, const std::string& body) {
  UpdateSpec parsed;
  parsed.kind = SpecKind::Layers;
  size_t at = body.find('@');
  std::string list = body.substr(0, at);
  if (at != std::string::npos) {
    parsed.fraction = fraction(spec, body.substr(at + 1));
    parsed.fraction_given = true;
  }
  if (list.empty()) bad(spec, "no layer listed after 'layers:'");
  for (const std::string& part : split(list, ',')) {
    int32_t op = whole_number(spec, part, 0, "an op index (a whole number from 0)");
    if (std::count(parsed.layers.begin(), parsed.layers.end(), op)) bad(spec, "layer " + part + " is listed twice");
    parsed.layers.push_back(op);
  }
  std::sort(parsed.layers.begin(), parsed.layers.end());
  return parsed;
}

bool is_weight_layer(const graph::Graph& graph, const graph::Op& op) {
  if (op.type != "CONV_2D" && op.type != "DEPTHWISE_CONV_2D" && op.type != "FULLY_CONNECTED") return false;
  const graph::Tensor* weights = graph.input(op, 1);
  return weights && weights->is_constant() && weights->dtype == graph::DType::Int8 && !op.outputs.empty();
}

LayerUpdate layer_of(const graph::Graph& graph, const graph::Op& op) {
  LayerUpdate layer;
  layer.op = op.index;
  layer.type = op.type;
  const graph::Tensor& output = graph.tensors[op.outputs[0]];
  layer.out_channels = output.shape.empty() ? 1 : std::max(1, output.shape.back());
  layer.channel_weights = graph.input(op, 1)->element_count / layer.out_channels;
  return layer;
}

}  // namespace

UpdateSpec parse_spec(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t"), end = text.find_last_not_of(" \t");
  std::string spec = begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
  if (spec == "bias") return UpdateSpec();
  UpdateSpec parsed;
  if (spec == "auto") parsed.kind = SpecKind::Auto;
  if (spec == "auto") return parsed;
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon), body = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (kind == "last" && colon != std::string::npos) {
    parsed.kind = SpecKind::Last;
    parsed.last = whole_number(spec, body, 1, "a whole number above 0");
    return parsed;
  }
  if (kind == "layers" && colon != std::string::npos) return parse_layers(spec, body);
  if (kind == "last" || kind == "layers") bad(spec, "'" + kind + "' needs ':' and its arguments (" + kSyntax + ")");
  bad(spec, "unknown kind '" + kind + "' (expected " + kSyntax + ")");
}

std::string spec_text(const UpdateSpec& spec) {
  switch (spec.kind) {
    case SpecKind::Bias: return "bias";
    case SpecKind::Auto: return "auto";
    case SpecKind::Last: return "last:" + std::to_string(spec.last);
    case SpecKind::Layers: break;
  }
  std::string text = "layers:";
  for (size_t i = 0; i < spec.layers.size(); ++i) text += (i ? "," : "") + std::to_string(spec.layers[i]);
  if (spec.fraction_given) {
    char number[32];
    std::snprintf(number, sizeof number, "%.15g", spec.fraction);
    text += std::string("@") + number;
  }
  return text;
}

std::vector<int32_t> weight_layers(const graph::Graph& graph) {
  std::vector<int32_t> layers;
  for (const graph::Op& op : graph.ops)
    if (is_weight_layer(graph, op)) layers.push_back(op.index);
  return layers;
}

std::vector<LayerUpdate> resolve_spec(const graph::Graph& graph, const UpdateSpec& spec) {
  if (spec.kind == SpecKind::Auto) throw std::invalid_argument("the 'auto' spec is chosen by plan_training under a limit");
  std::vector<int32_t> layers = weight_layers(graph);
  if (layers.empty()) throw std::invalid_argument("the model has no weight layer (CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED with int8 weights) to train");
  if (spec.kind == SpecKind::Last && spec.last > static_cast<int32_t>(layers.size()))
    throw std::invalid_argument("bad update spec '" + spec_text(spec) + "': the model has only " +
                                std::to_string(layers.size()) + " weight layers");
  for (int32_t op : spec.layers) {
    if (op >= static_cast<int32_t>(graph.ops.size()))
      throw std::invalid_argument("bad update spec '" + spec_text(spec) + "': op " + std::to_string(op) +
                                  " does not exist (the model has " + std::to_string(graph.ops.size()) + " ops)");
    if (!std::count(layers.begin(), layers.end(), op))
      throw std::invalid_argument("bad update spec '" + spec_text(spec) + "': op " + std::to_string(op) + " (" +
                                  graph.ops[op].type + ") is not a weight layer (CONV_2D, DEPTHWISE_CONV_2D or "
                                  "FULLY_CONNECTED with int8 weights)");
  }
  std::vector<LayerUpdate> updates;
  for (size_t i = 0; i < layers.size(); ++i) {
    LayerUpdate layer = layer_of(graph, graph.ops[layers[i]]);
    bool in_last = spec.kind == SpecKind::Last && i + spec.last >= layers.size();
    bool listed = spec.kind == SpecKind::Layers && std::count(spec.layers.begin(), spec.layers.end(), layer.op);
    layer.bias = graph.input(graph.ops[layer.op], 2) != nullptr && (spec.kind != SpecKind::Last || in_last);
    if (in_last) layer.weight_channels = layer.out_channels;
    if (listed)
      layer.weight_channels = std::clamp(static_cast<int32_t>(std::ceil(spec.fraction * layer.out_channels - 1e-9)), 1,
                                         layer.out_channels);
    if (layer.bias || layer.weight_channels > 0) updates.push_back(layer);
  }
  return updates;
}

}  // namespace tinyarena::training
