"""Recalibrates the cost model (cpp/data/cost_model.csv) from exact QEMU instruction counts.

    python tools/calibrate_cost_model.py [--builds simd portable] [--models NAME|PATH ...]
                                         [--counts FILE] [--remeasure] [--out CSV]

Counts every op of every calibration model under QEMU (benchmarks/op_counts.py: the SIMD
build on the Cortex-M4, the portable one on the Cortex-M3), then fits per build and kernel
variant (op_params::cost_kernel) the coefficients of the terms (op_params::cost_terms: MACs,
MACs outside constant channel pairs, those
in a clamping loop, input and output elements, output pixels, one per call) by non-negative least squares. Each
op's equation is divided by its model's total, so every model weighs the same whatever its
size. Besides each variant's row it fits one row per op type (its variants together) and a
"*" row (every op), the fallbacks for a variant or type no model had. Run by hand (about
15 minutes on 2 cores), not in CI; then rebuild (pip install .) to embed the new table.
``--counts FILE`` keeps the measured counts (JSON) and reuses them unless ``--remeasure``;
tools/cost_model_counts.json holds the counts the committed table was fitted to (refit without
QEMU: ``--counts tools/cost_model_counts.json --out /tmp/check.csv`` reproduces it; after a kernel
change measure anew with ``--remeasure``).

``--tiled`` fits the call table instead (cpp/data/cost_model_calls.csv: what each kernel call of a
tiled op beyond its first costs, op_params::CallTerms) from per-op counts of tiled programs
(benchmarks/op_counts.py tiled_op_counts: each segment op's calls, loop dispatch and ring shifts)
against the same ops untiled: per op, counted tiled - (tiled / untiled MACs) x counted untiled,
by non-negative least squares per kernel variant, op type and "*" as above, each op weighted by
1 / its tiled program's total. TILED_CONFIGURATIONS lists the plans (the segments each search
chose are kept with the counts, ``--counts tools/cost_model_tiled_counts.json``, so a refit
rebuilds the same plans with ``tiling.tile``).
"""

import argparse
import json
import pathlib
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from codegen_bench import build_plugin  # noqa: E402
from op_counts import BUILD_TARGETS, compile_for_counts, op_counts, tiled_op_counts  # noqa: E402

import tinyarena  # noqa: E402
from tinyarena import _core, tiling  # noqa: E402

TERMS = ("macs", "live_macs", "clamped_macs", "inputs", "outputs", "pixels", "calls")
# The calibration models: the shared real models and converter-corpus models that cover the
# other kernels (LSTM, SE blocks, inverted residuals, resize); the bench reports every model.
CALIBRATION_MODELS = (
    "tests/data/models/ad01_int8.tflite", "tests/data/models/hello_world_int8.tflite",
    "tests/data/models/kws_ref_model.tflite", "tests/data/models/micro_speech_quantized.tflite",
    "tests/data/models/person_detect.tflite", "tests/data/models/pretrainedResnet_quant.tflite",
    "tests/data/models/str_ww_ref_model.tflite", "tests/data/models/vww_96_int8.tflite",
    "tests/data/converted/ds_cnn_kws_floatio.tflite", "tests/data/converted/lstm_kws_fused_int8io.tflite",
    "tests/data/converted/mcunet_se_80_int8io.tflite", "tests/data/converted/mobilenet_v2_035_96_int8io.tflite",
    "tests/data/converted/yolo_tiny_upsampling2d_128x160_int8io.tflite",
    "tests/data/converted/gru_kws_unrolled_int8io.tflite", "tests/data/converted/mobilenet_v2_torch_64.tflite",
)
# The tiled calibration: (model, search) with search "untiled" or "MODE@MAX_MAC_OVERHEAD" (the plan
# tiling.search(model, tiling=MODE, max_mac_overhead=...) picks); every model also untiled.
TILED_MODELS = (
    "tests/data/models/kws_ref_model.tflite", "tests/data/models/vww_96_int8.tflite",
    "tests/data/models/person_detect.tflite", "tests/data/models/str_ww_ref_model.tflite",
    "tests/data/models/pretrainedResnet_quant.tflite", "tests/data/converted/mobilenet_v2_035_96_int8io.tflite",
)
TILED_CONFIGURATIONS = tuple((m, s) for m in TILED_MODELS for s in ("untiled", "rows@1.0", "auto@1.15")) + (
    ("tests/data/models/vww_96_int8.tflite", "patches@1.3"), ("tests/data/models/person_detect.tflite", "patches@1.3"),
    ("tests/data/converted/mobilenet_v2_035_96_int8io.tflite", "patches@1.3"),
)
CALL_TERMS = ("calls", "channels", "window", "leftover_macs", "strip_macs", "strip_channels")
CALLS_HEADER = ("# Cortex-M instructions each kernel call of a tiled op repeats beyond its first (op_params/cost_model.h,\n"
                "# CallTerms), per build and kernel variant. Written by tools/calibrate_cost_model.py --tiled from exact "
                "QEMU counts; do not edit by hand.\n")
