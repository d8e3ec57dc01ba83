"""Planning speed: read + liveness + allocation + report for long generated chains
and the real models (tests/data/models). Prints milliseconds per plan (median of repeated runs).

    python benchmarks/plan_speed.py [--ops 1000] [--repeat 20]

Target (foundation issue): a 1,000-op chain plans in under 50 ms.
"""

import argparse
import statistics
import time

from bench_paths import MODELS_DIR

import tinyarena
from tinyarena import builder



def median_ms(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, nargs="+", default=[100, 1000, 3000])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    print(f"{'model':32s} {'ops':>6s} {'buffers':>8s} {'read ms':>9s} {'plan ms':>9s} {'peak B':>10s}")
    rows = [(f"chain({n})", builder.chain(n)) for n in args.ops]
    rows += [(p.stem, p.read_bytes()) for p in sorted(MODELS_DIR.glob("*.tflite"))]
    for name, data in rows:
        graph = tinyarena.load_model(data)
        read_ms = median_ms(lambda: tinyarena.load_model(data), args.repeat)
        plan_ms = median_ms(lambda: tinyarena.plan(graph), args.repeat)
        plan = tinyarena.plan(graph)
        assert plan.validate() == []
        print(f"{name:32s} {len(graph.ops):6d} {len(plan.buffers):8d} {read_ms:9.2f} {plan_ms:9.2f} {plan.peak_bytes:10,d}")


if __name__ == "__main__":
    main()
