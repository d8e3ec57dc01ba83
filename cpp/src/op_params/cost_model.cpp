#include "tinyarena/op_params/cost_model.h"

#include <climits>
#include <cmath>
#include <map>
#include <vector>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "tinyarena/graph/op_metrics.h"
#include "tinyarena/op_params/kernel_params.h"
#include "tinyarena_cost_model_data.h"  // kCostModelCsv, kCostModelCallsCsv: cpp/data/*.csv, embedded by CMake

namespace tinyarena::op_params {
namespace {

using Table = std::map<std::pair<std::string, std::string>, CostCoefficients>;  // (build, kernel)

double element_count(const graph::Graph& graph, int32_t tensor) {
  return tensor < 0 ? 0.0 : static_cast<double>(graph.tensors[tensor].element_count);
}

// The weights' [out_c or 1, kh, kw, c] dimension `axis`, 0 when absent.
int32_t weight_dim(const graph::Graph& graph, const graph::Op& op, size_t axis) {
  const graph::Tensor* weights = graph.input(op, 1);
  return weights && axis < weights->shape.size() ? weights->shape[axis] : 0;
}

std::string conv_variant(const graph::Graph& graph, const graph::Op& op) {
  const bool pointwise = weight_dim(graph, op, 1) == 1 && weight_dim(graph, op, 2) == 1 && op.options.stride_h == 1 &&
                         op.options.stride_w == 1;
  if (pointwise) return "1x1";
  return weight_dim(graph, op, 3) <= 4 ? "few_in" : "kxk";  // a first layer on RGB-like input: its own patch path
}

std::string depthwise_variant(const graph::Graph& graph, const graph::Op& op) {
  if (op.options.depth_multiplier != 1) return "multiplier";
  const int32_t k = weight_dim(graph, op, 1);
  const int32_t taps = TA_DW_LINE_TAPS(k, weight_dim(graph, op, 2));  // ta_dw_channels_applies on int8 weights
  if (taps >= 1 && taps <= TA_DW_CHANNELS_MAX_TAPS && weight_dim(graph, op, 3) >= 4) return "channels";
  const bool square = k == weight_dim(graph, op, 2) && op.options.stride_h == op.options.stride_w &&
                      op.options.dilation_h == 1 && op.options.dilation_w == 1 && op.options.depth_multiplier == 1;
  if (!square) return "generic";
  return std::to_string(k) + "x" + std::to_string(k) + "s" + std::to_string(op.options.stride_h);
}

// A CONV_2D's share of output channels in constant pairs (their records' bias word is
// TA_CONSTANT_PAIR: conv_rq_records) and whether its activation range is narrower than int8's;
// {0, false} for a conv whose parameters the kernels refuse.
struct ConvPaths {
  double constant_pair_share = 0;
  bool clamped = false;
};

ConvPaths conv_paths(const graph::Graph& graph, const graph::Op& op) {
  try {
    const ConvKernel k = conv_kernel(graph, op);
    const auto* weights = reinterpret_cast<const int8_t*>(graph.constant_data(*graph.input(op, 1)));
    const std::vector<int32_t> records = conv_rq_records(k, weights);
    int64_t constant = 0;
    for (size_t i = TA_CONV_RQ_WORDS - 1; i < records.size(); i += TA_CONV_RQ_WORDS) constant += records[i] == INT32_MIN;
    ConvPaths paths;
    paths.constant_pair_share = k.params.out_c > 0 ? static_cast<double>(constant) / k.params.out_c : 0.0;
    paths.clamped = k.params.act_min > -128 || k.params.act_max < 127;
    return paths;
  } catch (const std::exception&) {
    return {};
  }
}

double parse_number(const std::string& field, int line) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(field, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != field.size() || field.empty())
    throw std::logic_error("cost_model.csv line " + std::to_string(line) + ": '" + field + "' is not a number");
  return value;
}

// A coefficient table's data rows as (line number, comma-separated fields), each with at least
// `min_fields`; the header ("build,...") and '#' lines are skipped. `name` is the file, for errors.
std::vector<std::pair<int, std::vector<std::string>>> csv_rows(const std::string& csv, const char* name,
                                                               size_t min_fields) {
  std::vector<std::pair<int, std::vector<std::string>>> rows;
  std::istringstream lines(csv);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.empty() || line[0] == '#' || line.rfind("build,", 0) == 0) continue;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    if (fields.size() < min_fields)
      throw std::logic_error(std::string(name) + " line " + std::to_string(number) + ": too few fields");
    rows.emplace_back(number, std::move(fields));
  }
  return rows;
}

