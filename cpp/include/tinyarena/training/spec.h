// Which parameters a training step updates (sparse update, as in MCUNetV3).
// The spec syntax, the same in the CLI (`--train SPEC`) and in Python:
//   bias                       every bias of every weight layer
//   last:K                     weights and biases of the last K weight layers
//   layers:I[,J...][@FRACTION] weights of the listed layers (op indices of weight
//                              layers), only the first ceil(FRACTION * C_out) output
//                              channels when FRACTION (0 < FRACTION <= 1) is given,
//                              plus every bias
//   auto                       chosen under the SRAM (and flash) limit: training_plan.h
// A weight layer is a CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED op with
// constant int8 weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"

namespace tinyarena::training {

enum class SpecKind { Bias, Last, Layers, Auto };

struct UpdateSpec {
  SpecKind kind = SpecKind::Bias;
  int32_t last = 0;             // Last: K
  std::vector<int32_t> layers;  // Layers: op indices, ascending, each once
  double fraction = 1.0;        // Layers: share of output channels updated
  bool fraction_given = false;  // Layers: "@FRACTION" was written
};

// Throws std::invalid_argument naming the bad part ("bad spec 'last:x': 'x' is not
// a whole number above 0", ...).
UpdateSpec parse_spec(const std::string& text);
// The spec in the syntax above (parse_spec(spec_text(s)) == s).
std::string spec_text(const UpdateSpec& spec);

// What one weight layer updates.
struct LayerUpdate {
  int32_t op = -1;
  std::string type;
  int32_t out_channels = 0;        // C_out (the output's last dimension)
  int64_t channel_weights = 0;     // weights per output channel (kh*kw*C_in; kh*kw depthwise; C_in dense)
  int32_t weight_channels = 0;     // output channels whose weights are updated (0: none)
  bool bias = false;               // the bias (C_out int32 values) is updated
  int64_t parameters() const { return weight_channels * channel_weights + (bias ? out_channels : 0); }
};

// Weight layers (op indices, ascending).
std::vector<int32_t> weight_layers(const graph::Graph& graph);
// One entry per weight layer that updates something, ascending op index.
// Throws std::invalid_argument for a listed op that is not a weight layer (naming
// its index and type), K above the number of weight layers, or `auto`
// (resolved by plan_training).
std::vector<LayerUpdate> resolve_spec(const graph::Graph& graph, const UpdateSpec& spec);

}  // namespace tinyarena::training
