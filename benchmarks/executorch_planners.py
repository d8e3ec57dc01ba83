"""ExecuTorch's default memory planner, Cadence's two algorithms and tinyarena, side by side.

For each test model (tests/executorch_models.py, built and exported here; float, then int8 by
PT2E quantization as quantize/dequantize ops the portable runtime runs) and memory
configuration (one, two and three memories, fastest first), every planner lowers the same edge
program; the table gives the planned bytes per memory, the total, the fastest memory's share of
the accessed bytes, whether tinyarena's plan is proven optimal, and whether every plan's .pte,
run by ExecuTorch's portable runtime, gives outputs identical to the default plan's.

    python benchmarks/executorch_planners.py [--models unet,ds-cnn] [--float-only] [--opt-level 2]
    python benchmarks/executorch_planners.py --chain 230   # planning time of a 1,000-node program

Needs the [executorch] extra (pip install .[executorch]).
"""

import argparse
import pathlib
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import executorch_models as em
import torch
from tinyarena.executorch import ExecuTorchPlan

KIB, MIB = 1024, 1024 * 1024
CONFIGS = {
    "8M": [8 * MIB],
    "256K+8M": [256 * KIB, 8 * MIB],
    "64K+512K+8M": [64 * KIB, 512 * KIB, 8 * MIB],
}
LABELS = {"default": "default", "cadence-position": "Cadence position", "cadence-greedy": "Cadence greedy",
          "tinyarena": "tinyarena"}


def measure(name, quantized=False, configs=CONFIGS, opt_level=em.CADENCE_OPT_LEVEL):
    """Rows of dicts for one model: one per (memory configuration, planner). From Cadence's opt level 2
    the programs hold cat/slice no-ops that only Cadence's runtime runs: they are planned, not run."""
    edge, example = em.edge_program(name, quantized)
    name += " int8" if quantized else ""
    default, _ = em.lower(edge, "default", [])
    reference = em.run(default, example)
    runnable = opt_level < 2
    rows = []
    for config, sizes in configs.items():
        for planner in em.PLANNERS:
            start = time.perf_counter()
            program, ours = ((default, None) if planner == "default"
                             else em.lower(edge, planner, sizes, opt_level=opt_level))
            seconds = time.perf_counter() - start
            outputs = em.run(program, example) if runnable or planner == "default" else None
            plan = ours.plan if ours else ExecuTorchPlan.from_graph_module(
                program.exported_program().graph_module, memory_sizes=sizes if planner != "default" else None)
            rows.append({"model": name, "config": config, "planner": planner, "sizes": em.buffer_sizes(program),
                         "fast_share": plan.fast_share, "optimal": all(plan.proven_optimal) if ours else None,
                         "identical": None if outputs is None else all(torch.equal(a, b)
                                                                       for a, b in zip(outputs, reference)),
                         "seconds": seconds})
    return rows


def _sizes(row):
    return " + ".join(f"{s:,}" for s in row["sizes"])


def verdicts(rows):
    """Per (model, config): (tinyarena total <= the best other total, its fast share >= theirs)."""
    out = {}
    for key in dict.fromkeys((r["model"], r["config"]) for r in rows):
        group = {r["planner"]: r for r in rows if (r["model"], r["config"]) == key}
        ours = group["tinyarena"]
        others = [r for p, r in group.items() if p != "tinyarena" and (p != "default" or len(ours["sizes"]) == 1)]
        out[key] = (sum(ours["sizes"]) <= min(sum(r["sizes"]) for r in others),
                    ours["fast_share"] >= max(r["fast_share"] for r in others) - 1e-12)
    return out


def _identical(rows):
    if any(r["identical"] is None for r in rows):
        return "not run (Cadence runtime)"
    return "yes" if all(r["identical"] for r in rows) else "NO"


def markdown(rows):
    lines = [("| model | memories | default | Cadence position | Cadence greedy | tinyarena | tinyarena optimal | "
              "fast-memory share (Cadence pos. / greedy / tinyarena) | outputs identical |"),
             "|---|---|---:|---:|---:|---:|---|---|---|"]
    checks = verdicts(rows)
    for key in checks:
        group = {r["planner"]: r for r in rows if (r["model"], r["config"]) == key}
        shares = " / ".join(f"{group[p]['fast_share']:.1%}" for p in ("cadence-position", "cadence-greedy", "tinyarena"))
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(_sizes(group[p]) for p in em.PLANNERS)
                     + f" | {'yes' if group['tinyarena']['optimal'] else 'no'} | {shares} | "
                     + _identical(group.values()) + " |")
    return "\n".join(lines)


def chain_planning_seconds(ops, sizes=CONFIGS["64K+512K+8M"]):
    """(graph nodes, seconds) of tinyarena planning a chain program of `ops` ops (about 4.4 nodes each)."""
    from tinyarena.executorch import MemoryPlanning

    edge, _ = em.chain_edge_program(ops=ops)
    planning = MemoryPlanning(sizes)
    seconds = []

    def timed(*args, **kwargs):
        start = time.perf_counter()
        result = planning(*args, **kwargs)
        seconds.append(time.perf_counter() - start)
        return result

    timed.__name__ = "timed"
    program = em.copy_lower(edge, timed)
    return len(program.exported_program().graph_module.graph.nodes), sum(seconds)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(em.MODELS), help="comma-separated, of " + ", ".join(em.MODELS))
    parser.add_argument("--float-only", action="store_true", help="skip the int8 (PT2E Q/DQ) variants")
    parser.add_argument("--opt-level", type=int, default=em.CADENCE_OPT_LEVEL,
                        help="Cadence's constraint level, for Cadence and tinyarena (2: cat/slice no-ops, not run)")
    parser.add_argument("--chain", type=int, metavar="OPS",
                        help="only time tinyarena planning a chain program of OPS ops (three memories)")
    args = parser.parse_args(argv)
    if args.chain:
        nodes, seconds = chain_planning_seconds(args.chain)
        print(f"chain of {args.chain} ops: {nodes:,} graph nodes planned in {seconds:.2f} s")
        return 0
    start = time.perf_counter()
    variants = (False,) if args.float_only else (False, True)
    rows = [r for name in args.models.split(",") for q in variants
            for r in measure(name, q, opt_level=args.opt_level)]
    print(markdown(rows))
    checks = verdicts(rows)
    bad = [k for k, (size_ok, share_ok) in checks.items() if not (size_ok and share_ok)]
    print(f"\n{len(checks)} rows; tinyarena no larger and its fast share no lower on {len(checks) - len(bad)}"
          + (f"; not on {bad}" if bad else "") + f"; {time.perf_counter() - start:.0f} s in all")
    return 1 if bad or any(r["identical"] is False for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
