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
from op_counts import BUILD_TARGETS, compile_for_counts, op_counts  # noqa: E402

import tinyarena  # noqa: E402
from tinyarena import _core  # noqa: E402

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


def measure(paths, builds, counts_file, remeasure):
    """{build: {model path: {op index: count}}}, from ``counts_file`` where it has them."""
    counts = json.loads(counts_file.read_text()) if counts_file and counts_file.exists() and not remeasure else {}
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", nargs="+", default=["portable", "simd"], choices=["portable", "simd", "helium"])
    parser.add_argument("--models", nargs="+", help="model paths (default: the calibration set)")
    parser.add_argument("--counts", type=pathlib.Path, help="JSON file keeping the measured per-op counts")
    parser.add_argument("--remeasure", action="store_true", help="measure again even what --counts holds")
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "cpp" / "data" / "cost_model.csv")
    args = parser.parse_args(argv)
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