MIN_SAMPLES_FOR_CALLS = 10
HEADER = ("# Cortex-M instructions per op: sum of coefficient x term (op_params/cost_model.h), per build and\n"
          "# kernel variant. Written by tools/calibrate_cost_model.py from exact QEMU counts; do not edit by hand.\n")


def op_rows(path, counts):
    """[(kernel, terms, counted)] of every op of the model at ``path``."""
    plan = tinyarena.plan(str(path))
    graph = plan.graph
    rows = []
    for op in plan.ops:
        if graph.ops[op.index].elided:
            continue
        terms = _core.cost_terms(graph, op.index)
        rows.append((_core.cost_kernel(graph, op.index), [getattr(terms, t) for t in TERMS], counts[str(op.index)]))
    return rows


def nnls(a, b, iterations=200):
    """argmin |a x - b| subject to x >= 0 (Lawson and Hanson's active-set method)."""
    n = a.shape[1]
    x = np.zeros(n)
    passive = np.zeros(n, bool)
    for _ in range(iterations):
        gradient = a.T @ (b - a @ x)
        candidates = np.where(~passive & (gradient > 1e-12 * max(1.0, np.abs(gradient).max())))[0]
        if not len(candidates):
            break
        passive[candidates[np.argmax(gradient[candidates])]] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > 0).all():
                x = z
                break
            blocking = passive & (z <= 0)
            step = np.min(x[blocking] / (x[blocking] - z[blocking]))
            x = x + step * (z - x)
            passive &= x > 1e-12
    return x


def fit(samples):
    """Coefficients of TERMS for [(terms, counted, weight)], non-negative, columns normalized; the
    per-call constant only from MIN_SAMPLES_FOR_CALLS samples or more (with fewer it would absorb
    the few ops' size and mispredict a differently sized one)."""
    a = np.array([t for t, _, _ in samples], float)
    if len(samples) < MIN_SAMPLES_FOR_CALLS:
        a[:, TERMS.index("calls")] = 0.0
    b = np.array([c for _, c, _ in samples], float)
    w = np.array([w for _, _, w in samples], float)
    scale = np.abs(a).max(axis=0)
    scale[scale == 0] = 1.0
    x = nnls(a / scale * w[:, None], b * w)
    return x / scale


def stored_counts(counts_file, remeasure):
    """The counts ``counts_file`` holds ({} without one, or when everything is to be remeasured)."""
    return json.loads(counts_file.read_text()) if counts_file and counts_file.exists() and not remeasure else {}


