// Compile-time proofs that the kernels' int32 accumulators stay in int32 for
// every int8 input, so that no model runs into signed overflow (undefined
// behaviour in C). Each throws UnsupportedError naming the op and, for the
// weight layers, the output channel whose accumulator can leave int32.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/graph/graph.h"

namespace tinyarena::op_params::detail {

// The weights of one output channel: `taps` int8 values, tap t of channel c at
// data[c * channel_step + t * tap_step].
struct ChannelWeights {
  const int8_t* data = nullptr;
  int64_t channels = 0, taps = 0, channel_step = 0, tap_step = 0;
};

// CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED: acc = bias[c] + sum over taps of
// (x + input_offset) * (w + weights_offset), x any int8. Proves that every
// partial sum, in whatever order the kernel adds the terms (portable and SIMD
// paths, padding taps left out), lies in int32: per channel the bias and the
// worst-case positive (negative) terms all added, in int64.
void prove_weight_accumulators(const graph::Op& op, const ChannelWeights& weights, const std::vector<int32_t>& bias,
                               int32_t input_offset, int32_t weights_offset);

// AVERAGE_POOL_2D and MEAN sum up to `count` int8 values minus the zero point
// in int32: proves 255 * count fits.
void prove_int8_sum(const graph::Op& op, int64_t count, const char* what);

}  // namespace tinyarena::op_params::detail
