// Writes a plan into a copy of a .tflite model as TFLite Micro's
// `OfflineMemoryAllocation` metadata: an int32 array [version = 1,
// subgraph_count, tensor_count, offset per tensor (-1 = plan online)].
// TFLM then places those tensors at our offsets and plans the rest around them.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/liveness/liveness.h"
#include "tinyarena/allocation/problem.h"

namespace tinyarena::interchange {

constexpr const char* kOfflinePlanName = "OfflineMemoryAllocation";

// Arena offset of every tensor of subgraph 0: its buffer's offset for
// activations, -1 for constants and unplanned tensors.
std::vector<int32_t> tensor_offsets(const graph::Graph& graph, const liveness::Liveness& liveness,
                                    const allocation::Solution& solution);

// A copy of `model` with the metadata entry added (an existing one is
// replaced). The original bytes are kept intact after a new prefix holding
// a new root table, so every offset inside them stays valid.
// Throws UnsupportedError for models with more than one subgraph.
std::vector<uint8_t> with_offline_plan(const std::vector<uint8_t>& model, const std::vector<int32_t>& offsets);

// The model `graph` was read from, with the plan's tensor offsets added.
std::vector<uint8_t> model_with_offline_plan(const graph::Graph& graph, const liveness::Liveness& liveness,
                                             const allocation::Solution& solution);

// The offsets stored in a model's OfflineMemoryAllocation entry (empty if none).
std::vector<int32_t> read_offline_plan(const std::vector<uint8_t>& model);

}  // namespace tinyarena::interchange