// Rows "build,kernel,macs,live_macs,clamped_macs,inputs,outputs,pixels,calls[,...]".
Table parse_table(const std::string& csv) {
  Table table;
  for (const auto& [number, fields] : csv_rows(csv, "cost_model.csv", 9)) {
    CostCoefficients c;
    c.macs = parse_number(fields[2], number);
    c.live_macs = parse_number(fields[3], number);
    c.clamped_macs = parse_number(fields[4], number);
    c.inputs = parse_number(fields[5], number);
    c.outputs = parse_number(fields[6], number);
    c.pixels = parse_number(fields[7], number);
    c.calls = parse_number(fields[8], number);
    table[{fields[0], fields[1]}] = c;
  }
  return table;
}

const Table& table() {
  static const Table parsed = parse_table(kCostModelCsv);
  return parsed;
}

using CallTable = std::map<std::pair<std::string, std::string>, CallCoefficients>;  // (build, kernel)

// Rows "build,kernel,calls,channels,window,leftover_macs,strip_macs,strip_channels[,...]".
CallTable parse_call_table(const std::string& csv) {
  CallTable calls;
  for (const auto& [number, fields] : csv_rows(csv, "cost_model_calls.csv", 8)) {
    calls[{fields[0], fields[1]}] = {parse_number(fields[2], number), parse_number(fields[3], number),
                                     parse_number(fields[4], number), parse_number(fields[5], number),
                                     parse_number(fields[6], number), parse_number(fields[7], number)};
  }
  return calls;
}

const CallTable& call_table() {
  static const CallTable parsed = parse_call_table(kCostModelCallsCsv);
  return parsed;
}

bool has_rows(const std::string& build) {
  auto it = table().lower_bound({build, ""});
  return it != table().end() && it->first.first == build;
}

// The build whose rows `build` uses: its own, else (Helium until it is calibrated) the SIMD build's.
std::string table_build(Build build) {
  const std::string name = build_name(build);
  return !has_rows(name) && build == Build::Helium ? build_name(Build::Simd) : name;
}

// The kernel, then its op type (the part before '/'), then "*": the keys a row is looked up by.
std::vector<std::string> lookup_keys(const std::string& kernel) {
  return {kernel, kernel.substr(0, kernel.find('/')), std::string("*")};
}

// The kernel rows' window: kernel rows of a convolution or pooling window, else 1.
double window_rows(const graph::Graph& graph, const graph::Op& op) {
  if (op.type == "CONV_2D" || op.type == "DEPTHWISE_CONV_2D") return std::max(1, weight_dim(graph, op, 1));
  if (op.type == "AVERAGE_POOL_2D" || op.type == "MAX_POOL_2D") return std::max(1, op.options.filter_h);
  return 1.0;
}

}  // namespace

std::string cost_kernel(const graph::Graph& graph, const graph::Op& op) {
  if (op.type == "CONV_2D") return op.type + "/" + conv_variant(graph, op);
  if (op.type == "DEPTHWISE_CONV_2D") return op.type + "/" + depthwise_variant(graph, op);
  if (op.type == "FULLY_CONNECTED") {  // a per-channel scale is read (a double, soft-float on the M3/M4) per output
    const graph::Tensor* weights = graph.input(op, 1);
    return op.type + (weights && weights->quantization.scale.size() > 1 ? "/per_channel" : "/per_tensor");
  }
  return op.type;
}

