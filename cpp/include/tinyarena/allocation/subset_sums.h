// Subset sums for the room below a pin: can the buffers that fit under a pin
// fill the room below it (to within the slack)? Byte-granular sizes rarely
// hit such a window by chance. The exact search lists the bounded sums (the
// totals in [0, limit] some subset reaches, kept sorted while there are few);
// the nested-cut and skyline searches, which need the room filled exactly,
// search for one subset (sums_to, may_fill_room).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tinyarena::allocation {

class SubsetSums {
 public:
  explicit SubsetSums(size_t max_sums) : max_sums_(max_sums) {}

  // Back to the empty subset, sums up to `limit`.
  void reset(int64_t limit);
  // Adds a size: every sum so far, with and without it. False once the sums
  // outnumber max_sums (then the list is incomplete and reaches() unreliable).
  bool add(int64_t size);
  // Some subset sums into [lo, hi] (hi <= limit).
  bool reaches(int64_t lo, int64_t hi) const;
  // add(size), then: some subset sums into [lo, hi] -- or the list gave up,
  // and unknown counts as reachable (a check that refutes on false stays sound).
  bool add_may_reach(int64_t size, int64_t lo, int64_t hi) { return !add(size) || reaches(lo, hi); }
  size_t count() const { return sums_.size(); }

 private:
  size_t max_sums_;
  int64_t limit_ = 0;
  std::vector<int64_t> sums_{0}, merged_;  // ascending; scratch of add()
};

// Whether some of `sizes` (positive, largest first) sum to exactly `target`,
// by a depth-first search (each size in, then out; cut once the rest fall
// short) of at most `nodes` nodes (decremented as spent): nullopt if they ran out.
std::optional<bool> sums_to(const std::vector<int64_t>& sizes, int64_t target, int64_t& nodes);

// The nodes a room below a pin gets: past them it counts as fillable.
constexpr int64_t kRoomNodes = 1024;

// Whether some of `sizes` (sorted here, largest first) may fill `room`
// exactly: sums_to() within kRoomNodes nodes, true if they ran out. Sets
// `nodes_used` to the nodes it spent (a caller charges them).
bool may_fill_room(std::vector<int64_t>& sizes, int64_t room, int64_t& nodes_used);

}  // namespace tinyarena::allocation