def measure(paths, builds, counts_file, remeasure):
    """{build: {model path: {op index: count}}}, from ``counts_file`` where it has them."""
    counts = stored_counts(counts_file, remeasure)
    with tempfile.TemporaryDirectory(prefix="tinyarena-calibrate-") as tmp:
        work = pathlib.Path(tmp)
        plugin = build_plugin(work)
        for build in builds:
            for path in paths:
                key = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
                if key in counts.get(build, {}):
                    continue
                plan = tinyarena.plan(str(path), target=BUILD_TARGETS[build])
                out_dir = work / f"{path.stem}_{build}"
                compile_for_counts(plan, out_dir, build)
                counts.setdefault(build, {})[key] = {str(k): v for k, v in op_counts(plan, out_dir, plugin, build).items()}
                print(f"{build} {path.stem}: {sum(counts[build][key].values()):,} instructions", flush=True)
                if counts_file:
                    counts_file.write_text(json.dumps(counts, indent=1, sort_keys=True) + "\n")
    return counts


def table_rows(build, per_model):
    """CSV rows (build, kernel, coefficients..., samples) of one build."""
    groups = {}
    for path, counts in sorted(per_model.items()):
        rows = op_rows(REPO / path if not pathlib.Path(path).is_absolute() else path, counts)
        weight = 1.0 / max(1, sum(c for _, _, c in rows))
        for kernel, terms, counted in rows:
            for key in {kernel, kernel.split("/")[0], "*"}:
                groups.setdefault(key, []).append((terms, counted, weight))
    return [(build, key, *fit(samples), len(samples)) for key, samples in sorted(groups.items())]


def segments_dicts(plan):
    return [dict(ops=list(s.ops), mode=s.mode, stripe_rows=s.stripe_rows, column_strips=s.column_strips,
                 patches_h=s.patches_h, patches_w=s.patches_w) for s in plan.segments]


def tiled_plan(path, search, target, segments=None):
    """The plan of a TILED_CONFIGURATIONS entry: untiled, the given segments, else the search's."""
    if search == "untiled":
        return tinyarena.plan(str(path), target=target)
    if segments is not None:
        return tiling.tile(str(path), [_core.Segment(**s) for s in segments], target=target)
    mode, overhead = search.split("@")
    return tiling.search(str(path), tiling=mode, max_mac_overhead=float(overhead), target=target).best


def measure_tiled(configurations, builds, counts_file, remeasure):
    """{build: {"model:search": {"segments": [...], "counts": {op: count}, "total": n}}}."""
    counts = stored_counts(counts_file, remeasure)
    with tempfile.TemporaryDirectory(prefix="tinyarena-calibrate-") as tmp:
        work = pathlib.Path(tmp)
        plugin = build_plugin(work)
        for build in builds:
            for model, search in configurations:
                key = f"{model}:{search}"
                if key in counts.get(build, {}):
                    continue
                plan = tiled_plan(REPO / model, search, BUILD_TARGETS[build])
                out_dir = work / f"{pathlib.Path(model).stem}_{search.replace('@', '_')}_{build}"
                compile_for_counts(plan, out_dir, build)
                found = tiled_op_counts(plan, out_dir, plugin, build)
                counts.setdefault(build, {})[key] = {
                    "segments": segments_dicts(plan) if search != "untiled" else [],
                    "counts": {str(k): v for k, v in found.items()}, "total": sum(found.values())}
                print(f"{build} {key}: {sum(found.values()):,} instructions", flush=True)
                if counts_file:
                    counts_file.write_text(json.dumps(counts, indent=1, sort_keys=True) + "\n")
    return counts


def segment_op_calls(plan):
    """{op: (calls, width share, tiled MACs)} of every segment op (tiling.segment_op_instructions' arguments)."""
    core, calls = plan.tiled, {}
    macs = {r.index: r.macs for r in plan.ops}  # a segment op's report: its tiled MACs
    for s, segment in enumerate(core.segments):
        for op in segment.ops:
            if segment.mode == "rows":
                stream = core.streams[s]
                runs = sum(1 for kind, target, _, _ in stream.steps if kind == "run" and target == op)
                strips = max(1, stream.column_strips)
                calls[op] = (max(1, runs) * strips, 1.0 / strips, macs[op])
            else:
                run = core.patch_runs[s]
                calls[op] = (run.grid_h * run.grid_w, 1.0 / run.grid_w, macs[op])
    return calls