CostTerms cost_terms(const graph::Graph& graph, const graph::Op& op) {
  CostTerms terms;
  for (int32_t t : op.inputs)
    if (t >= 0 && !graph.tensors[t].is_constant()) terms.inputs += element_count(graph, t);
  for (int32_t t : op.outputs) terms.outputs += element_count(graph, t);
  const graph::Tensor* output = graph.output(op, 0);
  const int32_t innermost = output && !output->shape.empty() ? output->shape.back() : 0;
  terms.pixels = innermost > 0 ? element_count(graph, op.outputs[0]) / innermost : 0.0;
  const bool pooling = op.type == "AVERAGE_POOL_2D" || op.type == "MAX_POOL_2D";
  terms.macs = pooling ? terms.outputs * op.options.filter_h * op.options.filter_w
                       : static_cast<double>(graph::op_macs(graph, op));
  terms.live_macs = terms.macs;
  if (op.type == "CONV_2D") {
    const ConvPaths paths = conv_paths(graph, op);
    terms.live_macs = terms.macs * (1.0 - paths.constant_pair_share);
    terms.clamped_macs = paths.clamped ? terms.live_macs : 0.0;
  }
  return terms;
}

const char* build_name(Build build) {
  switch (build) {
    case Build::Portable: return "portable";
    case Build::Simd: return "simd";
    case Build::Helium: return "helium";
  }
  return "portable";
}

const CostCoefficients& cost_coefficients(Build build, const std::string& kernel) {
  const std::string name = table_build(build);
  for (const std::string& key : lookup_keys(kernel)) {
    auto it = table().find({name, key});
    if (it != table().end()) return it->second;
  }
  throw std::logic_error(std::string("cost_model.csv has no '*' row for the ") + name + " build");
}

const CallCoefficients& call_coefficients(Build build, const std::string& kernel) {
  static const CallCoefficients none;
  const std::string name = table_build(build);
  for (const std::string& key : lookup_keys(kernel)) {
    auto it = call_table().find({name, key});
    if (it != call_table().end()) return it->second;
  }
  return none;
}

CallTerms call_terms(const graph::Graph& graph, const graph::Op& op, double calls, double width_share,
                     double work_scale) {
  CallTerms terms;
  const double extra = calls - 1.0;
  if (extra <= 0) return terms;
  const graph::Tensor* output = graph.output(op, 0);
  const graph::Tensor* input = nullptr;
  for (int32_t t : op.inputs)
    if (t >= 0 && !graph.tensors[t].is_constant() && !input) input = &graph.tensors[t];
  const auto rank4 = [](const graph::Tensor* t) { return t && t->shape.size() == 4; };
  terms.calls = extra;
  terms.channels = output && !output->shape.empty() ? extra * output->shape.back() : 0.0;
  if (rank4(input))
    terms.window = extra * static_cast<double>(input->shape[2]) * input->shape[3] * window_rows(graph, op) * width_share;
  const double macs = static_cast<double>(graph::op_macs(graph, op));
  if (rank4(output) && op.type == "CONV_2D") {
    const double pixels = static_cast<double>(output->shape[1]) * output->shape[2];
    const double per_call = std::round(pixels / calls);
    if (pixels > 0 && std::fmod(per_call, 2.0) == 1.0) terms.leftover_macs = extra * macs / pixels;
  }
  if (width_share < 1.0) {
    terms.strip_macs = macs * work_scale;
    terms.strip_channels = terms.channels;
  }
  return terms;
}

int64_t predicted_instructions(const graph::Graph& graph, const graph::Op& op, Build build) {
  return predicted_instructions(graph, op, build, 1.0, 1.0);
}

int64_t predicted_instructions(const graph::Graph& graph, const graph::Op& op, Build build, double calls,
                               double work_scale, double width_share) {
  if (op.elided) return 0;
  const std::string kernel = cost_kernel(graph, op);
  const CostCoefficients& c = cost_coefficients(build, kernel);
  const CostTerms t = cost_terms(graph, op);
  const double work = c.macs * t.macs + c.live_macs * t.live_macs + c.clamped_macs * t.clamped_macs +
                      c.inputs * t.inputs + c.outputs * t.outputs + c.pixels * t.pixels;
  const CallCoefficients& k = call_coefficients(build, kernel);
  const CallTerms x = call_terms(graph, op, calls, width_share, work_scale);
  const double repeated = k.calls * x.calls + k.channels * x.channels + k.window * x.window +
                          k.leftover_macs * x.leftover_macs + k.strip_macs * x.strip_macs +
                          k.strip_channels * x.strip_channels;
  return static_cast<int64_t>(work * work_scale + c.calls * t.calls + repeated + 0.5);
}

}  // namespace tinyarena::op_params
