"""The default DSP build against the portable one, per model: speed and flash (issue 27 item 1).

    python benchmarks/flash_ratios.py [--models NAME|PATH ...]

Each model (a name in tests/data/models or tests/data/converted, or a .tflite path) is planned
without a flash budget, compiled for cortex-m4 and built twice -- the DSP kernels (default) and
the portable ones (-DTA_NO_SIMD, the Cortex-M3's code, int8 weights) -- and run under QEMU
(mps2-an386) with the instruction-count plugin: instructions of one inference (two invokes minus
one) and per MAC. Flash: *image* is the ELF's text + rodata (arm-none-eabi-size), *model* the
part of it that model.c and the kernel library define (the sizes, in the linked image, of the
symbols those files define: weights, records, params, kernel code; not the harness, startup or
libc), and the ratio is the DSP build's model flash over the portable build's.
"""

import argparse
import pathlib
import subprocess
import tempfile

import tinyarena
from bench_paths import model_path
from codegen_bench import TARGET, VARIANTS, bench_inputs, build_plugin, measure
from tinyarena.codegen import compile as compile_model

DEFAULT_MODELS = ("vww_96_int8", "person_detect", "kws_ref_model", "pretrainedResnet_quant", "mcunet_se_80_int8io",
                  "mcunet_se_224_int8io")
ARM_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]


def nm(path):
    """(name, size) of every sized code or read-only data symbol of an object or image (what
    sits in flash; not the arena or other RAM)."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", str(path)], check=True, capture_output=True, text=True).stdout
    return [(f[3], int(f[1], 16)) for f in (line.split() for line in out.splitlines())
            if len(f) == 4 and f[2] in "TtRr"]


def model_symbols(out_dir, cflags):
    """Names of the symbols model.c and the kernel sources define, compiled as the Makefile does."""
    sources = [out_dir / "model.c", *sorted((out_dir / "kernels" / "src").glob("*.c"))]
    names = set()
    with tempfile.TemporaryDirectory() as tmp:
        for source in sources:
            obj = pathlib.Path(tmp) / (source.stem + ".o")
            subprocess.run(["arm-none-eabi-gcc", "-std=c99", "-O2", "-ffp-contract=off", "-ffunction-sections",
                            "-fdata-sections", *ARM_FLAGS, *cflags.split(), f"-I{out_dir / 'kernels' / 'include'}",
                            f"-I{out_dir}", "-c", str(source), "-o", str(obj)], check=True, capture_output=True)
            names.update(name for name, _ in nm(obj))
    return names


def model_flash(out_dir, cflags):
    """Bytes of the linked image (built last by measure) that model.c and the kernels define."""
    names = model_symbols(out_dir, cflags)
    image = out_dir / f"model_{TARGET}.elf"
    return sum(size for name, size in nm(image) if name in names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS), help="names or .tflite paths")
    args = parser.parse_args()
    print("| model | build | instructions | instr/MAC | image flash B | model flash B | model flash / portable |")
    print("|---|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="tinyarena-ratios-") as tmp:
        work = pathlib.Path(tmp)
        plugin = build_plugin(work)
        for name in args.models:
            path = model_path(name)
            plan = tinyarena.plan(path)
            out_dir = work / path.stem
            compile_model(plan, out_dir, target=TARGET, name="model")
            bench_inputs(plan, out_dir)
            rows = {}
            for variant in ("plain C", "DSP"):
                result = measure(out_dir, VARIANTS[variant], plugin)
                rows[variant] = result, model_flash(out_dir, VARIANTS[variant])
            for variant, (r, flash) in rows.items():
                label = "portable (plain C)" if variant == "plain C" else "DSP (default)"
                print(f"| {path.stem} | {label} | {r['insns']:,} | {r['insns'] / plan.macs:.2f} | {r['text']:,} | "
                      f"{flash:,} | {flash / rows['plain C'][1]:.3f}x |", flush=True)


if __name__ == "__main__":
    main()
