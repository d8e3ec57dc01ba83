"""Generated code per Cortex-M core: one inference's exact instructions, flash and arena.

Each model is planned and generated once, then built for every Cortex-M target -- cortex-m3
(QEMU mps2-an385, no DSP extension: the portable kernels, int8 weights), cortex-m4 (mps2-an386),
cortex-m7 (mps2-an500), cortex-m33 (mps2-an505), cortex-m55 (mps3-an547) (the DSP kernels;
on the M55 conv, depthwise and fully connected in Helium, on int8 weights) -- and each DSP core's build again with ``-DTA_NO_SIMD`` (the portable
kernels on that core), all run under QEMU with the instruction-count plugin
(tools/qemu_insn_count.c). Ratios are against the portable build of the same core measured in
the same run (the M3's build is the portable one: 1.00).

    python benchmarks/cores_bench.py [--models NAME|PATH ...] [--targets TARGET ...] [--work DIR]

Models are names in tests/data/models or tests/data/converted (the MCUNet-style corpus models,
e.g. mcunet_se_80_int8io) or .tflite paths.

Instructions are exact: a build that invokes twice minus one that invokes once (every kernel,
``memcpy`` and soft-float call included; see codegen_bench.py, whose build and count this
reuses). Flash is ``arm-none-eabi-size`` text of the whole image (start-up, harness and newlib
included), the arena the size of ``ta_arena`` in the linked image, the stack the harness's
high-water mark of one run (the model's call depth plus its kernels' frames).
"""

import argparse
import pathlib

import tinyarena
from tinyarena.boards import QEMU_MACHINES
from tinyarena.codegen import compile as compile_model

from bench_paths import model_path
from codegen_bench import bench_inputs, measure, workspace

DEFAULT_MODELS = ("hello_world_int8", "ad01_int8", "kws_ref_model", "vww_96_int8")
# The kernels each target's compiler selects: no DSP extension on the M3; Helium (MVE) on the M55
# for conv, depthwise and fully connected (the rest of its DSP build is the M4's).
KERNELS = {"cortex-m3": "portable", "cortex-m55": "DSP + Helium"}
PORTABLE = "-DTA_NO_SIMD"


def bench_model(path, targets, work, plugin):
    """{target: (its build's figures, the same core's portable build's figures)} of one model."""
    plan = tinyarena.plan(path)
    out_dir = work / path.stem
    compile_model(plan, out_dir, name="model")
    bench_inputs(plan, out_dir)
    results = {}
    for target in targets:
        native = measure(out_dir, "", plugin, target)
        portable = native if target == "cortex-m3" else measure(out_dir, PORTABLE, plugin, target)
        results[target] = native, portable
    return plan, results


def row(name, macs, target, native, portable):
    kernels = KERNELS.get(target, "DSP")
    per_mac = native["insns"] / max(macs, 1)
    return (f"| {name} | {macs:,} | {target} ({QEMU_MACHINES[target]}) | {kernels} | {native['insns']:,} "
            f"| {per_mac:.2f} | {native['insns'] / portable['insns']:.2f}x | {native['text']:,} "
            f"| {native['text'] / portable['text']:.2f}x | {native['arena']:,} "
            f"| {native['arena'] / portable['arena']:.2f}x | {native['stack']:,} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS),
                        help=f"model names in tests/data/models or tests/data/converted, or .tflite paths "
                             f"(default: {' '.join(DEFAULT_MODELS)})")
    parser.add_argument("--targets", nargs="+", default=list(QEMU_MACHINES), choices=list(QEMU_MACHINES),
                        help="Cortex-M targets (default: all)")
    parser.add_argument("--work", type=pathlib.Path, help="keep the generated programs here")
    args = parser.parse_args()
    paths = [model_path(name) for name in args.models]
    print("| model | MACs | target (board) | kernels | instructions | instr/MAC | vs portable | flash (text) B "
          "| vs portable | arena B | vs portable | stack B |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    with workspace(args.work, "tinyarena-cores-") as (work, plugin):
        for path in paths:
            plan, results = bench_model(path, args.targets, work, plugin)
            for target, (native, portable) in results.items():
                if native["arena"] != plan.peak_bytes:
                    raise SystemExit(f"{path.stem} on {target}: the image's arena is {native['arena']} B, the "
                                     f"plan's peak {plan.peak_bytes} B")
                print(row(path.stem, plan.macs, target, native, portable), flush=True)


if __name__ == "__main__":
    main()
