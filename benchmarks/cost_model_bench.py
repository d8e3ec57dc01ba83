"""The cost model's accuracy: predicted vs counted instructions of one inference, per model.

    python benchmarks/cost_model_bench.py [--builds simd portable] [--models NAME|PATH ...]

For each model (default: the shared real models and the converter corpus) and build (the SIMD
kernels on the Cortex-M4, the portable ones on the Cortex-M3: benchmarks/op_counts.py) the
prediction is ``plan.predicted_instructions`` (the sum of the ops' predictions of
op_params/cost_model.h) and the count is one exact inference under QEMU (2 invokes minus 1, no
trace hook). ``calibrated`` says whether the model is in tools/calibrate_cost_model.py's
calibration set (the others are held out). ``--tiled`` counts instead the tiled plans the search
picks (``--searches MODE@MAX_MAC_OVERHEAD ...``, default rows@1.0 auto@1.15:
``tiling.search(tiling=MODE, max_mac_overhead=...)``): their predicted and counted instructions,
and their predicted and counted ratio to the untiled program (latency overhead); ``calibrated``
then says whether that plan is in the tiled calibration (TILED_CONFIGURATIONS).
"""

import argparse
import pathlib
import sys

from bench_paths import CORPUS_DIR, MODELS_DIR, REPO, model_path
from codegen_bench import workspace
from op_counts import BUILD_TARGETS, compile_for_counts, invoke_count

import tinyarena
from tinyarena import tiling

sys.path.insert(0, str(REPO / "tools"))
from calibrate_cost_model import CALIBRATION_MODELS, TILED_CONFIGURATIONS  # noqa: E402

def model_paths(names):
    if not names:
        return sorted(MODELS_DIR.glob("*.tflite")) + sorted(CORPUS_DIR.glob("*.tflite"))
    return [model_path(n) for n in names]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", nargs="+", default=["simd", "portable"], choices=sorted(BUILD_TARGETS))
    parser.add_argument("--models", nargs="+", help="names in tests/data/models or .tflite paths (default: all)")
    parser.add_argument("--work", type=pathlib.Path, help="keep the generated programs here")
    parser.add_argument("--tiled", action="store_true", help="only the tiled plans (latency overhead)")
    parser.add_argument("--searches", nargs="+", default=["rows@1.0", "auto@1.15"],
                        help="with --tiled: the searches whose plans are counted, MODE@MAX_MAC_OVERHEAD")
    args = parser.parse_args()
    if args.tiled:
        return tiled_table(args)
    calibrated = {(REPO / m).resolve() for m in CALIBRATION_MODELS}
    print("| model | build (core) | calibrated | MACs | predicted | counted | error |\n|---|---|---|---:|---:|---:|---:|")
    errors = []
    with workspace(args.work, "tinyarena-cost-") as (work, plugin):
        for path in model_paths(args.models):
            for build in args.builds:
                plan = tinyarena.plan(str(path), target=BUILD_TARGETS[build])
                out_dir = work / f"{path.stem}_{build}"
                compile_for_counts(plan, out_dir, build)
                counted = invoke_count(out_dir, plugin, build)
                predicted = plan.predicted_instructions
                error = 100.0 * (predicted - counted) / counted
                errors.append(abs(error))
                print(f"| {path.stem} | {build} ({BUILD_TARGETS[build]}) | {'yes' if path.resolve() in calibrated else 'no'} "
                      f"| {plan.macs:,} | {predicted:,} | {counted:,} | {error:+.1f}% |", flush=True)
    print(f"\nlargest |error| {max(errors):.1f}%, mean {sum(errors) / len(errors):.1f}% over {len(errors)} runs")


def tiled_table(args):
    print("| model | search | build (core) | calibrated | peak B tiled / untiled | predicted | counted | error "
          "| predicted overhead | counted overhead |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    calibrated = {((REPO / m).resolve(), s) for m, s in TILED_CONFIGURATIONS}
    errors = []
    with workspace(args.work, "tinyarena-cost-") as (work, plugin):
        for path in model_paths(args.models):
            for build in args.builds:
                target = BUILD_TARGETS[build]
                untiled, counted_untiled = tinyarena.plan(str(path), target=target), None
                for search in args.searches:
                    mode, overhead = search.split("@")
                    best = tiling.search(str(path), tiling=mode, max_mac_overhead=float(overhead), target=target).best
                    if not best.segments:
                        continue
                    if counted_untiled is None:
                        compile_for_counts(untiled, work / f"{path.stem}_{build}_untiled", build)
                        counted_untiled = invoke_count(work / f"{path.stem}_{build}_untiled", plugin, build)
                    out_dir = work / f"{path.stem}_{build}_{mode}_{overhead}"
                    compile_for_counts(best, out_dir, build)
                    counted = invoke_count(out_dir, plugin, build)
                    error = 100.0 * (best.predicted_instructions - counted) / counted
                    errors.append(abs(error))
                    print(f"| {path.stem} | {search} | {build} ({target}) "
                          f"| {'yes' if (path.resolve(), search) in calibrated else 'no'} "
                          f"| {best.peak_bytes:,} / {untiled.peak_bytes:,} | {best.predicted_instructions:,} "
                          f"| {counted:,} | {error:+.1f}% | {best.latency_overhead:.3f}x "
                          f"| {counted / counted_untiled:.3f}x |", flush=True)
    if errors:
        print(f"\nlargest |error| {max(errors):.1f}%, mean {sum(errors) / len(errors):.1f}% over {len(errors)} plans")


if __name__ == "__main__":
    main()
