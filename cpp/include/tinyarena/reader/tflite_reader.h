// Reads a .tflite flatbuffer (subgraph 0) into the graph IR. Every access
// is bounds-checked; malformed input throws ModelError naming what is
// wrong. Unknown builtin ops load; later stages report them by name and index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"

namespace tinyarena::reader {

graph::Graph read_tflite(std::vector<uint8_t> bytes);
graph::Graph read_tflite_file(const std::string& path);

}  // namespace tinyarena::reader
