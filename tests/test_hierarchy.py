"""Placement across a memory hierarchy with pins, blocklists and 'inside' relations."""

import numpy as np
import pytest

import tinyarena
from tinyarena import allocation
from tinyarena.allocation import Buffer, BufferRules, HierarchyProblem, Memory, Problem
from real_models import real_model

KIB = 1024
MEMORIES = [Memory("TCM", 32 * KIB), Memory("SRAM", 64 * KIB), Memory("EXT", 8 * 1024 * KIB)]


def test_model_that_does_not_fit_tcm_spreads_over_three_memories():
    plan = tinyarena.plan(real_model("vww_96_int8"))
    assert plan.peak_bytes > MEMORIES[0].size  # the model does not fit the first memory
    sizes = [b.size for b in plan.buffers]
    input_buffer = next(i for i, b in enumerate(plan.buffers) if plan.graph.inputs[0] in b.tensors)
    largest = int(np.argmax(sizes))
    rules = {input_buffer: BufferRules(memory=2),  # the camera frame lives in external RAM
             largest: BufferRules(blocked=[0, 1]) if largest != input_buffer else BufferRules(memory=2)}
    problem = allocation.hierarchy_from_plan(plan, MEMORIES, rules)
    ours = allocation.place_in_hierarchy(problem)
    baseline = allocation.place_fastest_first(problem)
    assert allocation.validate_hierarchy(problem, ours) == []
    assert allocation.validate_hierarchy(problem, baseline) == []
    assert ours.memory[input_buffer] == 2 and ours.memory[largest] == 2
    assert all(h <= m.size for h, m in zip(ours.heights, MEMORIES))
    assert ours.accessed_bytes[0] >= baseline.accessed_bytes[0]
    assert ours.accessed_bytes[0] + ours.accessed_bytes[1] >= baseline.accessed_bytes[0] + baseline.accessed_bytes[1]
    assert sum(ours.accessed_bytes) == sum(baseline.accessed_bytes)


def test_exact_choice_beats_greedy_on_a_knapsack_trap():
    # Fast memory of 100 B, all live at once: greedy largest-first takes the 60 B buffer
    # (traffic 60); the best choice is the two 50 B buffers (traffic 100 + 100).
    problem = Problem([Buffer(60, 0, 0), Buffer(50, 0, 0), Buffer(50, 0, 0)])
    rules = [BufferRules(accessed_bytes=60), BufferRules(accessed_bytes=100), BufferRules(accessed_bytes=100)]
    h = HierarchyProblem([Memory("fast", 100, alignment=1), Memory("slow", 1000, alignment=1)], problem, rules)
    ours, baseline = allocation.place_in_hierarchy(h), allocation.place_fastest_first(h)
    assert list(ours.memory) == [1, 0, 0] and ours.accessed_bytes[0] == 200
    assert baseline.accessed_bytes[0] == 60
    assert allocation.validate_hierarchy(h, ours) == []


def test_inside_relation_places_a_slice_in_its_parent():
    # A concatenation written in place: producers b and c live inside a's buffer at 0 and 32.
    problem = Problem([Buffer(64, 2, 3, name="concat"), Buffer(32, 0, 2, name="left"), Buffer(32, 1, 2, name="right"),
                       Buffer(48, 0, 3, name="other")])
    rules = [BufferRules(), BufferRules(inside=0, inside_offset=0), BufferRules(inside=0, inside_offset=32),
             BufferRules()]
    h = HierarchyProblem([Memory("sram", 4096)], problem, rules)
    s = allocation.place_in_hierarchy(h)
    assert allocation.validate_hierarchy(h, s) == []
    assert s.offsets[1] == s.offsets[0] and s.offsets[2] == s.offsets[0] + 32
    assert s.heights[0] == 64 + 48


def test_pinned_offsets_and_impossible_rules_are_clear():
    problem = Problem([Buffer(64, 0, 1, fixed_offset=128), Buffer(64, 0, 1)])
    h = HierarchyProblem([Memory("a", 256)], problem, [BufferRules(memory=0), BufferRules()])
    s = allocation.place_in_hierarchy(h)
    assert s.offsets[0] == 128 and allocation.validate_hierarchy(h, s) == []
    too_big = HierarchyProblem([Memory("a", 100), Memory("b", 100)], Problem([Buffer(150, 0, 0)]), [])
    with pytest.raises(ValueError, match="memory .b. need at least 150 bytes .* but it has 100"):
        allocation.place_in_hierarchy(too_big)
    cyclic = HierarchyProblem([Memory("a", 1000)], Problem([Buffer(8, 0, 0), Buffer(8, 0, 0)]),
                              [BufferRules(inside=1), BufferRules(inside=0)])
    with pytest.raises(ValueError, match="cyclic"):
        allocation.place_in_hierarchy(cyclic)
    crowded = HierarchyProblem([Memory("a", 100)], Problem([Buffer(80, 0, 0), Buffer(80, 0, 0)]),
                               [BufferRules(memory=0), BufferRules(memory=0)])
    with pytest.raises(ValueError, match="need at least 160 bytes"):
        allocation.place_in_hierarchy(crowded)


