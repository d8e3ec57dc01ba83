#include "tinyarena/interchange/csv.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace tinyarena::interchange {
namespace {

constexpr const char* kRequired[] = {"id", "lower", "upper", "size"};

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r");
  const auto end = s.find_last_not_of(" \t\r");
  return begin == std::string::npos ? "" : s.substr(begin, end - begin + 1);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream stream(line);
  std::string cell;
  while (std::getline(stream, cell, ',')) cells.push_back(trim(cell));
  if (!line.empty() && line.back() == ',') cells.push_back("");
  return cells;
}

[[noreturn]] void fail(size_t line, const std::string& message) {
  throw std::invalid_argument("CSV line " + std::to_string(line) + ": " + message);
}

int64_t parse_integer(const std::string& cell, size_t line, const std::string& column) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(cell, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (cell.empty() || used != cell.size()) fail(line, "column '" + column + "' is not an integer: '" + cell + "'");
  return value;
}

// MiniMalloc's reader also takes `begin`/`start` for `lower`, `buffer`/
// `buffer_id` for `id`, and `end` for `upper` -- an inclusive end, so it
// reads one more (true when the header has an `end` column).
bool canonical_header(std::vector<std::string>& header) {
  bool inclusive_end = false;
  for (auto& name : header) {
    if (name == "begin" || name == "start") name = "lower";
    if (name == "buffer" || name == "buffer_id") name = "id";
    if (name == "end") name = "upper", inclusive_end = true;
  }
  return inclusive_end;
}

// Column index of each name, -1 if absent; required columns must be there.
std::vector<int> column_positions(const std::vector<std::string>& header, const std::vector<std::string>& names) {
  std::vector<int> positions;
  for (const auto& name : names) {
    const auto it = std::find(header.begin(), header.end(), name);
    positions.push_back(it == header.end() ? -1 : static_cast<int>(it - header.begin()));
  }
  for (const char* required : kRequired)
    if (std::find(header.begin(), header.end(), required) == header.end())
      fail(1, std::string("header lacks the column '") + required + "' (need id,lower,upper,size)");
  return positions;
}

}  // namespace

CsvProblem parse_problem_csv(const std::string& text) {
  const std::vector<std::string> names = {"id", "lower", "upper", "size", "alignment", "offset"};
  std::stringstream stream(text);
  std::string line;
  size_t line_number = 0;
  std::vector<int> column;
  bool inclusive_end = false;
  CsvProblem result;
  while (std::getline(stream, line)) {
    ++line_number;
    if (trim(line).empty()) continue;
    const auto cells = split(line);
    if (column.empty()) {
      std::vector<std::string> header = cells;
      inclusive_end = canonical_header(header);
      column = column_positions(header, names);
      continue;
    }
    const auto cell = [&](int k) -> std::string {
      if (column[k] < 0) return "";
      if (column[k] >= static_cast<int>(cells.size())) fail(line_number, "too few columns");
      return cells[column[k]];
    };
    allocation::Buffer buffer;
    buffer.name = cell(0);
    const int64_t lower = parse_integer(cell(1), line_number, "lower");
    const int64_t listed_upper = parse_integer(cell(2), line_number, "upper");
    const bool can_add = listed_upper < std::numeric_limits<int64_t>::max();
    const int64_t upper = inclusive_end && can_add ? listed_upper + 1 : listed_upper;
    buffer.size = parse_integer(cell(3), line_number, "size");
    if (lower < 0 || upper <= lower || upper > std::numeric_limits<int32_t>::max())
      fail(line_number, "lifetime [" + std::to_string(lower) + ", " + std::to_string(upper) + ") is empty or out of range");
    if (buffer.size < 0) fail(line_number, "negative size");
    buffer.first = static_cast<int32_t>(lower);
    buffer.last = static_cast<int32_t>(upper - 1);
    const std::string alignment = cell(4);
    buffer.alignment = alignment.empty() ? 1 : parse_integer(alignment, line_number, "alignment");
    if (buffer.alignment < 1) fail(line_number, "alignment must be at least 1");
    const std::string offset = cell(5);
    result.offsets.push_back(offset.empty() ? -1 : parse_integer(offset, line_number, "offset"));
    if (!offset.empty() && result.offsets.back() < 0) fail(line_number, "negative offset");
    if (!offset.empty()) buffer.fixed_offset = result.offsets.back();
    result.problem.buffers.push_back(buffer);
  }
  if (column.empty()) throw std::invalid_argument("CSV is empty: expected a header id,lower,upper,size");
  return result;
}

std::string write_problem_csv(const allocation::Problem& problem, const allocation::Solution* solution) {
  const bool any_alignment = std::any_of(problem.buffers.begin(), problem.buffers.end(),
                                         [](const allocation::Buffer& b) { return b.alignment > 1; });
  const bool any_offset = solution || std::any_of(problem.buffers.begin(), problem.buffers.end(),
                                                  [](const allocation::Buffer& b) { return b.fixed_offset.has_value(); });
  std::ostringstream out;
  out << "id,lower,upper,size" << (any_alignment ? ",alignment" : "") << (any_offset ? ",offset" : "") << "\n";
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const auto& b = problem.buffers[i];
    std::string id = b.name.empty() ? std::to_string(i) : b.name;
    std::replace(id.begin(), id.end(), ',', '_');  // ids must not split the row
    out << id << "," << b.first << "," << (int64_t{b.last} + 1) << ","
        << b.size;
    if (any_alignment) out << "," << b.alignment;
    if (solution) {
      out << "," << solution->offsets[i];
    } else if (any_offset) {
      out << "," << (b.fixed_offset ? std::to_string(*b.fixed_offset) : "");
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace tinyarena::interchange
