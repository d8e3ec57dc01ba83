// Search states of the exact solver proven to have no completion at one
// capacity, kept as 128-bit fingerprints (two independent 64-bit hashes, so
// a false match is astronomically unlikely) in an open-addressing table that
// doubles when three quarters full, up to a fixed size; then new states are
// no longer recorded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tinyarena::allocation {

struct Fingerprint {
  uint64_t a = 0, b = 0;  // a == 0 marks an empty slot (never produced by FingerprintBuilder)
};

// Accumulates a sequence of values into a fingerprint (order matters).
class FingerprintBuilder {
 public:
  void add(uint64_t value) {  // inline: the searches add a few values per node
    a_ = mix(a_ ^ value);
    b_ = mix(b_ + 0x9e3779b97f4a7c15ull * (value + 1));
  }
  Fingerprint done() const { return {a_ | 1, b_}; }

 private:
  // splitmix64's finaliser: a bijective mix of all 64 bits.
  static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }

  uint64_t a_ = 0x243f6a8885a308d3ull, b_ = 0x13198a2e03707344ull;
};

class FailedStates {
 public:
  bool contains(const Fingerprint& f) const;
  void insert(const Fingerprint& f);
  // Starts loading f's home slot (a table larger than the caches misses
  // there): a lookup after some other work then finds it in the cache.
  void prefetch(const Fingerprint& f) const {
#if defined(__GNUC__)
    __builtin_prefetch(&slots_[f.b & (slots_.size() - 1)]);
#endif
  }

 private:
  static constexpr size_t kMaxSlots = size_t{1} << 21;
  void put(const Fingerprint& f);
  std::vector<Fingerprint> slots_ = std::vector<Fingerprint>(1024);
  size_t used_ = 0;
};

}  // namespace tinyarena::allocation