def call_rows(build, per_config):
    """CSV rows (build, kernel, call coefficients..., samples) of one build from its tiled counts
    (of TILED_CONFIGURATIONS only: other entries of the counts file are held out)."""
    groups = {}
    target = BUILD_TARGETS[build]
    for model, search in TILED_CONFIGURATIONS:
        entry = per_config[f"{model}:{search}"]
        if search == "untiled":
            continue
        untiled = per_config[f"{model}:untiled"]["counts"]
        plan = tiled_plan(REPO / model, search, target, entry["segments"])
        weight = 1.0 / max(1, entry["total"])
        for op, (calls, share, macs) in sorted(segment_op_calls(plan).items()):
            untiled_macs = plan.graph.ops[op].macs
            scale = macs / untiled_macs if untiled_macs else 1.0
            terms = _core.call_terms(plan.graph, op, calls, share, scale)
            residual = entry["counts"][str(op)] - scale * untiled[str(op)]
            kernel = _core.cost_kernel(plan.graph, op)
            for k in {kernel, kernel.split("/")[0], "*"}:
                groups.setdefault(k, []).append(([getattr(terms, t) for t in CALL_TERMS], residual, weight))
    rows = []
    for key, samples in sorted(groups.items()):
        a = np.array([s for s, _, _ in samples], float)
        b = np.array([r for _, r, _ in samples], float)
        w = np.array([w for _, _, w in samples], float)
        scale = np.abs(a).max(axis=0)
        scale[scale == 0] = 1.0
        rows.append((build, key, *(nnls(a / scale * w[:, None], b * w) / scale), len(samples)))
    return rows


def main_tiled(args):
    counts = measure_tiled(TILED_CONFIGURATIONS, args.builds, args.counts, args.remeasure)
    lines = [CALLS_HEADER + "build,kernel," + ",".join(CALL_TERMS) + ",samples"]
    for build in args.builds:
        for row in call_rows(build, counts[build]):
            lines.append(",".join([row[0], row[1], *(f"{v:.6g}" for v in row[2:2 + len(CALL_TERMS)]), str(row[-1])]))
    out = args.out or REPO / "cpp" / "data" / "cost_model_calls.csv"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out} ({len(lines) - 1} rows)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", nargs="+", choices=["portable", "simd", "helium"],
                        help="default: portable and simd (--tiled: simd)")
    parser.add_argument("--models", nargs="+", help="model paths (default: the calibration set)")
    parser.add_argument("--counts", type=pathlib.Path, help="JSON file keeping the measured per-op counts")
    parser.add_argument("--remeasure", action="store_true", help="measure again even what --counts holds")
    parser.add_argument("--out", type=pathlib.Path,
                        help="the CSV to write (default cpp/data/cost_model.csv, --tiled: cost_model_calls.csv)")
    parser.add_argument("--tiled", action="store_true",
                        help="fit the per-call table of tiled ops from TILED_CONFIGURATIONS (simd build by default)")
    args = parser.parse_args(argv)
    if args.tiled:
        args.builds = args.builds or ["simd"]
        return main_tiled(args)
    args.builds = args.builds or ["portable", "simd"]
    args.out = args.out or REPO / "cpp" / "data" / "cost_model.csv"
    paths = [pathlib.Path(p).resolve() for p in (args.models or [REPO / m for m in CALIBRATION_MODELS])]
    counts = measure(paths, args.builds, args.counts, args.remeasure)
    lines = [HEADER + "build,kernel," + ",".join(TERMS) + ",samples"]
    for build in args.builds:
        for row in table_rows(build, counts[build]):
            lines.append(",".join([row[0], row[1], *(f"{v:.6g}" for v in row[2:2 + len(TERMS)]), str(row[-1])]))
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out} ({len(lines) - 1} rows)")


if __name__ == "__main__":
    main()
