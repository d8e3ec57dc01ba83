"""On-device training code (issue 28): gradient agreement, learning curves, cost of one step.

    python benchmarks/training_codegen_bench.py [--targets host cortex-m4] [--steps 320]

1. Agreement: ``tinyarena.training_codegen.verify_training`` (one step, random int8 input and
   label, seed 0, learning rate 0.1) of ``builder.training_demo_cnn()`` and vww_96_int8 under
   ``bias`` and ``last:2``, on each target: the largest relative error over the gradients and
   over the updated parameters, and whether every tensor is within its tolerance.
2. Learning: ``training_demo_cnn`` trained on ``left_right_task()`` (64 samples) for ``--steps``
   steps at learning rate 0.05 under ``bias`` and ``last:2``: mean loss of the first and last 32
   steps, accuracy on the 64 samples before and after.
3. Cost on Cortex-M4 (QEMU mps2-an386, the instruction-count plugin tools/qemu_insn_count.c):
   instructions of one ``train_step`` (a 2-step run minus a 1-step run) and the planned arena.
"""

import argparse
import pathlib
import tempfile

import numpy as np
from bench_paths import MODELS_DIR
from codegen_bench import build_plugin, count
from tinyarena.builder import training_demo_cnn
from tinyarena.reader import load_model
from tinyarena.training_codegen import (
    compile_training,
    left_right_task,
    run_training,
    verify_training,
)

SPECS = ("bias", "last:2")


def agreement(work, targets):
    demo = work / "training_demo_cnn.tflite"
    demo.write_bytes(training_demo_cnn())
    print("| model | spec | target | loss | max rel. error, gradients | max rel. error, updates | within tolerance |")
    print("|---|---|---|---:|---:|---:|---|")
    for model in (demo, MODELS_DIR / "vww_96_int8.tflite"):
        for spec in SPECS:
            for target in targets:
                check = verify_training(model, spec, target=target, learning_rate=0.1)
                grads = max(e.relative_error for e in check.errors if not e.what.startswith("updated"))
                updates = max(e.relative_error for e in check.errors if e.what.startswith("updated"))
                print(f"| {model.stem} | {spec} | {target} | {check.loss:.4f} | {grads:.2%} | {updates:.2%} | "
                      f"{'yes' if check.ok else 'NO'} |")


def learning(work, targets, steps):
    images, labels = left_right_task()
    print("\n| spec | target | loss first 32 steps | loss last 32 steps | accuracy before | accuracy after |")
    print("|---|---|---:|---:|---:|---:|")
    for spec in SPECS:
        for target in targets:
            out = work / f"learn_{spec.replace(':', '_')}_{target}"
            compile_training(training_demo_cnn(), out, spec, target=target)
            run = run_training(out, target, images, labels, steps, 0.05)
            print(f"| {spec} | {target} | {run.losses[:32].mean():.3f} | {run.losses[-32:].mean():.3f} | "
                  f"{run.accuracy(labels, after=False):.3f} | {run.accuracy(labels):.3f} |")


def step_cost(work):
    plugin = build_plugin(work)
    print("\n| model | spec | instructions per train_step (Cortex-M4) | arena B |")
    print("|---|---|---:|---:|")
    for name, model in (("training_demo_cnn", training_demo_cnn()), ("vww_96_int8", MODELS_DIR / "vww_96_int8.tflite")):
        for spec in SPECS:
            out = work / f"cost_{name}_{spec.replace(':', '_')}"
            compiled = compile_training(model, out, spec, target="cortex-m4")
            size = load_model(model).tensors[load_model(model).inputs[0]].element_count
            sample = np.random.default_rng(0).integers(-128, 128, (1, size), dtype=np.int8)
            totals = []
            for steps in (1, 2):
                run_training(out, "cortex-m4", sample, [1], steps, 0.05)
                totals.append(count(out / "model_cortex-m4.elf", plugin)[0])
            print(f"| {name} | {spec} | {totals[1] - totals[0]:,} | {compiled.arena_bytes:,} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=["host", "cortex-m4"])
    parser.add_argument("--steps", type=int, default=320)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tinyarena-train-bench-") as tmp:
        work = pathlib.Path(tmp)
        agreement(work, args.targets)
        learning(work, args.targets, args.steps)
        if "cortex-m4" in args.targets:
            step_cost(work)


if __name__ == "__main__":
    main()
