// FULLY_CONNECTED's double rescale as one integer multiply (integer_rescale.h): what it proves,
// checked here independently of the proof by evaluating both sides directly.
#include "test_framework.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "tinyarena/common/random.h"
#include "tinyarena/op_params/integer_rescale.h"

using namespace tinyarena::op_params;

namespace {

int32_t clamp(int64_t x, int32_t lo, int32_t hi) { return static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(x, lo), hi)); }

// clamp(round(acc * scale)) as the C kernel's double path computes it.
int32_t by_double(double scale, int32_t acc, int32_t lo, int32_t hi) {
  const double y = std::round(static_cast<double>(acc) * scale);
  return y < lo ? lo : y > hi ? hi : static_cast<int32_t>(y);
}

// Both sides agree at every accumulator next to each half-integer threshold and at random ones.
bool agrees_near_thresholds(const IntegerRescale& rescale, double scale, int32_t lo, int32_t hi,
                            tinyarena::SplitMix64& random) {
  const auto same = [&](int64_t acc) {
    if (acc < std::numeric_limits<int32_t>::min() || acc > std::numeric_limits<int32_t>::max()) return true;
    const int32_t a = static_cast<int32_t>(acc);
    return by_double(scale, a, lo, hi) == clamp(apply_integer_rescale(rescale, a), lo, hi);
  };
  for (int32_t v = lo; v <= hi + 1; ++v) {
    const double edge = (v - 0.5) / scale;
    if (std::fabs(edge) > 3e9) continue;
    for (int64_t acc = static_cast<int64_t>(std::floor(edge)) - 2; acc <= static_cast<int64_t>(std::ceil(edge)) + 2; ++acc)
      if (!same(acc)) return false;
  }
  for (int i = 0; i < 2000; ++i)
    if (!same(static_cast<int32_t>(static_cast<uint32_t>(random.next())))) return false;
  return same(std::numeric_limits<int32_t>::min()) && same(std::numeric_limits<int32_t>::max());
}

}  // namespace

TEST(integer_rescale_matches_the_double_rescale_on_trained_scales) {
  tinyarena::SplitMix64 random{27};
  int proved = 0;
  for (int trial = 0; trial < 300; ++trial) {
    // 2^-2.05 .. 2^-15: trained layers' in_scale * w_scale / out_scale lie around 1e-4 .. 1e-1
    const double scale = std::exp2(-2.05 - 13.0 * static_cast<double>(random.next() % 100000) / 100000.0);
    const int32_t offset = static_cast<int32_t>(random.next() % 256) - 128;
    const int32_t lo = -128 - offset, hi = (trial % 3 == 0 ? 0 : 127) - offset;  // ReLU-like on a third
    const std::optional<IntegerRescale> rescale = integer_rescale(scale, lo, hi);
    if (!rescale) continue;
    ++proved;
    CHECK(rescale->shift >= 1 && rescale->shift <= 30);
    CHECK(agrees_near_thresholds(*rescale, scale, lo, hi, random));
  }
  CHECK(proved == 300);  // every one above 2^-15 so far (a miss keeps the double rescale: only slower)
}

TEST(integer_rescale_rounds_exact_halves_away_from_zero) {
  // scale 2^-7: acc = +-64 is exactly +-0.5, which round() takes to +-1.
  const std::optional<IntegerRescale> rescale = integer_rescale(std::ldexp(1.0, -7), -200, 200);
  CHECK(rescale.has_value());
  CHECK(apply_integer_rescale(*rescale, 64) == 1);
  CHECK(apply_integer_rescale(*rescale, -64) == -1);
  CHECK(apply_integer_rescale(*rescale, 63) == 0);
  CHECK(apply_integer_rescale(*rescale, -63) == 0);
  CHECK(apply_integer_rescale(*rescale, 192) == 2);   // 1.5 -> 2
  CHECK(apply_integer_rescale(*rescale, -192) == -2);
  tinyarena::SplitMix64 random{3};  // the direct comparison sees a multiplier 2^-8 off
  CHECK(agrees_near_thresholds(*rescale, std::ldexp(1.0, -7), -200, 200, random));
  CHECK(!agrees_near_thresholds({rescale->mult - (1 << 22), rescale->shift}, std::ldexp(1.0, -7), -200, 200, random));
}

TEST(integer_rescale_declines_scales_outside_its_range) {
  CHECK(!integer_rescale(0.25, -128, 127).has_value());  // shift 0
  CHECK(!integer_rescale(0.5, -128, 127).has_value());
  CHECK(!integer_rescale(3.0, -128, 127).has_value());
  CHECK(!integer_rescale(0.0, -128, 127).has_value());
  CHECK(!integer_rescale(-0.01, -128, 127).has_value());
  CHECK(!integer_rescale(std::nan(""), -128, 127).has_value());
  CHECK(!integer_rescale(1e-12, -128, 127).has_value());  // shift above 30
}
