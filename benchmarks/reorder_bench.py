"""Operator reordering: peak live bytes (allocation lower bound) in file order and
reordered, with the method, whether it is proven optimal, and the search time.

    python benchmarks/reorder_bench.py [--seeds 20] [--no-inplace] [--alignment 16]
    python benchmarks/reorder_bench.py --scale [--seeds 3]   # 1,000 / 2,000 / 5,000-op DAGs, unrolled LSTM

Models: the real models (tests/data/models), MobileNetV2 0.35@144, the two branchy builder models
of tests/test_schedule.py, and random DAGs (builder.random_dag) of 40-200 ops. With --scale:
random DAGs of about 1,000, 2,000 and 5,000 ops and the 49-step unrolled LSTM of tests/test_schedule.py
(projections first, as converters write it), against its one-time-step order.
"""

import argparse
import sys

import tinyarena
from tinyarena import builder, schedule

from bench_paths import MODELS_DIR, REPO
sys.path.insert(0, str(REPO / "tests"))
from test_schedule import detection_model, inception_model, unrolled_lstm


def row(name, data, args):
    graph = tinyarena.load_model(data)
    r = schedule.find_schedule(graph, alignment=args.alignment, inplace=args.inplace)
    saved = 100.0 * (r.file_peak_bytes - r.peak_bytes) / r.file_peak_bytes if r.file_peak_bytes else 0.0
    print(f"{name:28s} {len(graph.ops):5d} {r.file_peak_bytes:10,d} {r.peak_bytes:10,d} {saved:6.1f}% "
          f"{r.method:>7s} {r.proven_optimal!s:>7s} {r.states:9,d} {1000 * r.seconds:9.1f}")
    return r


def scale(args):
    data, per_step = unrolled_lstm()
    graph = tinyarena.load_model(data)
    one_step = schedule.order_peak_bytes(graph, [op for ops in per_step for op in ops], alignment=args.alignment,
                                         inplace=args.inplace)
    r = row("unrolled_lstm(49)", data, args)
    print(f"  -> one time step {one_step:,d} B; reordered / one step = {r.peak_bytes / one_step:.3f}")
    for target in (1000, 2000, 5000):
        max_ops = target * 8 // 5  # random_dag's graphs come out with about 5/8 of max_ops ops
        results = [row(f"random_dag({seed}, {max_ops})", builder.random_dag(seed, max_ops=max_ops), args)
                   for seed in range(args.seeds)]
        print(f"  -> about {target} ops: {sum(r.peak_bytes < r.file_peak_bytes for r in results)}/{len(results)} "
              f"improved, none worse: {all(r.peak_bytes <= r.file_peak_bytes for r in results)}, "
              f"max {max(r.seconds for r in results):.2f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="random DAGs per size")
    parser.add_argument("--no-inplace", dest="inplace", action="store_false")
    parser.add_argument("--alignment", type=int, default=16)
    parser.add_argument("--scale", action="store_true", help="large random DAGs and the unrolled LSTM only")
    args = parser.parse_args()

    print(f"{'model':28s} {'ops':>5s} {'file B':>10s} {'reorder B':>10s} {'saved':>7s} "
          f"{'method':>7s} {'optimal':>7s} {'states':>9s} {'ms':>9s}")
    if args.scale:
        return scale(args)
    models = [(p.stem, p.read_bytes()) for p in sorted(MODELS_DIR.glob("*.tflite"))]
    models += [("mobilenet_v2(0.35, 144)", builder.mobilenet_v2(0.35, 144)),
               ("two_heads (detection)", detection_model()), ("three_branches (concat)", inception_model())]
    for name, data in models:
        row(name, data, args)
    for max_ops in (40, 80, 100, 200):
        results = [row(f"random_dag({seed}, {max_ops})", builder.random_dag(seed, max_ops=max_ops), args)
                   for seed in range(args.seeds)]
        improved = [r for r in results if r.peak_bytes < r.file_peak_bytes]
        mean_saved = sum(100.0 * (r.file_peak_bytes - r.peak_bytes) / r.file_peak_bytes for r in results) / len(results)
        print(f"  -> max_ops {max_ops}: {len(improved)}/{len(results)} improved, mean saving {mean_saved:.1f}%, "
              f"{sum(r.proven_optimal for r in results)} proven optimal, "
              f"max {1000 * max(r.seconds for r in results):.0f} ms")


if __name__ == "__main__":
    main()
