"""Tiling figures (issue 5): peak SRAM of row-streamed and patch-based schedules, the Pareto
front, search and sweep speed, and bit-exactness of compiled row-streamed schedules.

    python benchmarks/tiling_bench.py [--verify host cortex-m4] [--models mbv2_1.0_224 ...]
    python benchmarks/tiling_bench.py --instructions [MODEL ...]   # Cortex-M4 cost of tiling
    python benchmarks/tiling_bench.py --scale [1000 2000 5000]    # search time on long chains

Peaks are allocated arenas (the default `auto` allocator, 16-byte alignment): activations, rings or
per-patch buffers and kernel scratch. "input streamed" = the model input is pulled row by row
(not resident). Numbers go to benchmarks/README.md.
"""

import argparse
import pathlib
import time

from bench_paths import MODELS_DIR

import tinyarena
from tinyarena import builder, tiling
from tinyarena.verify import VerifyError, verify

BUDGET = 1.13  # MCUNetV2's published point: +13 % MACs


def models(names):
    table = {
        "mbv2_1.0_224": lambda: builder.mobilenet_v2(alpha=1.0, resolution=224),
        "mbv2_1.0_224_pads": lambda: builder.mobilenet_v2(alpha=1.0, resolution=224, explicit_pad=True),
        "mbv2_0.35_144": lambda: builder.mobilenet_v2(alpha=0.35, resolution=144),
        "vww_96_int8": lambda: (MODELS_DIR / "vww_96_int8.tflite").read_bytes(),
        "person_detect": lambda: (MODELS_DIR / "person_detect.tflite").read_bytes(),
    }
    return [(name, tinyarena.load_model(table[name]())) for name in names]


def kib(count):
    return f"{count / 1024:.1f}"


def peaks(name, graph, verify_targets):
    untiled = tinyarena.plan(graph).peak_bytes
    rows = tiling.search(graph, tiling="rows", stream_input=True)
    rows_resident = tiling.search(graph, tiling="rows", stream_input=False)
    patches = tiling.search(graph, tiling="patches", max_mac_overhead=BUDGET, stream_input=True)
    mixed = tiling.search(graph, tiling="auto", max_mac_overhead=BUDGET, stream_input=True)
    front = tiling.search(graph, tiling="auto", max_mac_overhead=1.5, stream_input=True)
    print(f"| {name} | {kib(untiled)} | {kib(rows.best.peak_bytes)} | {kib(rows_resident.best.peak_bytes)} | "
          f"{kib(patches.best.peak_bytes)} @ {patches.best.mac_overhead:.3f}x | "
          f"{kib(mixed.best.peak_bytes)} @ {mixed.best.mac_overhead:.3f}x | {rows.seconds * 1000:.0f} / "
          f"{mixed.seconds * 1000:.0f} |", flush=True)
    fronts = f"{name}: " + ", ".join(f"{kib(p.peak_bytes)} KiB @ {p.mac_overhead:.3f}x" for p in front.front)
    exact = []
    for label, plan in [("rows", rows.best), (f"mixed <= {BUDGET}x", mixed.best)]:
        kinds = sorted({s.mode for s in plan.segments})
        for target in verify_targets:
            start = time.perf_counter()
            note = ""
            try:
                result = verify(None, target=target, plan=plan)
            except VerifyError as e:
                if "will not fit in region" not in str(e):
                    raise
                # The DSP build's packed int16 weights exceed the QEMU board's flash: run the
                # portable kernels (int8 weights) on the same core instead.
                result = verify(None, target=target, plan=plan, cflags="-DTA_NO_SIMD")
                note = " [portable kernels, -DTA_NO_SIMD: packed weights exceed the board's flash]"
            exact.append(f"{name} {label} ({len(plan.segments)} segments: {'+'.join(kinds)}, input streamed): "
                         f"{result.summary()}{note} in {time.perf_counter() - start:.0f} s")
    return fronts, exact


