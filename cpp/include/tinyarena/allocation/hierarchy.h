// Placement across a memory hierarchy (fastest memory first), with the
// constraints of ExecuTorch's Cadence planner and Vela's fast-storage idea:
// per-buffer pins (memory, offset), blocked memories, and "lives at offset k
// inside buffer Y" relations (views, slices, zero-copy concatenation).
// When not everything fits the fast memory, the buffers kept there are the
// ones that maximise the bytes accessed in it: exact for small groups of
// competing buffers, beyond them greedy (by access density or by accessed
// bytes, whichever keeps more accessed bytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/allocation/allocators.h"
#include "tinyarena/allocation/problem.h"

namespace tinyarena::allocation {

struct Memory {
  std::string name;
  int64_t size = 0;
  int64_t alignment = 16;     // every offset in this memory is a multiple of it
  uint64_t base_address = 0;  // where the memory starts on the device
};

// Throws std::invalid_argument unless size >= 0 and alignment >= 1.
void check_memory(const Memory& memory);

struct BufferRules {
  int32_t memory = -1;                  // pinned to this memory (-1: free to choose)
  std::vector<int32_t> blocked;         // memories it may not use
  int32_t inside = -1;                  // lives inside this other buffer...
  int64_t inside_offset = 0;            // ...at this offset from its start
  int64_t accessed_bytes = -1;          // traffic it causes; -1 means its size
};

struct HierarchyProblem {
  std::vector<Memory> memories;  // fastest first
  Problem problem;               // buffer.fixed_offset pins an offset inside its memory
  std::vector<BufferRules> rules;  // one per buffer (may be empty: no rules)
};

struct HierarchySolution {
  std::vector<int32_t> memory;   // per buffer
  std::vector<int64_t> offsets;  // per buffer, inside its memory
  std::vector<int64_t> heights;  // per memory: its peak
  std::vector<int64_t> accessed_bytes;  // per memory: bytes accessed in it
  std::vector<bool> proven_optimal;      // per memory: no lower peak for the buffers it holds
  std::vector<int64_t> lower_bounds;     // per memory: proven floor of its peak for those buffers
};

// Places every buffer. Throws std::invalid_argument when the rules
// contradict each other or some buffer fits no memory it may use (naming
// the buffer and the bytes needed against what is left).
// Which buffers go where is decided with the greedy placements; with a
// non-empty `allocator` (a name of allocator_names()), each memory's buffers
// are then placed by it when that gives a lower peak, and buffers that must
// live in a memory where greedy placement overflows get that allocator's try.
HierarchySolution place_in_hierarchy(const HierarchyProblem& problem, const std::string& allocator = "",
                                     const AllocatorOptions& options = {});

// The baseline to beat: each buffer, largest first, into the fastest
// allowed memory where first fit keeps the memory within its size (then, as
// above, each memory's buffers placed by `allocator` when it lowers the peak).
HierarchySolution place_fastest_first(const HierarchyProblem& problem, const std::string& allocator = "",
                                      const AllocatorOptions& options = {});

// The fewer bytes of two plans -- place_in_hierarchy's (most accessed bytes
// first) and place_fastest_first's (largest buffers first), each memory placed
// by `allocator` -- summed over the memories; of equal sums, the one with more
// bytes accessed in the faster memories. Throws as place_in_hierarchy when
// neither places every buffer.
HierarchySolution place_fewest_bytes(const HierarchyProblem& problem, const std::string& allocator = "",
                                     const AllocatorOptions& options = {});

// Violations: a buffer outside its memory or overlapping another in time
// and address there, a broken pin, block or inside relation, misalignment.
std::vector<std::string> validate_hierarchy(const HierarchyProblem& problem, const HierarchySolution& solution);

}  // namespace tinyarena::allocation
