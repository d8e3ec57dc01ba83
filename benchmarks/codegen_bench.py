"""Generated code on Cortex-M4: instructions of one inference, flash, RAM and stack.

For each real model (tests/data/models) the generated program is built for cortex-m4 twice -- with the DSP paths
(packed int16 weights, SMLAD) and with ``-DTA_NO_SIMD`` (plain C, int8 weights) -- and run
under QEMU (mps2-an386) with the instruction-count plugin (tools/qemu_insn_count.c).

    python benchmarks/codegen_bench.py [--models NAME ...] [--work DIR]

Instructions of one ``invoke``: the plugin's PC range on ``tinyarena_model_invoke`` (from
``arm-none-eabi-nm -S``) counts only the instructions of that function's own body, since the
kernels and the C library run outside it; that figure is printed as ``body``. The total of one
inference is measured exactly as the instructions of a 2-invoke build minus those of a 1-invoke
build (``-DTINYARENA_RUNS=2``): every kernel, ``memcpy`` and soft-float call is included.
Sizes are ``arm-none-eabi-size`` of the whole image (start-up, harness and newlib included):
flash = text (code + read-only data), RAM = data + bss; the arena is the planned one and the
stack is the harness's high-water mark of one run.
"""

import argparse
import contextlib
import pathlib
import re
import subprocess
import tempfile

import numpy as np

import tinyarena
from tinyarena.codegen import compile as compile_model

from tinyarena.boards import QEMU_MACHINES

from bench_paths import MODELS_DIR, PLUGIN_SOURCE

TARGET = "cortex-m4"
VARIANTS = {"DSP": "", "plain C": "-DTA_NO_SIMD"}


def qemu(target):
    """The QEMU command line that runs ``target``'s harness (its board, semihosting)."""
    return ["qemu-system-arm", "-M", QEMU_MACHINES[target], "-nographic", "-monitor", "none",
            "-semihosting-config", "enable=on,target=native"]


def run(command, cwd=None):
    return subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True)


def build_plugin(work):
    plugin = work / "libinsn_count.so"
    run(["gcc", "-shared", "-fPIC", "-O2", "-fvisibility=hidden", "-o", str(plugin), str(PLUGIN_SOURCE)])
    return plugin


@contextlib.contextmanager
def workspace(keep, prefix):
    """(work folder, instruction-count plugin built there): ``keep`` if given, else a temporary folder."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        work = keep or pathlib.Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        yield work, build_plugin(work)


def build(out_dir, cflags, runs, target=TARGET):
    run(["make", "-s", "clean"], out_dir)
    run(["make", "-s", f"TARGET={target}", f"EXTRA_CFLAGS={cflags} -DTINYARENA_RUNS={runs}"], out_dir)
    return out_dir / f"model_{target}.elf"


def symbol_range(elf, name):
    """[lo, hi) of a symbol from ``arm-none-eabi-nm -S`` (Thumb bit cleared)."""
    for line in run(["arm-none-eabi-nm", "-S", str(elf)]).stdout.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[3] == name:
            lo = int(fields[0], 16) & ~1
            return lo, lo + int(fields[1], 16)
    raise LookupError(f"{name} not in {elf}")


def count(elf, plugin, lo_hi=None, target=TARGET):
    """(all instructions, instructions in [lo, hi), stdout) of one run under QEMU."""
    args = f"{plugin},mode=insn" + (f",lo={lo_hi[0]:#x},hi={lo_hi[1]:#x}" if lo_hi else "")
    result = run([*qemu(target), "-plugin", args, "-d", "plugin", "-kernel", str(elf)], elf.parent)
    text = result.stdout + result.stderr
    in_range = re.search(r"insns_in_range\[[^\]]*\): (\d+)", text)
    return int(re.search(r"insns: (\d+)", text).group(1)), int(in_range.group(1)) if in_range else None, text


def sizes(elf):
    text, data, bss = (int(v) for v in run(["arm-none-eabi-size", str(elf)]).stdout.splitlines()[1].split()[:3])
    return text, data, bss


def measure(out_dir, cflags, plugin, target=TARGET):
    """One inference of the program in ``out_dir`` built for ``target`` with ``cflags``: exact
    instructions (2 invokes minus 1), the invoke body's, sizes, stack and the linked arena."""
    one = build(out_dir, cflags, 1, target)
    invoke = symbol_range(one, "tinyarena_model_invoke")
    arena_lo, arena_hi = symbol_range(one, "ta_arena")
    total_one, body, stdout = count(one, plugin, invoke, target)
    text, data, bss = sizes(one)
    stack = int(re.search(r"stack_bytes: (\d+)", stdout).group(1))
    total_two, _, _ = count(build(out_dir, cflags, 2, target), plugin, None, target)
    return dict(insns=total_two - total_one, body=body, text=text, ram=data + bss, stack=stack,
                arena=arena_hi - arena_lo)


def bench_inputs(plan, out_dir):
    """Random int8 inputs (seed 0) for the harness."""
    rng = np.random.default_rng(0)
    for i, index in enumerate(plan.graph.inputs):
        shape = plan.graph.tensors[index].shape
        (out_dir / f"input{i}.bin").write_bytes(rng.integers(-128, 128, shape, dtype=np.int8).tobytes())


def bench_model(path, work, plugin):
    plan = tinyarena.plan(path)
    out_dir = work / path.stem
    compile_model(plan, out_dir, target=TARGET, name="model")
    bench_inputs(plan, out_dir)
    return plan, {variant: measure(out_dir, cflags, plugin) for variant, cflags in VARIANTS.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", help="model names in tests/data/models (default: all)")
    parser.add_argument("--work", type=pathlib.Path, help="keep the generated programs here")
    args = parser.parse_args()
    paths = sorted(MODELS_DIR.glob("*.tflite"))
    if args.models:
        paths = [p for p in paths if p.stem in args.models]
    print("| model | MACs | build | instructions | instr/MAC | invoke body | flash (text) B | RAM (data+bss) B "
          "| arena B | of which scratch B | stack B | arena + stack B |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with workspace(args.work, "tinyarena-bench-") as (work, plugin):
        for path in paths:
            plan, results = bench_model(path, work, plugin)
            scratch = max((b.size for b in plan.buffers if b.kind == "scratch"), default=0)
            for variant, r in results.items():
                if r["arena"] != plan.peak_bytes:
                    raise SystemExit(f"{path.stem}: the image's arena is {r['arena']} B, the plan's peak "
                                     f"{plan.peak_bytes} B")
                print(f"| {path.stem} | {plan.macs:,} | {variant} | {r['insns']:,} "
                      f"| {r['insns'] / max(plan.macs, 1):.2f} | {r['body']:,} | {r['text']:,} | {r['ram']:,} "
                      f"| {r['arena']:,} | {scratch:,} | {r['stack']:,} | {r['arena'] + r['stack']:,} |", flush=True)


if __name__ == "__main__":
    main()
