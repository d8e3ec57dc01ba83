#include "tinyarena/op_params/cost_model.h"

#include <map>
#include <vector>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "tinyarena/graph/op_metrics.h"
#include "tinyarena_cost_model_data.h"  // kCostModelCsv: cpp/data/cost_model.csv, embedded by CMake

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
  const bool three = weight_dim(graph, op, 1) == 3 && weight_dim(graph, op, 2) == 3 && op.options.dilation_h == 1 &&
                     op.options.dilation_w == 1 && op.options.depth_multiplier == 1;
  if (three && op.options.stride_h == 1 && op.options.stride_w == 1) return "3x3s1";
  if (three && op.options.stride_h == 2 && op.options.stride_w == 2) return "3x3s2";
  return "generic";
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

// Rows "build,kernel,macs,inputs,outputs,pixels,calls[,...]"; the header and '#' lines are skipped.
Table parse_table(const std::string& csv) {
  Table table;
  std::istringstream lines(csv);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.empty() || line[0] == '#' || line.rfind("build,", 0) == 0) continue;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    if (fields.size() < 7) throw std::logic_error("cost_model.csv line " + std::to_string(number) + ": too few fields");
    CostCoefficients c;
    c.macs = parse_number(fields[2], number);
    c.inputs = parse_number(fields[3], number);
    c.outputs = parse_number(fields[4], number);
    c.pixels = parse_number(fields[5], number);
    c.calls = parse_number(fields[6], number);
    table[{fields[0], fields[1]}] = c;
  }
  return table;
}

const Table& table() {
  static const Table parsed = parse_table(kCostModelCsv);
  return parsed;
}

bool has_rows(const std::string& build) {
  auto it = table().lower_bound({build, ""});
  return it != table().end() && it->first.first == build;
}

}  // namespace

std::string cost_kernel(const graph::Graph& graph, const graph::Op& op) {
  if (op.type == "CONV_2D") return op.type + "/" + conv_variant(graph, op);
  if (op.type == "DEPTHWISE_CONV_2D") return op.type + "/" + depthwise_variant(graph, op);
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
  std::string name = build_name(build);
  if (!has_rows(name)) name = build == Build::Helium ? build_name(Build::Simd) : name;
  for (const std::string& key : {kernel, kernel.substr(0, kernel.find('/')), std::string("*")}) {
    auto it = table().find({name, key});
    if (it != table().end()) return it->second;
  }
  throw std::logic_error(std::string("cost_model.csv has no '*' row for the ") + name + " build");
}

int64_t predicted_instructions(const graph::Graph& graph, const graph::Op& op, Build build) {
  if (op.elided) return 0;
  const CostCoefficients& c = cost_coefficients(build, cost_kernel(graph, op));
  const CostTerms t = cost_terms(graph, op);
  const double sum = c.macs * t.macs + c.inputs * t.inputs + c.outputs * t.outputs + c.pixels * t.pixels + c.calls * t.calls;
  return static_cast<int64_t>(sum + 0.5);
}

}  // namespace tinyarena::op_params
