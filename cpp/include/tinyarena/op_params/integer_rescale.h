// FULLY_CONNECTED's double rescale as one integer multiply, proved equal per channel.
//
// TFLite's reference FULLY_CONNECTED rescales its int32 accumulator in double:
//   out = clamp(round(acc * scale), lo, hi) + offset        (round: half away from zero)
// which on a core without a double FPU is a soft-float multiply, round and conversion per output
// (about 270 instructions on a Cortex-M3). integer_rescale finds an int32 multiplier m and shift s
// (1 <= s <= 30, so the sum's low word is just the sign term) with, for every int32 acc,
//   clamp(floor((acc * m + 2^(31 + s) - [acc < 0]) / 2^(32 + s)), lo, hi) == clamp(round(acc * scale), lo, hi)
// (the left side rounds acc * m / 2^(32 + s) half away from zero: one SMLAL and a shift).
//
// The proof: both sides are non-decreasing functions of acc (the double product of an exact int32
// and a positive scale is monotone; so are round and the integer form), so they agree on all of
// int32 exactly when, for every v in (lo, hi], the least acc whose value reaches v is the same on
// both sides (or reaches it on neither): 2 bisections over int32 per v.
//
// Steps:
//   1. m0 = scale * 2^(32 + s) rounded, in [2^30, 2^31): the scale's 31 leading bits;
//   2. the proof above for m0, then m0 -/+ 1, 2, ... (kRescaleSearch): the product's rounding
//      moves a threshold only where acc * scale lies within about 2^-23 of a half;
//   3. none proved: nullopt (the layer keeps the double rescale).
// Limits: scales in (0, 0.25) and above 2^-32 only (s in 1..30). Below about 2^-15 the thresholds
// of large accumulators ask for more than 31 bits of multiplier and the proof often fails (60
// random scales an octave: none failed from 2^-2 to 2^-15, 10 at 2^-16 .. 2^-17, 54 at
// 2^-20 .. 2^-21); trained layers' scales lie around 1e-4 .. 1e-1. Cost: 2 * (hi - lo) * 33
// evaluations of each side per channel and multiplier tried, once per process for each
// (scale, lo, hi): answers are memoized.
#pragma once

#include <cstdint>
#include <optional>

namespace tinyarena::op_params {

struct IntegerRescale {
  int32_t mult = 0;   // m
  int32_t shift = 0;  // s in 1..30: the result is the top word of the 64-bit sum shifted right by s
};

// m, s as above for clamp(round(acc * scale), lo, hi), or nullopt if none is proved.
std::optional<IntegerRescale> integer_rescale(double scale, int32_t lo, int32_t hi);

// The integer side for one accumulator (unclamped): what the C kernel computes.
int32_t apply_integer_rescale(const IntegerRescale& rescale, int32_t acc);

}  // namespace tinyarena::op_params
