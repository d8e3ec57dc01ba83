// Nested-cut (guillotine) search for plans without waste. A set of buffers
// whose live bytes are the same, H, at every step of its span packs into height
// H with nested cuts when it is one buffer of size H, or splits at a step no
// buffer crosses into parts side by side in time, or splits into a flat layer
// -- buffers whose live bytes are the same c at every step -- below or above
// the rest (H - c at every step), each part packed the same way. A layer takes
// as many bytes from the buffers ending at an event as from those starting
// there, so buffers meeting at events form groups (event components) a layer is
// chosen from one at a time: event by event through the time line, some of the
// undecided buffers ending there and some of those starting there, of equal
// bytes (each in or out, largest first, cut once the rest cannot balance them;
// past eight of them the smallest half, up to 16, are tabulated once by bytes
// and looked up: meet in the middle; which buffers are undecided at an event
// depends only on the part, the component and the sweep's direction, so each
// table is kept for later visits, up to 2^20 subsets in all). With
// byte-granular sizes equal sums are rare, so there are few layers to try.
// Forward checking: each event ahead that a buffer just decided meets again
// must still balance (a short search over its undecided buffers, largest
// first). In a part with a pin the sweep also bounds the layer's bytes: at
// least its buffers live past the sweep, at most those plus the undecided ones,
// and a pin decided in the layer must lie inside it, one decided out inside the
// rest (for the layer below the rest and for the layer above it); a sweep that
// leaves no height possible ends there; so does one where a pin it decided
// cannot be flush with its side: at the pin's step next to the event the part
// is full, so the buffers there on its side (or undecided) must fill the room
// from the pin down to the side's base or up to its top, whichever is the
// part's for the layer below the rest or above it (else that place is ruled
// out). Before a part is searched, under each pin whose first step is full,
// some of the buffers live there must fill the room down to the base exactly:
// short depth-first searches over their sizes, largest first, decide these
// (past their nodes the room counts as fillable). In a part with a pin, the
// free buffers live over all of it (unpinned, unaligned, of sizes every
// alignment there divides) are not layers of their own: a run of them just
// below a layer without pins can trade places with it, so some plan has each
// run just below a layer with a pin or on top. A layer with a pin placed below
// the rest floats on each set of them (of distinct sizes) that puts its pins
// inside it; the others stay in the rest.
// A layer's side with fewer buffers is packed first. Refuted parts are
// remembered, packed ones with their offsets from the base (up to 2^21
// offsets), and so are sweep frontiers (the layer's bytes per event ahead, with
// the bounds) from which no balanced layer follows, and rooms next to pins found
// fillable or not; the search restarts with growing work (a short first
// round, then a seven times longer one, then doubling), sweeping forwards and
// backwards in turn. A stack (buffers all live over the same steps, none
// aligned) is packed directly: its free buffers fill the gaps between its pins
// exactly, a subset sum per gap, smallest gap first. Without pins, the buffers
// live over a whole part (unaligned, of sizes every alignment there divides) go
// on top of it: any nested plan can lift them there, so the part packs iff the
// rest packs below them. Without pins, where every size is a multiple of every
// alignment, a part packs iff each of its event components does (each is flat,
// and taking the others' buffers out of the layers of a nested plan and closing
// the gaps leaves one of it), so they are packed one above another. It applies
// where no byte may be wasted (the live bytes are the height at every step of a
// part); a plan that is not nested (a pinwheel), needs waste inside, or (with
// pins or alignments) a layer drawn from several event components is out of its
// reach.
#pragma once

#include <cstdint>
#include <optional>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::allocation {

struct GuillotineOptions {
  static constexpr double kDefaultSeconds = 0.05;
  WorkBudget budget{kDefaultSeconds};  // deterministic work (WorkBudget(0): none)
  int32_t max_choices = 64;            // a part is given up where more buffers are undecided at one event
};

struct GuillotineResult {
  std::optional<Solution> solution;  // a nested-cut plan of the height asked for, if found
  int64_t parts = 0;                 // parts of the buffers searched
  int64_t work = 0;                  // work units spent
  bool complete = false;             // not found, and every choice within reach was refuted (no budget or
                                     // max_choices limit stopped it)
};

// A nested-cut plan of `height` without waste between the buffers: every
// span of the time line no buffer crosses must have the same live bytes at
// each of its steps (its own height, at most `height`; its waste on top).
GuillotineResult guillotine_search(const Problem& problem, int64_t height, GuillotineOptions options = {});

}  // namespace tinyarena::allocation
