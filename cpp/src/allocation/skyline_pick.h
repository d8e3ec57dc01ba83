// The skyline search's choice at one step: candidates offered with a rank key,
// the best taken, or with probability `noise` the runner-up (randomized restarts
// explore near-greedy constructions this way). Private to skyline.cpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "tinyarena/common/random.h"

namespace tinyarena::allocation::skyline {

using Key = std::array<int64_t, 4>;  // candidate rank, larger is better, compared in order

// The best and runner-up of the offered candidates.
struct Pick {
  size_t best = SIZE_MAX, second = SIZE_MAX;
  Key best_key{}, second_key{};

  void offer(size_t index, const Key& key) {
    if (best == SIZE_MAX || key > best_key) {
      second = best;
      second_key = best_key;
      best = index;
      best_key = key;
    } else if (second == SIZE_MAX || key > second_key) {
      second = index;
      second_key = key;
    }
  }

  // The best, or with probability `noise` the runner-up; `none` if nothing was offered.
  size_t choice(size_t none, double noise, SplitMix64& rng) const {
    if (best == SIZE_MAX) return none;
    if (noise > 0 && second != SIZE_MAX && static_cast<double>(rng.next() >> 11) * 0x1.0p-53 < noise) return second;
    return best;
  }
};

}  // namespace tinyarena::allocation::skyline
