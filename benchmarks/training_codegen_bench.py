"""On-device training code (issue 28): gradient agreement, learning curves, cost of one step.

    python benchmarks/training_codegen_bench.py [--targets host cortex-m4] [--steps 320]

1. Agreement: ``tinyarena.training_codegen.verify_training`` (one step, random int8 input and
   label, seed 0, learning rate 0.1) of ``builder.training_demo_cnn()`` and vww_96_int8 under
   ``bias``, ``last:2`` and ``half:2`` (``layers:I,J@0.5`` of the last two weight layers), on each
   target: the largest relative error over the gradients and over the updated parameters, and
   whether every tensor is within its tolerance.
2. Learning: ``training_demo_cnn`` trained on ``left_right_task()`` (64 samples) for ``--steps``
   steps at learning rate 0.05 under each spec (and ``half:2`` at 0.01): mean loss of the first
   and last 32 steps, accuracy on the 64 samples before and after.
3. Cost on Cortex-M4 (QEMU mps2-an386, the instruction-count plugin tools/qemu_insn_count.c):
   instructions of one ``train_step`` (a 2-step run minus a 1-step run) and the planned arena,
   with the updates reordered (default) and at the end (``reorder_updates=False``), and whether
   the two orders' updated parameters after 2 steps are identical (host, traced).
"""

import argparse
import pathlib
import tempfile

import numpy as np
from bench_paths import MODELS_DIR
from codegen_bench import build_plugin, count
from tinyarena.builder import training_demo_cnn
from tinyarena.reader import load_model
from tinyarena.training import training_graph
from tinyarena.training_codegen import (
    compile_training,
    left_right_task,
    run_training,
    verify_training,
)

SPECS = ("bias", "last:2", "half:2")


def resolve(model, spec):
    """``half:2``: the weights of the first half of the output channels of the last two weight layers."""
    if spec != "half:2":
        return spec
    return "layers:" + ",".join(str(u.op) for u in training_graph(model, "last:2").updates) + "@0.5"


def agreement(work, targets):
    demo = work / "training_demo_cnn.tflite"
    demo.write_bytes(training_demo_cnn())
    print("| model | spec | target | loss | max rel. error, gradients | max rel. error, updates | within tolerance |")
    print("|---|---|---|---:|---:|---:|---|")
    for model in (demo, MODELS_DIR / "vww_96_int8.tflite"):
        for spec in SPECS:
            for target in targets:
                check = verify_training(model, resolve(model, spec), target=target, learning_rate=0.1)
                grads = max(e.relative_error for e in check.errors if not e.what.startswith("updated"))
                updates = max(e.relative_error for e in check.errors if e.what.startswith("updated"))
                print(f"| {model.stem} | {spec} | {target} | {check.loss:.4f} | {grads:.2%} | {updates:.2%} | "
                      f"{'yes' if check.ok else 'NO'} |")


LEARNING = [(spec, 0.05) for spec in SPECS] + [("half:2", 0.01)]  # (spec, learning rate)


def learning(work, targets, steps):
    images, labels = left_right_task()
    print("\n| spec | learning rate | target | loss first 32 steps | loss last 32 steps | accuracy before | "
          "accuracy after |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for spec, rate in LEARNING:
        for target in targets:
            out = work / f"learn_{spec.replace(':', '_')}_{rate}_{target}"
            compile_training(training_demo_cnn(), out, resolve(training_demo_cnn(), spec), target=target)
            run = run_training(out, target, images, labels, steps, rate)
            print(f"| {resolve(training_demo_cnn(), spec)} | {rate} | {target} | {run.losses[:32].mean():.3f} | "
                  f"{run.losses[-32:].mean():.3f} | {run.accuracy(labels, after=False):.3f} | "
                  f"{run.accuracy(labels):.3f} |")


def step_cost(work, model, spec, target, plugin, reorder):
    """(instructions of one train_step on Cortex-M4, arena bytes) of ``model`` under ``spec``."""
    out = work / f"cost_{abs(hash((str(model)[:64], spec, reorder)))}"
    compiled = compile_training(model, out, spec, target=target, reorder_updates=reorder)
    size = load_model(model).tensors[load_model(model).inputs[0]].element_count
    sample = np.random.default_rng(0).integers(-128, 128, (1, size), dtype=np.int8)
    totals = []
    for steps in (1, 2):
        run_training(out, target, sample, [1], steps, 0.05)
        totals.append(count(out / f"model_{target}.elf", plugin)[0])
    return totals[1] - totals[0], compiled.arena_bytes


def same_updates(work, model, spec):
    """Whether two traced host steps give byte-identical trainables with updates reordered and at the end."""
    size = load_model(model).tensors[load_model(model).inputs[0]].element_count
    samples = np.random.default_rng(1).integers(-128, 128, (2, size), dtype=np.int8)
    traces = []
    for reorder in (True, False):
        out = work / f"same_{abs(hash((str(model)[:64], spec)))}_{reorder}"
        compile_training(model, out, spec, target="host", reorder_updates=reorder)
        run = run_training(out, "host", samples, [0, 1], 2, 0.05, trace=True)
        traces.append([r for r in run.trace if r[0] == 3])
    return bool(traces[0]) and traces[0] == traces[1]


def costs(work):
    plugin = build_plugin(work)
    print("\n| model | spec | instructions per train_step, reordered | at the end | arena B, reordered | at the end "
          "| updates identical |")
    print("|---|---|---:|---:|---:|---:|---|")
    for name, model in (("training_demo_cnn", training_demo_cnn()), ("vww_96_int8", MODELS_DIR / "vww_96_int8.tflite")):
        for spec in SPECS:
            resolved = resolve(model, spec)
            (ri, ra), (ei, ea) = (step_cost(work, model, resolved, "cortex-m4", plugin, r) for r in (True, False))
            same = "yes" if same_updates(work, model, resolved) else "NO"
            print(f"| {name} | {resolved} | {ri:,} | {ei:,} | {ra:,} | {ea:,} | {same} |")


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
            costs(work)


if __name__ == "__main__":
    main()
