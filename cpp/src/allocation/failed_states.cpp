#include "tinyarena/allocation/failed_states.h"

#include <utility>

namespace tinyarena::allocation {

bool FailedStates::contains(const Fingerprint& f) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = f.b & mask;; i = (i + 1) & mask) {
    if (slots_[i].a == 0) return false;
    if (slots_[i].a == f.a && slots_[i].b == f.b) return true;
  }
}

void FailedStates::insert(const Fingerprint& f) {
  if (4 * (used_ + 1) > 3 * slots_.size()) {
    if (slots_.size() == kMaxSlots) return;
    std::vector<Fingerprint> old = std::exchange(slots_, std::vector<Fingerprint>(2 * slots_.size()));
    for (const Fingerprint& g : old)
      if (g.a != 0) put(g);
  }
  if (!contains(f)) put(f), ++used_;
}

// Into the first free slot from f's home (the table has one).
void FailedStates::put(const Fingerprint& f) {
  const size_t mask = slots_.size() - 1;
  size_t i = f.b & mask;
  while (slots_[i].a != 0) i = (i + 1) & mask;
  slots_[i] = f;
}

}  // namespace tinyarena::allocation
