"""Allocation at a fixed capacity with room to spare: slack instances
(`allocation.slack_problem`: a zero-slack 1 MiB instance cut like a real trace, buffers removed
at random until the lower bound is 2-10 % below 1 MiB; the construction still fits 1 MiB).
Prints tables; nothing here is a unit test.

    python benchmarks/slack_bench.py [--sizes 150 300 450 1000] [--instances 20]
                                     [--variants plain aligned pinned] [--seconds 1]
                                     [--quiet] [--write-csv DIR]

Per instance, each allocator is run on the problem with capacity 1 MiB (the construction's
height): `exact` and `auto` then run the fixed-capacity search (stop at the first plan within
the capacity), `skyline` its search for the lowest plan, the greedy allocators once. Columns:
time to a plan within the capacity (ms; "-" if the plan misses it) and the final height, each
also as a ratio against greedy first fit measured in the same run (time / first fit's time,
height / first fit's height). Budgets (--seconds, default 1) are deterministic work; the time
is wall clock, so it depends on load. The summary: per size and variant, how many plans fit
within 1 s of wall clock, how many `exact` plans fit within its budget of work (the same on any
machine under any load), and the median and largest time of `exact`.

`--write-csv DIR` writes the instances as CSV (`VARIANT_N_SEED.csv`, pins in the `offset` column)
and runs nothing; the C++ driver then runs the fixed-capacity search alone, in one process, and
prints the work to each plan (`tinyarena_alloc_driver fixed=1048576 1 DIR/pinned_1000_*.csv`, see
benchmarks/README.md).
"""

import argparse
import statistics
import time
from pathlib import Path

from tinyarena import allocation

CAPACITY = 1 << 20
VARIANTS = {"plain": {}, "aligned": {"aligned": True}, "pinned": {"pinned": 0.1}}
ALLOCATORS = ["exact", "auto", "skyline", "greedy_size_first_fit", "greedy_size_best_fit"]
SHORT = {"exact": "exact", "auto": "auto", "skyline": "skyline", "greedy_size_first_fit": "ff",
         "greedy_size_best_fit": "bf"}


def run(problem, name, seconds):
    """(seconds, height) of one run, its plan validated."""
    start = time.perf_counter()
    result = allocation.allocate(problem, name, seconds)
    elapsed = time.perf_counter() - start
    assert allocation.Problem(list(problem.buffers)).validate(result.offsets) == []  # valid, whatever its height
    return elapsed, result.height


def instance_row(n, variant, seed, seconds, quiet):
    problem, _ = allocation.slack_problem(n, seed=seed, **VARIANTS[variant])
    runs = {name: run(problem, name, seconds) for name in ALLOCATORS}
    ff_time, ff_height = runs["greedy_size_first_fit"]
    if not quiet:
        cells = []
        for name in ALLOCATORS:
            t, h = runs[name]
            fit = f"{t * 1000:7.1f} {t / ff_time:8.0f}x" if h <= CAPACITY else f"{'-':>7s} {'-':>9s}"
            cells.append(f"{fit} {h:9,d} {h / ff_height:5.3f}")
        bound = allocation.lower_bound_bytes(problem) / CAPACITY
        print(f"{n:5d} {variant:8s} {seed:3d} {bound:5.3f}  " + "  ".join(cells), flush=True)
    return runs


def write_csv(args):
    args.write_csv.mkdir(parents=True, exist_ok=True)
    for n in args.sizes:
        for variant in args.variants:
            for seed in range(args.instances):
                problem, _ = allocation.slack_problem(n, seed=seed, **VARIANTS[variant])
                problem.to_csv(args.write_csv / f"{variant}_{n}_{seed}.csv")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[150, 300, 450, 1000])
    parser.add_argument("--instances", type=int, default=20)
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--seconds", type=float, default=1.0, help="search budget (deterministic work)")
    parser.add_argument("--quiet", action="store_true", help="print the summary only")
    parser.add_argument("--write-csv", type=Path, metavar="DIR", help="write the instances as CSV, run nothing")
    args = parser.parse_args()
    if args.write_csv:
        write_csv(args)
        return
    if not args.quiet:
        head = "  ".join(f"{SHORT[a] + ' ms':>7s} {'t/ff':>9s} {'height B':>9s} {'h/ff':>5s}" for a in ALLOCATORS)
        print(f"{'N':>5s} {'variant':8s} {'seed':>3s} {'bound':>5s}  {head}")
    summary = []
    for n in args.sizes:
        for variant in args.variants:
            rows = [instance_row(n, variant, seed, args.seconds, args.quiet) for seed in range(args.instances)]
            summary.append((n, variant, rows))
    print(f"\nwithin the capacity in <= 1 s of wall clock, of {args.instances}; exact within its budget of work "
          f"(load-independent); exact: median / max ms")
    print(f"{'N':>5s} {'variant':8s} " + " ".join(f"{SHORT[a]:>8s}" for a in ALLOCATORS) +
          f" {'budget':>7s} {'median':>7s} {'max':>7s}")
    for n, variant, rows in summary:
        counts = [sum(r[a][1] <= CAPACITY and r[a][0] <= 1.0 for r in rows) for a in ALLOCATORS]
        in_budget = sum(r["exact"][1] <= CAPACITY for r in rows)
        times = [r["exact"][0] * 1000 for r in rows]
        print(f"{n:5d} {variant:8s} " + " ".join(f"{c:8d}" for c in counts) +
              f" {in_budget:7d} {statistics.median(times):7.0f} {max(times):7.0f}")


if __name__ == "__main__":
    main()
