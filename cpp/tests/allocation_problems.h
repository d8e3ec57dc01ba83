// Small allocation problems the allocator tests share: random ones with
// pins and alignments, zero-slack ones cut by nested cuts (optimum known),
// and a brute-force optimum to check the searches against.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/problem.h"

namespace tinyarena::allocation::testing {

inline uint64_t next_random(uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return state >> 33;
}

// Up to `max_buffers` small buffers with mixed alignments (`odd`: 3 and 6
// among them); a few pinned at the offsets a greedy plan gave them (so the
// pins never contradict).
inline Problem small_problem(uint64_t seed, int max_buffers, bool odd = false) {
  Problem p;
  const int n = 1 + static_cast<int>(next_random(seed) % max_buffers);
  const int64_t alignments[] = {1, odd ? 3 : 1, 2, odd ? 6 : 4, odd ? 4 : 8};
  for (int i = 0; i < n; ++i) {
    Buffer b;
    b.first = static_cast<int32_t>(next_random(seed) % 8);
    b.last = b.first + static_cast<int32_t>(next_random(seed) % 4);
    b.size = 1 + static_cast<int64_t>(next_random(seed) % 12);
    b.alignment = alignments[next_random(seed) % 5];
    p.buffers.push_back(b);
  }
  const Solution greedy = greedy_size_first_fit(p);
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (next_random(seed) % 6 == 0) p.buffers[i].fixed_offset = greedy.offsets[i];
  return p;
}

// Brute force: the lowest height over every order of the free buffers, each
// order decoded by dropping each buffer to the lowest aligned offset above
// the earlier ones it overlaps that misses every pinned buffer (any optimal
// plan is such a decoding of the order of its offsets). Branch and bound on
// the height so far; two neighbours in the order that do not overlap in time
// commute, so only their ascending order is tried.
inline int64_t brute_force_height(const Problem& p) {
  std::vector<int> free_buffers;
  std::vector<int64_t> offsets(p.buffers.size(), 0);
  int64_t pinned_top = 0;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    if (p.buffers[i].fixed_offset) {
      offsets[i] = *p.buffers[i].fixed_offset;
      pinned_top = std::max(pinned_top, offsets[i] + p.buffers[i].size);
    } else {
      free_buffers.push_back(static_cast<int>(i));
    }
  }
  const auto collides = [&](int b, int64_t at, const std::vector<int>& others) {
    for (int o : others)
      if (lifetimes_overlap(p.buffers[b], p.buffers[o]) && at < offsets[o] + p.buffers[o].size &&
          offsets[o] < at + p.buffers[b].size)
        return true;
    return false;
  };
  std::vector<int> pinned;
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (p.buffers[i].fixed_offset) pinned.push_back(static_cast<int>(i));
  int64_t best = std::numeric_limits<int64_t>::max();
  std::vector<int> placed;
  std::vector<bool> used(p.buffers.size(), false);
  std::function<void(int64_t)> extend = [&](int64_t height) {
    if (height >= best) return;
    if (placed.size() == free_buffers.size()) {
      best = height;
      return;
    }
    for (int b : free_buffers) {
      if (used[b]) continue;
      if (!placed.empty() && placed.back() > b && !lifetimes_overlap(p.buffers[b], p.buffers[placed.back()])) continue;
      int64_t at = 0;
      for (int o : placed)
        if (lifetimes_overlap(p.buffers[b], p.buffers[o])) at = std::max(at, offsets[o] + p.buffers[o].size);
      at = align_up(at, p.buffers[b].alignment);
      while (collides(b, at, pinned)) at += p.buffers[b].alignment;
      offsets[b] = at;
      used[b] = true;
      placed.push_back(b);
      extend(std::max(height, at + p.buffers[b].size));
      placed.pop_back();
      used[b] = false;
    }
  };
  extend(pinned_top);
  return best;
}

// A `height` x 6 rectangle (address x steps) cut by random guillotine cuts
// into 2 to `max_pieces` buffers, so the optimum is `height` with no slack
// at any step; `aligned`: address cuts on a 2-byte grid and alignments the
// cut offsets satisfy; a few buffers pinned at their cut offsets.
inline Problem tight_problem(uint64_t seed, bool aligned, size_t max_pieces = 9, int64_t height = 24, bool pins = true) {
  struct Rect {
    int32_t t0, t1;
    int64_t a0, a1;
  };
  const int64_t grid = aligned ? 2 : 1;
  std::vector<Rect> rects{{0, 6, 0, height}};
  const size_t pieces = 2 + next_random(seed) % (max_pieces - 1);
  while (rects.size() < pieces) {
    Rect r = rects[next_random(seed) % rects.size()];
    const bool by_time = r.t1 - r.t0 >= 2 && (r.a1 - r.a0 < 2 * grid || next_random(seed) % 2 == 0);
    if (!by_time && r.a1 - r.a0 < 2 * grid) continue;
    rects.erase(std::find_if(rects.begin(), rects.end(), [&](const Rect& x) { return x.t0 == r.t0 && x.a0 == r.a0; }));
    if (by_time) {
      const int32_t cut = r.t0 + 1 + static_cast<int32_t>(next_random(seed) % (r.t1 - r.t0 - 1));
      rects.push_back({r.t0, cut, r.a0, r.a1});
      rects.push_back({cut, r.t1, r.a0, r.a1});
    } else {
      const int64_t cut = r.a0 + grid * (1 + static_cast<int64_t>(next_random(seed) % ((r.a1 - r.a0) / grid - 1)));
      rects.push_back({r.t0, r.t1, r.a0, cut});
      rects.push_back({r.t0, r.t1, cut, r.a1});
    }
  }
  Problem p;
  for (const Rect& r : rects) {
    Buffer b{"", r.a1 - r.a0, r.t0, r.t1 - 1, 1, std::nullopt};
    if (aligned) b.alignment = std::min<int64_t>(r.a0 == 0 ? 8 : r.a0 & -r.a0, int64_t{1} << (next_random(seed) % 4));
    if (next_random(seed) % 8 == 0 && pins) b.fixed_offset = r.a0;
    p.buffers.push_back(b);
  }
  return p;
}

}  // namespace tinyarena::allocation::testing
