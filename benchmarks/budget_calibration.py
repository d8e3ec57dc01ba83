"""Calibration of the deterministic search budgets (WorkBudget): how long a budget of S
seconds of work takes on this machine, per allocator, zero-slack size and variant.

    python benchmarks/budget_calibration.py [--budgets 0.1 1] [--sizes 150 300 450]
                                            [--seeds 3] [--repeats 3] [--allocators ...]

Prints, per allocator, variant and size, the median over seeds of the wall time divided by
the budget (each run repeated, fastest kept), and the units spent per second of wall time for
the searches that report them. A budget is work, not time: the plans are the same on every
machine; a ratio near 1 means the conversion (WorkBudget::kUnitsPerSecond and each search's
weights) fits this machine. Run it on an idle machine; the load average is printed.
"""

import argparse
import os
import statistics
import time

from tinyarena import allocation

VARIANTS = {"plain": {}, "aligned": {"aligned": True}, "pinned": {"pinned": 0.1}}
ALLOCATORS = {  # each returns (result, units spent or None)
    "exact": lambda p, s: (lambda r: (r, r.work))(allocation.solve_exact(p, seconds=s)),
    "local_search": lambda p, s: (lambda r: (r, r.work))(allocation.local_search(p, iterations=0, seconds=s)),
    "skyline": lambda p, s: (lambda r: (r, r.work))(allocation.skyline_search(p, constructions=10**9, seconds=s)),
    "auto": lambda p, s: (allocation.allocate(p, "auto", s), None),
}


def fastest_run(run, problem, budget, repeats):
    """(wall seconds, units) of the fastest of `repeats` runs (the same plan each time)."""
    best = None
    for _ in range(repeats):
        start = time.perf_counter()
        result, units = run(problem, budget)
        wall = time.perf_counter() - start
        assert allocation.validate(problem, result.solution) == []
        best = min(best or (wall, units), (wall, units))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[150, 300, 450])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--allocators", nargs="+", default=list(ALLOCATORS), choices=list(ALLOCATORS))
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    print(f"{'allocator':12s} {'variant':8s} {'N':>4s} " + " ".join(f"{f'wall/{b:g}s':>10s}" for b in args.budgets)
          + f" {'Munits/s':>9s}")
    ratios = {}
    for name in args.allocators:
        for variant in args.variants:
            for size in args.sizes:
                problems = [allocation.zero_slack_problem(size, seed=s, **VARIANTS[variant])[0] for s in range(args.seeds)]
                cells, rates = [], []
                for budget in args.budgets:
                    runs = [fastest_run(ALLOCATORS[name], p, budget, args.repeats) for p in problems]
                    cell = statistics.median(wall / budget for wall, _ in runs)
                    ratios.setdefault((name, budget), []).append(cell)
                    cells.append(f"{cell:10.2f}")
                    rates += [units / wall / 1e6 for wall, units in runs if units]
                rate = f"{statistics.median(rates):9.0f}" if rates else f"{'-':>9s}"
                print(f"{name:12s} {variant:8s} {size:4d} {' '.join(cells)} {rate}", flush=True)
    for (name, budget), values in ratios.items():
        print(f"{name:12s} budget {budget:g} s: mean wall/budget {statistics.mean(values):.2f}, "
              f"max {max(values):.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
