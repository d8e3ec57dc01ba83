"""Graph transforms: lower bound and peak before and after each transform, per model.

    python benchmarks/transforms_bench.py [--verify] [--dags 200] [--models-dir DIR]

For every model: the plan without transforms, then each transform in the order ``plan``
applies them (fold_pads, zero_copy, reorder) with the lower bound and peak before -> after it
(file order for the rewrites) and whether it was kept, the peak with reordering alone, then
the final plan and the time ``plan`` took. ``--verify`` also builds and runs MobileNetV2 1.0@224 with PADs on the host and
on Cortex-M4 under QEMU (portable kernels: the DSP build's packed weights overflow the
board's 4 MB of flash) and prints the times. Random DAGs (builder.random_dag, up to 40 ops):
how often the transforms lower the peak, and that they never raise it.
"""

import argparse
import pathlib
import sys
import time

import tinyarena
from tinyarena import builder
from tinyarena.verify import verify

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from test_schedule import detection_model, inception_model  # noqa: E402
from test_transforms import concat_bottleneck_model, split_slice_model, ssd_heads_model  # noqa: E402


def models(models_dir):
    yield from ((p.stem, p.read_bytes()) for p in sorted(models_dir.glob("*.tflite")))
    yield "mobilenet_v2(1.0, 224, PADs)", builder.mobilenet_v2(1.0, 224, explicit_pad=True)
    yield "mobilenet_v2(0.35, 96, PADs)", builder.mobilenet_v2(0.35, 96, explicit_pad=True)
    yield "three_branches (concat)", inception_model()
    yield "concat_bottleneck", concat_bottleneck_model()
    yield "two_heads (detection)", detection_model()
    yield "ssd_heads (concat)", ssd_heads_model()
    yield "split_slice", split_slice_model()


def report(name, data):
    start = time.perf_counter()
    on = tinyarena.plan(data)
    ms = 1000 * (time.perf_counter() - start)
    off = tinyarena.plan(data, transforms=())
    reorder_only = tinyarena.plan(data, transforms="reorder")
    print(f"| {name} | {len(off.graph.ops)} | {off.lower_bound_bytes:,} / {off.peak_bytes:,} | " + " | ".join(
        f"{r.lower_bound_before:,} -> {r.lower_bound_after:,} / {r.peak_before:,} -> {r.peak_after:,}"
        f"{' (kept)' if r.applied else ' (not kept)' if r.changes else ''}" for r in on.transforms) +
        f" | {reorder_only.peak_bytes:,} | {on.lower_bound_bytes:,} / {on.peak_bytes:,} | {1 - on.peak_bytes / off.peak_bytes:.1%} | {ms:.1f} |")
    return on, off


def random_dags(count):
    lowered = never_worse = 0
    for seed in range(count):
        on, off = (tinyarena.plan(builder.random_dag(seed, max_ops=40), transforms=t) for t in (None, ()))
        never_worse += on.peak_bytes <= off.peak_bytes
        lowered += on.peak_bytes < off.peak_bytes
    print(f"\nrandom_dag(seed, 40), {count} seeds: transforms lower the peak on {lowered}, "
          f"never raise it on {never_worse}/{count}")


def verify_mobilenet_v2_224():
    data = builder.mobilenet_v2(1.0, 224, explicit_pad=True)
    for target, cflags in (("host", ""), ("cortex-m4", "-DTA_NO_SIMD")):
        start = time.perf_counter()
        result = verify(data, target=target, cflags=cflags)
        print(f"mobilenet_v2(1.0, 224, PADs) on {target} {cflags}: {result.summary()}, "
              f"{time.perf_counter() - start:.1f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verify", action="store_true", help="also verify MobileNetV2 1.0@224 on host and M4")
    parser.add_argument("--dags", type=int, default=200, help="random DAGs to compare")
    parser.add_argument("--models-dir", type=pathlib.Path, default=REPO / "tests" / "data" / "models",
                        help="a folder of .tflite models (default: the repository's tests/data/models)")
    args = parser.parse_args()
    print("bytes as lower bound / peak (greedy first fit), 16-byte alignment, in place and scratch on\n")
    print("| model | ops | off | fold_pads | zero_copy | reorder | reorder only: peak | on | peak saved | plan ms |")
    print("|---|---:|---:|---|---|---|---:|---:|---:|---:|")
    for name, data in models(args.models_dir):
        report(name, data)
    random_dags(args.dags)
    if args.verify:
        verify_mobilenet_v2_224()


if __name__ == "__main__":
    main()
