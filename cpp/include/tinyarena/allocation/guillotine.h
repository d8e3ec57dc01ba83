// Nested-cut (guillotine) search: a plan of a given height with no byte
// wasted between the buffers, found by cutting the buffers into parts, each
// packed on its own. A part packs into [base, base + height) like this:
//
// 1. Look it up: a part refuted before fails at once, one packed before takes
//    its remembered offsets (Search::solve). First every pin must lie inside
//    the part (pins_inside), and under each pin whose first step is full some
//    of the buffers live there must fill the room down to the base exactly
//    (rooms_below_pins_fillable, room_fillable).
// 2. One buffer goes at its pin, else aligned at the base (place).
// 3. A step no buffer crosses splits the part into parts side by side in time
//    (time_components, pack).
// 4. A stack (buffers all live over the same steps, none aligned): its free
//    buffers fill the gaps between its pins exactly, a subset sum per gap,
//    smallest gap first (pack_stack, fill_gap).
// 5. Without pins, the buffers live over the whole part (unaligned, of sizes
//    every alignment there divides) go on top: any nested plan can lift them
//    there, so the part packs iff the rest packs below them (movable_to_top,
//    pack_below).
// 6. Otherwise the part must be flat, its live bytes the same at every step
//    (flat_bytes), and splits into a flat layer below or above the rest. A
//    layer takes as many bytes from the buffers ending at an event as from
//    those starting there, so buffers meeting at events form groups (event
//    components, event_components) and a layer is drawn from one of them at a
//    time (split_layer). Without pins, where every size is a multiple of every
//    alignment, each component packs on its own, one above another
//    (stack_components).
// 7. A layer is chosen event by event through the time line (extend, decide):
//    at each event, of the undecided buffers ending and starting there, a set
//    of equal bytes on both sides, each buffer in or out, largest first
//    (choose). Then the side with fewer buffers is packed first, the layer
//    below the rest, else above it (split).
// 8. The search restarts in rounds of growing work (a short first round, then
//    a seven times longer one, then doubling), sweeping forwards and backwards
//    in turn (Search::run); the parts a round refuted stay refuted.
//
// Pruning, each rule in the function that applies it:
// - choose: a branch ends once the undecided buffers left cannot balance the
//   event (Reach::can_balance).
// - tabulate, choose_listed: past eight undecided buffers at an event, the
//   smallest half (up to 16) are tabulated once by bytes and looked up (meet
//   in the middle); which buffers are undecided at an event depends only on
//   the part, the component and the direction, so each table is kept for
//   later visits (up to 2^20 subsets in all).
// - balanceable_ahead: forward checking: each event ahead that a buffer just
//   decided meets again must still balance (a short search, makes_up).
// - extend (dead_end_key): sweep frontiers (the layer's bytes per event ahead,
//   with its bounds) from which no balanced layer followed are dead ends.
// - advance (LayerBytes): in a part with a pin the sweep bounds the layer's
//   bytes: at least its buffers live past the sweep, at most those plus the
//   undecided ones; a pin decided in the layer lies inside it, one decided out
//   inside the rest (for the layer below the rest and above it).
// - check_pin_rooms, side_fills: at a pin's step next to the event that decides
//   it the part is full, so the buffers there on its side (or undecided) must
//   fill the room from the pin down to the side's base or up to its top; else
//   that place of the layer is ruled out.
// - free_strips, float_below: in a part with a pin, the free buffers live over
//   all of it (unpinned, unaligned, of sizes every alignment there divides) are
//   not layers of their own: a run of them below a layer without pins can
//   trade places with it, so a layer with a pin placed below the rest floats
//   on each set of them (of distinct sizes) that puts its pins inside it, and
//   the others stay in the rest.
// - solve: refuted parts, packed ones (up to 2^21 offsets) and rooms next to
//   pins found fillable or not are remembered across rounds.
//
// Limits: only plans without waste (the live bytes are the height at every
// step of a part) are in reach; a plan that is not nested (a pinwheel), needs
// waste inside, or (with pins or alignments) a layer drawn from several event
// components is not. A part with more than max_choices undecided buffers at
// one event is given up (the result is then not complete).
//
// The sources: guillotine.cpp (the search loop and the parts),
// guillotine_part.cpp (a part's events and components), guillotine_sweep.cpp
// (a layer event by event), guillotine_choices.cpp (the choices at an event),
// guillotine_pins.cpp (pins, free strips, stacks).
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
