// FULLY_CONNECTED's double rescale as one integer multiply (integer_rescale.h has the proof).
#include "tinyarena/op_params/integer_rescale.h"

#include <cmath>
#include <functional>
#include <limits>

namespace tinyarena::op_params {
namespace {

constexpr int32_t kRescaleSearch = 8;  // multipliers tried on each side of the rounded one
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// The least int32 acc with value(acc) >= v, for a non-decreasing `value`; kNever if none.
int64_t least_reaching(const std::function<double(int32_t)>& value, double v) {
  int64_t low = std::numeric_limits<int32_t>::min(), high = std::numeric_limits<int32_t>::max();
  if (value(static_cast<int32_t>(high)) < v) return kNever;
  while (low < high) {  // value(high) >= v holds throughout
    const int64_t middle = low + (high - low) / 2;
    if (value(static_cast<int32_t>(middle)) >= v) high = middle;
    else low = middle + 1;
  }
  return low;
}

bool proves(const IntegerRescale& rescale, double scale, int32_t lo, int32_t hi) {
  // std::round((double)acc * scale): the C kernel's double path, operation for operation.
  const auto by_double = [scale](int32_t acc) { return std::round(static_cast<double>(acc) * scale); };
  const auto by_integer = [&rescale](int32_t acc) { return static_cast<double>(apply_integer_rescale(rescale, acc)); };
  for (int32_t v = lo + 1; v <= hi; ++v)
    if (least_reaching(by_double, v) != least_reaching(by_integer, v)) return false;
  return true;
}

}  // namespace

int32_t apply_integer_rescale(const IntegerRescale& rescale, int32_t acc) {
  const int64_t sum = static_cast<int64_t>(acc) * rescale.mult + (int64_t{1} << (31 + rescale.shift)) - (acc < 0);
  return static_cast<int32_t>(sum >> 32) >> rescale.shift;
}

std::optional<IntegerRescale> integer_rescale(double scale, int32_t lo, int32_t hi) {
  if (!(scale > 0.0 && scale < 0.25) || lo >= hi) return std::nullopt;
  int exponent = 0;
  const double fraction = std::frexp(scale, &exponent);  // scale = fraction * 2^exponent, fraction in [0.5, 1)
  int64_t rounded = std::llround(std::ldexp(fraction, 31));  // in [2^30, 2^31]
  int32_t shift = -1 - exponent;                              // m0 = fraction * 2^31 = scale * 2^(32 + s)
  if (rounded == (int64_t{1} << 31)) rounded >>= 1, --shift;
  if (shift < 1 || shift > 30) return std::nullopt;
  for (int32_t step = 0; step <= 2 * kRescaleSearch; ++step) {  // m0, m0 - 1, m0 + 1, m0 - 2, ...
    const int64_t mult = rounded + (step % 2 ? -(step + 1) / 2 : step / 2);
    const IntegerRescale candidate{static_cast<int32_t>(mult), shift};
    if (mult < (int64_t{1} << 30) || mult > std::numeric_limits<int32_t>::max()) continue;
    if (proves(candidate, scale, lo, hi)) return candidate;
  }
  return std::nullopt;
}

}  // namespace tinyarena::op_params
