"""Flash against speed under ``--flash`` budgets: a sweep of one model on Cortex-M4.

    python benchmarks/flash_bench.py [--model person_detect] [--points 9] [--budgets SIZE ...]
                                     [--chart benchmarks/out/flash_person_detect.png] [--layout-deltas]

For each budget, from the all-compact build (every layer's weights plain int8) to the all-fast
one (every conv and depthwise layer packed int16), the model is planned with ``flash=``,
compiled, built for cortex-m4 and run under QEMU with the instruction-count plugin
(tools/qemu_insn_count.c): instructions per inference (two invokes minus one) and the image's
flash (``arm-none-eabi-size`` text: code + rodata). The portable build (plain C, ``-DTA_NO_SIMD``)
and the default build (no budget) are measured in the same run; the table gives each point's
ratios to the portable build and the chart plots flash against instructions.

``--layout-deltas`` measures instead what moving every layer of one op type to another layout
costs (the conv int16 ratio in cpp/src/op_params/weight_layouts.cpp comes from it).
"""

import argparse
import collections
import pathlib
import tempfile

import tinyarena
from bench_paths import MODELS_DIR, REPO
from codegen_bench import VARIANTS, bench_inputs, build_plugin, measure
from tinyarena.codegen import compile as compile_model

TARGET = "cortex-m4"
LAYOUT_TYPES = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
SHORT = {"plain": "plain", "packed_int8": "s8", "packed_int16": "s16"}


def layers(plan, op_type):
    return [op.index for op in plan.graph.ops if op.type == op_type and not op.elided]


def all_fast(plan):
    """The plan with every layer in its fastest layout (conv, depthwise, fully connected: packed int16)."""
    return plan.with_layouts({op: "packed_int16" for t in LAYOUT_TYPES for op in layers(plan, t)})


