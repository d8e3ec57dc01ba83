// FULLY_CONNECTED's double rescale as one integer multiply (integer_rescale.h has the proof).
#include "tinyarena/op_params/integer_rescale.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

namespace tinyarena::op_params {

int32_t apply_integer_rescale(const IntegerRescale& rescale, int32_t acc) {
  const int64_t sum = static_cast<int64_t>(acc) * rescale.mult + (int64_t{1} << (31 + rescale.shift)) - (acc < 0);
  return static_cast<int32_t>(sum >> 32) >> rescale.shift;
}

namespace {

constexpr int32_t kRescaleSearch = 8;  // multipliers tried on each side of the rounded one
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

constexpr int64_t kLeast = std::numeric_limits<int32_t>::min(), kMost = std::numeric_limits<int32_t>::max();

// The least int32 acc with value(acc) >= v, for a non-decreasing `value`; kNever if none. Exact
// for any `guess`; a guess near the answer (both sides' thresholds lie within a few units of
// (v - 1/2) / scale) takes a few evaluations instead of bisecting all of int32: the bracket grows
// from the guess by doubling steps, then is bisected.
template <typename Value>
int64_t least_reaching(const Value& value, double v, int64_t guess) {
  int64_t low = std::clamp(guess, kLeast, kMost), high = low;  // then: low < answer <= high
  if (value(static_cast<int32_t>(high)) >= v) {
    for (int64_t step = 1;; step *= 2) {
      low = std::max(high - step, kLeast - 1);
      if (low < kLeast || value(static_cast<int32_t>(low)) < v) break;
      high = low;
    }
  } else {
    if (value(static_cast<int32_t>(kMost)) < v) return kNever;
    for (int64_t step = 1;; step *= 2) {
      high = std::min(low + step, kMost);
      if (value(static_cast<int32_t>(high)) >= v) break;
      low = high;
    }
  }
  while (high - low > 1) {
    const int64_t middle = low + (high - low) / 2;
    if (value(static_cast<int32_t>(middle)) >= v) high = middle;
    else low = middle;
  }
  return high;
}

// Where acc * scale reaches v - 1/2, clamped into int64 well away from overflow.
int64_t threshold_guess(double scale, int32_t v) {
  return static_cast<int64_t>(std::clamp((v - 0.5) / scale, -0x1p40, 0x1p40));
}

bool proves(const IntegerRescale& rescale, double scale, int32_t lo, int32_t hi) {
  // std::round((double)acc * scale): the C kernel's double path, operation for operation.
  const auto by_double = [scale](int32_t acc) { return std::round(static_cast<double>(acc) * scale); };
  const auto by_integer = [&rescale](int32_t acc) { return static_cast<double>(apply_integer_rescale(rescale, acc)); };
  for (int32_t v = lo + 1; v <= hi; ++v) {
    const int64_t guess = threshold_guess(scale, v);
    if (least_reaching(by_double, v, guess) != least_reaching(by_integer, v, guess)) return false;
  }
  return true;
}

// The search of integer_rescale's steps 1-3, uncached.
std::optional<IntegerRescale> search_integer_rescale(double scale, int32_t lo, int32_t hi) {
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

}  // namespace

std::optional<IntegerRescale> integer_rescale(double scale, int32_t lo, int32_t hi) {
  if (!(scale > 0.0 && scale < 0.25) || lo >= hi) return std::nullopt;
  // A pure function of its arguments at about 10^5 evaluations a candidate, asked for the same
  // arguments by every stage that makes an op's kernel parameters (and by every step of an unrolled
  // recurrent model): answers are kept for the process.
  static std::mutex mutex;
  static std::map<std::tuple<double, int32_t, int32_t>, std::optional<IntegerRescale>> answers;
  const auto key = std::make_tuple(scale, lo, hi);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto found = answers.find(key);
    if (found != answers.end()) return found->second;
  }
  const std::optional<IntegerRescale> answer = search_integer_rescale(scale, lo, hi);
  const std::lock_guard<std::mutex> lock(mutex);
  answers.emplace(key, answer);
  return answer;
}

}  // namespace tinyarena::op_params