def test_alignments_that_are_not_powers_of_two_hold_in_every_memory():
    """A buffer aligned to 3 in a memory aligned to 16 needs an offset both divide (48), not
    the larger (16 was accepted, by the placement and by the validator); a slice whose offset
    inside its parent its alignment does not divide is refused with a clear error."""
    problem = Problem([Buffer(9, 0, 1, alignment=3), Buffer(7, 1, 2, alignment=3)])
    h = HierarchyProblem([Memory("tcm", 64, 16), Memory("sram", 1024, 4)], problem, [])
    s = allocation.place_in_hierarchy(h)
    assert list(s.memory) == [0, 0] and list(s.offsets) == [0, 48]
    assert allocation.validate_hierarchy(h, s) == []
    pinned = HierarchyProblem(h.memories, Problem([Buffer(9, 0, 1, alignment=3), Buffer(7, 1, 2, alignment=3, fixed_offset=18)]),
                              [BufferRules(), BufferRules(memory=0)])
    with pytest.raises(ValueError, match="pin of buffer 1 at offset 18 in memory 'tcm': the offset must be a multiple of 48 bytes"):
        allocation.place_in_hierarchy(pinned)
    sliced = HierarchyProblem(h.memories, Problem([Buffer(16, 0, 1, alignment=4), Buffer(4, 0, 1, alignment=8)]),
                              [BufferRules(), BufferRules(inside=0, inside_offset=4)])
    with pytest.raises(ValueError, match="lies 4 bytes into its root buffer, which its alignment of 8 does not divide"):
        allocation.place_in_hierarchy(sliced)


def test_validator_catches_broken_rules():
    problem = Problem([Buffer(64, 0, 1), Buffer(64, 0, 1)])
    h = HierarchyProblem([Memory("a", 128), Memory("b", 128)], problem, [BufferRules(blocked=[0]), BufferRules()])
    good = allocation.place_in_hierarchy(h)
    assert good.memory[0] == 1 and allocation.validate_hierarchy(h, good) == []
    bad = allocation.place_fastest_first(HierarchyProblem(h.memories, problem, []))
    errors = allocation.validate_hierarchy(h, bad)
    assert any("blocked" in e for e in errors)


def test_hierarchy_is_deterministic():
    plan = tinyarena.plan(real_model("person_detect"))
    problem = allocation.hierarchy_from_plan(plan, MEMORIES)
    a, b = allocation.place_in_hierarchy(problem), allocation.place_in_hierarchy(problem)
    assert list(a.memory) == list(b.memory) and list(a.offsets) == list(b.offsets)


def test_traffic_of_ring_buffers_counts_the_whole_tensor_passing_through():
    from tinyarena import tiling

    untiled = tinyarena.plan(real_model("vww_96_int8"))
    tiled = tiling.search(real_model("vww_96_int8"), tiling="rows").best
    for plan in (untiled, tiled):
        traffic = allocation.accessed_bytes(plan)
        for b, t in zip(plan.buffers, traffic):
            reads = sum(len(plan.graph.tensors[x].consumers) for x in b.tensors) if b.tensors else 1
            largest = max([0] + [plan.graph.tensors[x].byte_size for x in b.tensors])
            assert t == max(b.size, largest) * (1 + reads)
    assert all(b.size >= max([0] + [untiled.graph.tensors[x].byte_size for x in b.tensors]) for b in untiled.buffers)
    rings = [i for i, b in enumerate(tiled.buffers)
             if b.tensors and b.size < max(tiled.graph.tensors[x].byte_size for x in b.tensors)]
    assert rings  # row streaming keeps a few rows of these tensors
    traffic = allocation.accessed_bytes(tiled)
    assert all(traffic[i] > 2 * tiled.buffers[i].size for i in rings)


@pytest.mark.parametrize("seed", range(6))
def test_an_allocator_lowers_each_memory_and_fewest_bytes_takes_the_smaller_plan(seed):
    # Hard single-memory instances (optimum 4 KiB, greedy above it) spread over two memories.
    problem, _ = allocation.zero_slack_problem(40, capacity=4 * KIB, seed=seed, aligned=True)
    rules = [BufferRules(accessed_bytes=int(b.size) * (1 + i % 3)) for i, b in enumerate(problem.buffers)]
    h = HierarchyProblem([Memory("fast", 3 * KIB, alignment=1), Memory("slow", 64 * KIB, alignment=1)], problem, rules)
    plans = {}
    for place in (allocation.place_in_hierarchy, allocation.place_fastest_first):
        greedy, refined = place(h), place(h, "auto", seconds=0.2)
        assert allocation.validate_hierarchy(h, refined) == []
        assert list(refined.memory) == list(greedy.memory)  # the allocator places, it does not reassign
        assert all(r <= g for r, g in zip(refined.heights, greedy.heights))
        assert all(lb <= r for lb, r in zip(refined.lower_bounds, refined.heights))
        assert all(r == lb for r, lb, proven in zip(refined.heights, refined.lower_bounds, refined.proven_optimal)
                   if proven)
        plans[place.__name__] = refined
    fewest = allocation.place_fewest_bytes(h, "auto", seconds=0.2)
    assert allocation.validate_hierarchy(h, fewest) == []
    assert sum(fewest.heights) == min(sum(p.heights) for p in plans.values())
