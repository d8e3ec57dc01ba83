"""Training-step memory (issue 28): peak SRAM, trainable and gradient bytes of one sparse-update
training step, with each SGD update right after its gradient (reordered) and all at the end, for
vww_96_int8, person_detect and MobileNetV2-0.35@144 (built by tinyarena.builder: no such model is
committed) under bias, last:2, last:4 and auto --sram 256K --flash 1M; then the planning time of a
100-layer network (builder.chain(100), median of --repeat runs).

    python benchmarks/training_bench.py [--repeat 20] [--chart PATH]
"""

import argparse

from bench_paths import MODELS_DIR
from plan_speed import median_ms

import tinyarena
from tinyarena import builder, training

SPECS = ("bias", "last:2", "last:4", "auto")
LIMITS = {"sram": "256K", "flash": "1M"}


def models():
    yield "vww_96_int8", tinyarena.load_model(MODELS_DIR / "vww_96_int8.tflite")
    yield "person_detect", tinyarena.load_model(MODELS_DIR / "person_detect.tflite")
    yield "MobileNetV2-0.35@144", tinyarena.load_model(builder.mobilenet_v2(alpha=0.35, resolution=144, num_classes=2))


def rows(graph):
    for spec in SPECS:
        limits = LIMITS if spec == "auto" else {}
        reordered = training.plan_training(graph, spec, **limits)
        at_end = training.plan_training(graph, reordered.spec, reorder_updates=False, **limits)
        for plan in (reordered, at_end):
            assert plan.validate() == []
        yield spec, reordered, at_end


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--chart", help="write the chart of vww_96_int8 under last:2 here")
    args = parser.parse_args()
    print("| model | spec | updated params | inference peak B | train peak B (reordered) | (updates at end) | "
          "saving B | trainable B | gradient B (reordered / at end) | flash B | fits 256K |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, graph in models():
        inference = tinyarena.plan(graph).peak_bytes
        for spec, r, e in rows(graph):
            label = spec if spec != "auto" else f"auto -> {r.spec}"
            fits = "yes" if r.peak_bytes <= 256 * 1024 else "no"
            print(f"| {name} | {label} | {r.updated_parameters:,} | {inference:,} | {r.peak_bytes:,} | "
                  f"{e.peak_bytes:,} | {e.peak_bytes - r.peak_bytes:,} | {r.trainable_bytes:,} | "
                  f"{r.gradient_bytes:,} / {e.gradient_bytes:,} | {r.flash_bytes:,} | {fits} |")
    if args.chart:
        import matplotlib

        matplotlib.use("Agg")
        training.plan_training(MODELS_DIR / "vww_96_int8.tflite", "last:2").plot(args.chart)
        print(f"wrote {args.chart}")
    chain = tinyarena.load_model(builder.chain(100))
    for spec, limits in (("bias", {}), ("last:4", {}), ("auto", {"sram": "80K"})):
        def make(spec=spec, limits=limits):
            return training.plan_training(chain, spec, **limits)

        plan = make()
        ms = median_ms(make, args.repeat)
        shown = f"auto --sram 80K -> {plan.spec}" if spec == "auto" else spec
        print(f"chain(100) {shown}: {len(plan.steps)} steps, "
              f"{len(plan.buffers)} buffers, peak {plan.peak_bytes:,} B, planned in {ms:.1f} ms (median)")


if __name__ == "__main__":
    main()