def speed():
    lines = []
    for label, data in [("chain(100) 8x8x8", builder.chain(100)),
                        ("chain(100) 96x96x8", builder.chain(100, shape=(1, 96, 96, 8))),
                        ("MobileNetV2 1.0@224 (65 ops)", builder.mobilenet_v2())]:
        graph = tinyarena.load_model(data)
        for mode, budget in [("rows", 1.0), ("auto", 1.3)]:
            start = time.perf_counter()
            result = tiling.search(graph, tiling=mode, max_mac_overhead=budget)
            lines.append(f"| {label} | {len(graph.ops)} | {mode} (budget {budget}) | {result.candidates} | "
                         f"{(time.perf_counter() - start) * 1000:.0f} |")
    graph = tinyarena.load_model(builder.mobilenet_v2())
    limits = [64 * 1024 + i * 4096 for i in range(100)]
    start = time.perf_counter()
    records = tiling.sweep(graph, sram_limits=limits, max_mac_overhead=1.3)
    sweep_s = time.perf_counter() - start
    fits = sum(r.fits for r in records)
    lines.append(f"\n100-point sweep (64..460 KiB), MobileNetV2 1.0@224, auto, budget 1.3: {sweep_s:.2f} s, "
                 f"{fits} limits fit")
    return lines


def scale(sizes):
    """Search time on builder.chain(n) (8x8x8 and 32x32x8): rows, auto (budget 1.0, as the CLI's
    default) and auto with patches (budget 1.3), wall and process CPU (both threads of the
    allocator's race); the CPU time per op should stay about flat."""
    lines = []
    for shape in ((1, 8, 8, 8), (1, 32, 32, 8)):
        for n in sizes:
            graph = tinyarena.load_model(builder.chain(n, shape=shape))
            for mode, budget in [("rows", 1.0), ("auto", 1.0), ("auto", 1.3)]:
                start, start_cpu = time.perf_counter(), time.process_time()
                result = tiling.search(graph, tiling=mode, max_mac_overhead=budget)
                seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
                lines.append(f"| {shape[1]}x{shape[2]}x{shape[3]} | {n} | {mode} (budget {budget}) | "
                             f"{result.best.peak_bytes:,} | {len(result.best.segments)} | {result.candidates:,} | "
                             f"{seconds:.2f} | {cpu:.2f} | {1e6 * cpu / n:.0f} |")
                print(lines[-1], flush=True)
    return lines


def head_scratch(graph):
    """The row-streamed 1.00x peak with and without kernel scratch (the conv's requantization
    records are flash arrays of the generated code, so its scratch is the column buffer only)."""
    rows = tiling.search(graph, tiling="rows").best
    no_scratch = tiling.search(graph, tiling="rows", scratch=False).best
    return (f"rows 1.00x, input streamed: {rows.peak_bytes:,} B ({kib(rows.peak_bytes)} KiB); without kernel scratch "
            f"{no_scratch.peak_bytes:,} B ({kib(no_scratch.peak_bytes)} KiB)")


def real_models(verify_targets):
    """Every real model: rows (1.00x) and patches (<= 1.5x) plans, bit-exact on each target."""
    lines = ["| model | tileable ops | mode | segments | untiled B | tiled B | MACs | bit-exact |",
             "|---|---:|---|---|---:|---:|---:|---|"]
    for path in sorted(MODELS_DIR.glob("*.tflite")):
        graph = tinyarena.load_model(path)
        tileable = sum(tinyarena._core.is_tileable(graph, op.index) for op in graph.ops)
        for mode, budget in [("rows", 1.0), ("patches", 1.5)]:
            found = tiling.search(graph, tiling=mode, max_mac_overhead=budget, stream_input=True)
            best = found.best
            exact = [verify(None, target=t, plan=best).bit_exact for t in verify_targets]
            segments = ", ".join(f"{len(s.ops)} ops" for s in best.segments) or "none chosen"
            verdict = "/".join(f"{t} {'yes' if e else 'NO'}" for t, e in zip(verify_targets, exact))
            lines.append(f"| {path.stem} | {tileable} | {mode} | {segments} | {found.untiled_peak_bytes:,} | "
                         f"{best.peak_bytes:,} | {best.mac_overhead:.3f}x | {verdict} |")
    return lines


