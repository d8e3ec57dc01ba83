// The nested-cut search's view of a set of buffers (a part): their steps
// renumbered as events (each buffer's start and end), the buffers starting
// and ending at each event largest first, and the groups a flat layer is
// drawn from. Invariant: every per-event list keeps the buffers largest
// first (larger_first), so the searches over them cut early.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/common/flat_lists.h"

namespace tinyarena::allocation::nested_cuts {

// A buffer at an event of a part: the choice there.
struct Item {
  int32_t buffer;  // part index
  int64_t bytes;   // its size, negative if it starts at the event
};

// A part's buffers with their steps renumbered: event times are the starts
// and the ends (last + 1); section j lies between events j and j + 1.
struct Part {
  std::vector<int32_t> buffers;                   // problem indices, ascending
  std::vector<int64_t> size;                      // per buffer: its bytes
  std::vector<int32_t> start, end;                // per buffer: its first event and the event after its last step
  int32_t sections = 0;
  FlatLists<int32_t> starting, ending;            // per event: the buffers (part indices) starting / ending there,
                                                  // largest first (larger_first)
  FlatLists<Item> touching;                       // per event: both, merged largest first, starting ones negative
  FlatLists<int32_t> ahead[2];                    // per sweep direction (forwards, backwards) and event: the events
                                                  // inside the part that the buffers decided there meet next, each
                                                  // once, in the order of those buffers
};

// Largest first, ties by index: the order of an event's buffers.
inline bool larger_first(int64_t size_u, int32_t u, int64_t size_v, int32_t v) {
  return size_u != size_v ? size_u > size_v : u < v;
}

// Per event, the events ahead of the buffers decided there (sweeping
// backwards: those ending there), each once (Part::ahead).
FlatLists<int32_t> events_ahead(const Part& part, bool backwards);

// The part of the problem's `buffers` (ascending), its lists filled in.
Part make_part(const Problem& p, std::vector<int32_t> buffers);

// The parts of `buffers` that no step joins (a step none of them crosses
// separates them), each ascending.
std::vector<std::vector<int32_t>> time_components(const Problem& p, std::vector<int32_t> buffers);

// The part's live bytes if they are the same at every step, else -1.
int64_t flat_bytes(const Problem& p, const Part& part);

// Buffers that start or end at the same event inside a part are joined: a
// flat layer takes as many bytes from the ending ones as from the starting
// ones there, so its share of each such group is balanced. Per part
// buffer, its group (indices into the returned lists).
std::vector<std::vector<int32_t>> event_components(const Part& part);

}  // namespace tinyarena::allocation::nested_cuts
