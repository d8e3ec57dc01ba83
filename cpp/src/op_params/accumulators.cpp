#include "accumulators.h"

#include <algorithm>

#include "tinyarena/op_params/op_checks.h"

namespace tinyarena::op_params::detail {
namespace {

// The reach of one channel's partial sums: [lowest, highest].
struct Reach {
  int64_t lowest = 0, highest = 0;
  bool fits() const { return lowest >= INT32_MIN && highest <= INT32_MAX; }
};

// Bias plus the worst-case terms of channel c, stopping as soon as it leaves
// int32 (each term is below 2^63 / 2 in magnitude, so the sums cannot wrap).
Reach channel_reach(const ChannelWeights& w, int64_t c, int64_t bias, int64_t x_lo, int64_t x_hi,
                    int64_t weights_offset) {
  Reach r{std::min<int64_t>(bias, 0), std::max<int64_t>(bias, 0)};
  const int8_t* tap = w.data + c * w.channel_step;
  for (int64_t t = 0; t < w.taps && r.fits(); ++t, tap += w.tap_step) {
    const int64_t weight = *tap + weights_offset, a = x_lo * weight, b = x_hi * weight;
    r.lowest += std::min<int64_t>({a, b, 0});
    r.highest += std::max<int64_t>({a, b, 0});
  }
  return r;
}

}  // namespace

void prove_weight_accumulators(const graph::Op& op, const ChannelWeights& weights, const std::vector<int32_t>& bias,
                               int32_t input_offset, int32_t weights_offset) {
  const int64_t x_lo = int64_t{-128} + input_offset, x_hi = int64_t{127} + input_offset;
  for (int64_t c = 0; c < weights.channels; ++c) {
    const int64_t b = bias.empty() ? 0 : bias[static_cast<size_t>(c)];
    const Reach r = channel_reach(weights, c, b, x_lo, x_hi, weights_offset);
    if (r.fits()) continue;
    const bool below = r.lowest < INT32_MIN;
    unsupported(op, "the int32 accumulator of output channel " + std::to_string(c) + " can reach " +
                        std::to_string(below ? r.lowest : r.highest) + " (bias " + std::to_string(b) +
                        ", inputs in [-128, 127]), " + (below ? "below" : "above") + " the int32 range");
  }
}

void prove_int8_sum(const graph::Op& op, int64_t count, const char* what) {
  if (count > INT32_MAX / 255)
    unsupported(op, std::string(what) + " sums " + std::to_string(count) +
                        " int8 values: the int32 sum can leave int32 (at most " + std::to_string(INT32_MAX / 255) +
                        ")");
}

}  // namespace tinyarena::op_params::detail
