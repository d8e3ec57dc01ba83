"""The skyline best-fit search: valid plans with alignment and pins, determinism, and its
place in `auto` (never worse than greedy first fit)."""

import random

import pytest

from tinyarena import allocation
from tinyarena.allocation import Problem

CAPACITY = 1 << 20


def random_problem(seed, n=12, pin_fraction=0.25):
    """Up to n buffers with random sizes, lifetimes and alignments; some pinned where a
    first-fit plan put them (so the pins never collide)."""
    rng = random.Random(seed)
    n = rng.randint(1, n)
    sizes = [rng.choice([0, rng.randint(1, 40), rng.randint(1, 400)]) for _ in range(n)]
    first = [rng.randint(0, 10) for _ in range(n)]
    last = [f + rng.randint(0, 6) for f in first]
    alignment = [rng.choice([1, 1, 2, 4, 8, 16]) for _ in range(n)]
    free = Problem.from_arrays(sizes, first, last, alignment)
    placed = allocation.greedy_size_first_fit(free).offsets
    fixed = [int(o) if rng.random() < pin_fraction else -1 for o in placed]
    return Problem.from_arrays(sizes, first, last, alignment, fixed)


def test_skyline_plans_validate_on_random_instances_with_alignment_and_pins():
    pinned = 0
    for seed in range(400):
        problem = random_problem(seed)
        pinned += any(b.fixed_offset is not None for b in problem.buffers)
        result = allocation.skyline_search(problem, constructions=8, seconds=0)
        assert allocation.validate(problem, result.solution) == [], seed
        assert result.height >= allocation.lower_bound_bytes(problem)
        named = allocation.allocate(problem, "skyline")
        assert named.method == "skyline" and allocation.validate(problem, named.solution) == [], seed
    assert pinned > 100  # the corpus does exercise pins


@pytest.mark.parametrize("variant", [{}, {"aligned": True}, {"pinned": 0.1}], ids=["plain", "aligned", "pinned"])
def test_skyline_validates_and_beats_greedy_on_zero_slack_instances(variant):
    problem, _ = allocation.zero_slack_problem(150, seed=2, **variant)
    result = allocation.skyline_search(problem, constructions=16, seconds=0)
    assert allocation.validate(problem, result.solution) == []
    assert result.constructions == 3 + 16 or result.height == CAPACITY
    assert result.height < allocation.greedy_size_first_fit(problem).height


def test_skyline_fills_the_room_below_pins_exactly_on_pinned_zero_slack_instances():
    # The waste-free search refutes a state where no subset of the unplaced buffers fills
    # the room under a pin exactly: its three deterministic constructions meet the
    # optimum on 15 of these 20 instances. Without that rule they met it on 5; with the
    # rule decided by listing up to 64 subset sums (unknown past them) on 9.
    optimal = 0
    for seed in range(20):
        problem, _ = allocation.zero_slack_problem(150, seed=seed, pinned=0.1)
        result = allocation.skyline_search(problem, constructions=0, seconds=0)
        assert allocation.validate(problem, result.solution) == [], seed
        optimal += result.height == CAPACITY
    assert optimal >= 15


def test_skyline_is_deterministic_for_a_seed():
    problem, _ = allocation.zero_slack_problem(150, seed=4, aligned=True)
    runs = [allocation.skyline_search(problem, constructions=10, seconds=0, seed=7) for _ in range(2)]
    assert (runs[0].offsets == runs[1].offsets).all() and runs[0].constructions == runs[1].constructions


def test_skyline_rejects_an_unknown_allocator_name_with_the_list():
    problem, _ = allocation.zero_slack_problem(20, seed=0)
    with pytest.raises(ValueError, match="skyline"):
        allocation.allocate(problem, "skylin")


def test_auto_is_never_worse_than_greedy_first_fit():
    problems = [random_problem(seed, n=30) for seed in range(60)]
    problems += [allocation.zero_slack_problem(100, seed=seed, **v)[0]
                 for seed in range(2) for v in ({}, {"aligned": True}, {"pinned": 0.1})]
    for problem in problems:
        result = allocation.allocate(problem, "auto", 0.02)
        assert allocation.validate(problem, result.solution) == []
        assert result.height <= allocation.greedy_size_first_fit(problem).height
        assert result.lower_bound <= result.height