def instructions(names):
    """Cortex-M4 (DSP build) instructions of one invoke: untiled vs row-streamed vs mixed plans,
    with codegen_bench's method (QEMU insn-count plugin, 2 invokes minus 1)."""
    import sys
    import tempfile

    import numpy as np

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import codegen_bench as cb
    from tinyarena.codegen import compile as compile_model

    lines = ["| model | plan | arena B | MACs | instructions | vs untiled |", "|---|---|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        plugin = cb.build_plugin(work)
        for name, graph in models(names):
            plans = [("untiled", tinyarena.plan(graph)),
                     ("rows 1.00x", tiling.search(graph, tiling="rows").best),
                     (f"mixed <= {BUDGET}x", tiling.search(graph, tiling="auto", max_mac_overhead=BUDGET).best)]
            base = None
            for label, plan in plans:
                out_dir = work / f"{name}_{label.split()[0]}"
                compile_model(plan, out_dir, target="cortex-m4", name="model")
                rng = np.random.default_rng(0)
                for i, index in enumerate(graph.inputs):
                    data = rng.integers(-128, 128, graph.tensors[index].shape, dtype=np.int8)
                    (out_dir / f"input{i}.bin").write_bytes(data.tobytes())
                insns = cb.measure(out_dir, "", plugin)["insns"]
                base = base or insns
                macs = getattr(plan, "macs", None) or plan.core.macs
                lines.append(f"| {name} | {label} | {plan.peak_bytes:,} | {macs:,} | {insns:,} | {insns / base:.3f}x |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+",
                        default=["mbv2_1.0_224", "mbv2_1.0_224_pads", "mbv2_0.35_144", "vww_96_int8", "person_detect"])
    parser.add_argument("--verify", nargs="*", default=[], help="targets to verify the row-streamed plans on")
    parser.add_argument("--instructions", nargs="*", metavar="MODEL",
                        help="only count Cortex-M4 instructions of untiled vs tiled plans of these models")
    parser.add_argument("--scale", nargs="*", type=int, metavar="OPS",
                        help="only time the search on chains of these lengths (default 1000 2000 5000)")
    args = parser.parse_args()
    if args.scale is not None:
        print("| chain | ops | search | peak B | segments | segments tried | wall s | CPU s | CPU ms per 1,000 ops |")
        print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
        scale(args.scale or [1000, 2000, 5000])
        return
    if args.instructions is not None:
        print("\n".join(instructions(args.instructions or ["vww_96_int8", "person_detect", "mbv2_0.35_144"])))
        return
    print("| model | untiled KiB | rows 1.00x, input streamed | rows 1.00x, input resident | patches only "
          f"(<= {BUDGET}x) | mixed (<= {BUDGET}x) | search ms rows / mixed |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    fronts, exact = [], []
    for name, graph in models(args.models):
        f, e = peaks(name, graph, args.verify)
        fronts.append(f)
        exact += e
    for name, graph in models([m for m in args.models if m == "mbv2_1.0_224_pads"]):
        unfolded = tiling.search(graph, tiling="rows", transforms="none")
        print(f"\n{name} without PAD folding (transforms='none'): untiled {kib(unfolded.untiled_peak_bytes)} KiB, "
              f"rows 1.00x {kib(unfolded.best.peak_bytes)} KiB ({len(unfolded.best.segments)} segments)")
    for name, graph in models([m for m in args.models if m == "mbv2_0.35_144"]):
        print(f"\n{name} head: {head_scratch(graph)}")
    print("\nPareto fronts (auto, input streamed, budget 1.5):")
    print("\n".join(fronts))
    if exact:
        print("\nBit-exactness:")
        print("\n".join(exact))
    print("\nShared models (input streamed):")
    print("\n".join(real_models(args.verify)))
    print("\n| model | ops | search | segments tried | ms |\n|---|---:|---|---:|---:|")
    print("\n".join(speed()))


if __name__ == "__main__":
    main()