def sweep_budgets(plan, points):
    """`points` budgets from the all-compact build's flash to the all-fast one's: two thirds of them
    evenly up to the default build's flash (where the layouts trade most speed), the rest evenly
    above it."""
    low, middle, high = plan.with_flash(1).compact_flash_bytes, plan.flash_bytes, all_fast(plan).flash_bytes
    below = max(2, (2 * points + 2) // 3)
    above = points - below
    return ([low + (middle - low) * i // (below - 1) for i in range(below)]
            + [middle + (high - middle) * i // above for i in range(1, above + 1)])


def layout_mix(plan):
    """`conv s8 11, plain 3; dw s16 6, plain 8`: how many layers of each type take each layout."""
    parts = []
    for op_type, short in (("CONV_2D", "conv"), ("DEPTHWISE_CONV_2D", "dw"), ("FULLY_CONNECTED", "fc")):
        counts = collections.Counter(SHORT[plan.weight_layout(op)] for op in layers(plan, op_type))
        if counts:
            parts.append(f"{short} " + ", ".join(f"{name} {n}" for name, n in sorted(counts.items())))
    return "; ".join(parts)


def run_build(plan, work, name, plugin, cflags=""):
    out = work / name
    compile_model(plan, out, target=TARGET, name="model")
    bench_inputs(plan, out)
    return measure(out, cflags, plugin)


def sweep(args, plan, work, plugin):
    portable = run_build(plan, work, "portable", plugin, VARIANTS["plain C"])
    default = run_build(plan, work, "default", plugin)
    rows = [("portable (plain C)", None, portable, "-"), ("default (no budget)", plan.flash_bytes, default,
                                                           layout_mix(plan))]
    budgets = [tinyarena.parse_size(b) for b in args.budgets] if args.budgets else sweep_budgets(plan, args.points)
    points = []
    for i, budget in enumerate(budgets):
        chosen = plan.with_flash(budget)
        result = run_build(chosen, work, f"budget{i}", plugin)
        met = "" if chosen.flash_fits else f" (not met: the compact build needs {chosen.flash_bytes:,})"
        rows.append((f"--flash {budget:,}{met}", chosen.flash_bytes, result, layout_mix(chosen)))
        if chosen.flash_fits:  # the chart shows only budgets a plan meets
            points.append((budget, result))
    print(f"\n{args.model}: {plan.macs:,} MACs, cortex-m4; flash = image text + rodata (arm-none-eabi-size); "
          f"ratios against the portable build\n")
    print("| build | planned flash B | image flash B | flash / portable | instructions | instr/MAC "
          "| instr / portable | layouts |\n|---|---:|---:|---:|---:|---:|---:|---|")
    for label, planned, r, mix in rows:
        print(f"| {label} | {'-' if planned is None else f'{planned:,}'} | {r['text']:,} | "
              f"{r['text'] / portable['text']:.2f}x | {r['insns']:,} | {r['insns'] / plan.macs:.2f} | "
              f"{r['insns'] / portable['insns']:.2f}x | {mix} |", flush=True)
    if args.chart:
        plot(args, plan, points, portable, default)


def plot(args, plan, points, portable, default):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot([r["text"] / 1024 for _, r in points], [r["insns"] / 1e6 for _, r in points], "o-",
            label="--flash budgets (all compact ... all fast)")
    for budget, r in points:
        ax.annotate(f"{budget / 1024:.0f}K", (r["text"] / 1024, r["insns"] / 1e6), textcoords="offset points",
                    xytext=(4, 4), fontsize=7)
    ax.plot([default["text"] / 1024], [default["insns"] / 1e6], "s", label="default (no budget)")
    ax.plot([portable["text"] / 1024], [portable["insns"] / 1e6], "^", label="portable build (plain C)")
    ax.axvline(1.10 * portable["text"] / 1024, color="grey", linestyle=":", label="1.10x portable flash")
    ax.set_yscale("log")
    ax.set_xlabel("flash: image text + rodata (KiB)")
    ax.set_ylabel("instructions per inference (millions, log)")
    ax.set_title(f"{args.model} on Cortex-M4: flash budget vs instructions ({plan.macs / 1e6:.2f} M MACs)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    chart = pathlib.Path(args.chart)
    chart.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(chart, dpi=120)
    print(f"\nwrote {chart}")


def layout_deltas(args, plan, work, plugin):
    """Instructions when every layer of one type moves to another layout, per MAC of that type."""
    base = run_build(plan, work, "default", plugin)["insns"]
    print(f"\n{args.model}: default build {base:,} instructions\n")
    print("| layers moved | MACs | instructions | difference per MAC |\n|---|---:|---:|---:|")
    for op_type, layout in (("CONV_2D", "packed_int16"), ("CONV_2D", "plain"), ("DEPTHWISE_CONV_2D", "plain"),
                            ("FULLY_CONNECTED", "plain")):
        ops = layers(plan, op_type)
        if not ops:
            continue
        macs = sum(r.macs for r in plan.ops if r.index in ops)
        insns = run_build(plan.with_layouts({op: layout for op in ops}), work, f"{op_type}_{layout}", plugin)["insns"]
        print(f"| {op_type} -> {layout} | {macs:,} | {insns:,} | {(insns - base) / macs:+.3f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="person_detect", help="a model name in tests/data/models")
    parser.add_argument("--points", type=int, default=9, help="budgets from all compact to all fast (default 9)")
    parser.add_argument("--budgets", nargs="+", metavar="SIZE", help="these budgets instead (300K, 310000, ...)")
    parser.add_argument("--chart", default=str(REPO / "benchmarks" / "out" / "flash_person_detect.png"),
                        help="where the chart goes (default benchmarks/out/flash_person_detect.png; '' for none)")
    parser.add_argument("--layout-deltas", action="store_true", help="measure the per-layout differences instead")
    args = parser.parse_args()
    if args.points < 3:
        parser.error("--points must be at least 3")
    plan = tinyarena.plan(MODELS_DIR / f"{args.model}.tflite")
    with tempfile.TemporaryDirectory(prefix="tinyarena-flash-") as tmp:
        work = pathlib.Path(tmp)
        plugin = build_plugin(work)
        (layout_deltas if args.layout_deltas else sweep)(args, plan, work, plugin)


if __name__ == "__main__":
    main()
