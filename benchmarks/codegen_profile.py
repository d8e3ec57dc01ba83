"""Where the instructions of one Cortex-M4 inference go: a count per kernel-library function.

    python benchmarks/codegen_profile.py [--models NAME|PATH ...] [--plain] [--target TARGET] [--kernel-sources DIR]

Builds each real model's generated program for cortex-m4 (DSP paths, or plain C with
``--plain``; ``--target cortex-m3`` for the M3, whose build is the portable one; ``--target
cortex-m55`` for the Helium paths) and runs it once under QEMU per function with the instruction-count plugin
restricted to that function's address range (``arm-none-eabi-nm -S``), once in a build that
invokes the model twice and once in one that invokes it once (``-DTINYARENA_RUNS``): the
difference is one inference. A function's count is its own body (inlined helpers included,
calls to other functions excluded); aliases (one address, two names) are counted once.
A model is a name in tests/data/models or a .tflite path. ``--kernel-sources DIR`` builds with
the kernel sources of DIR (e.g. another checkout's cpp/kernels/src) in place of the installed
ones, to profile two kernel versions with the same plan.
"""

import argparse
import pathlib
import shutil
import tempfile

from bench_paths import MODELS_DIR
from codegen_bench import VARIANTS, bench_inputs, build, build_plugin, count, run

import tinyarena
from tinyarena.codegen import compile as compile_model

# Which op type's work each kernel function does (the rest: everything else); a compiler clone
# (name.isra.0, name.constprop.0) counts as its function.
CONV_FUNCTIONS = ("ta_conv_s8", "conv_simd", "ta_conv_s8_simd", "gemm_2px_doubled8", "gemm_2px_doubled4", "gemm_2px_doubled8_skip",
                  "gemm_2px_doubled4_skip", "gemm_2px_fast_folded", "gemm_2px_fast_offset", "gemm_2px_full",
                  "gemm_2px_clamped", "im2col_pixel", "widen_pair", "small_patch_pair", "small_patch_pixel",
                  "gather_patch", "gather_inside", "widen_span", "widen_values", "patch_row", "ta_conv_s8w_simd",
                  "ta_conv_s8w_gemm_doubled", "ta_conv_s8w_gemm_doubled16", "ta_conv_s8w_gemm_doubled8", "ta_conv_s8w_gemm_doubled4",
                  "ta_conv_s8w_mac", "gemm_4px_general", "gemm_4px_doubled",
                  "group_columns", "doubled_loop_fits", "ta_conv_im2col_pixel", "ta_conv_widen_pair",
                  "ta_conv_small_patch_pair", "ta_conv_widen_quad", "ta_conv_small_patch_quad", "gather_patches", "ta_conv_s8_simd", "conv_portable", "conv_direct", "dot_s8",
                  "conv_gemm", "column_pixel", "gemm_pixel_pair", "column_pair", "kernel_row", "pixel_taps",
                  "store_general",
                  # Helium (conv_mve.c)
                  "ta_conv_s8_mve", "gemm_pair_fast", "gemm_pair_general", "small_k_fast", "small_k_general",
                  "mve_im2col", "pick_gemm", "mve_patch_short_rows", "mve_patch_pair_inside")
DEPTHWISE_FUNCTIONS = ("ta_depthwise_conv_s8", "ta_depthwise_conv_s8_inplace", "ta_depthwise_conv_s8_simd",
                       "ta_depthwise_conv_s8_inplace_simd", "ta_depthwise_conv_s8_scratch_bytes", "dw_simd", "dw_group", "dw_run",
                       "dw_chan_prepare", "dw_chan_weights", "chan_fast", "dw_job_load", "dw3x3s1_asm",
                       "dw3x3s2_asm", "dw3x3s1_rows_c", "dw3x3s2_rows_c", "dw_generic_rows", "generic_store2",
                       "generic_store4", "generic_quad", "chan_requant", "dw_dilated_rows", "dw_portable",
                       "dw_inplace_portable", "load_rows", "dw_load_rows", "build_rows4", "widen_rows4", "build_rows2", "build_rows1",
                       "fill_zp", "fill_borders", "bands_inplace_ok", "dw_slots", "dw_context", "half_pair",
                       "plane_width", "plane_bytes", "ta_dw_wide_applies", "ta_dw_wide_rows", "wide5_s1",
                       "wide5_s2", "wide7_s1", "wide7_s2", "dw_planes", "fill_plane", "rows_3x3_s1",
                       "rows_3x3_s2", "rows_any", "rows_rolling",
                       # one-dimensional kernels (depthwise_channels.c)
                       "dw_channels", "dw_channels_inplace", "group_prepare", "group_rows", "group_pixel",
                       "run_store", "chan_out_slow",
                       # Helium (depthwise_mve.c)
                       "ta_depthwise_mve", "ta_depthwise_mve_supported", "dw3_s1_rows", "dw3_s2_rows",
                       "rows_5x5_s1", "rows_5x5_s2", "rows_7x7_s1", "rows_7x7_s2", "mve_planes",
                       "ta_depthwise_mve_chan16", "ta_depthwise_mve_chan16_mode", "chan16_rows", "chan16_cols_of",
                       "chan16_window")



def op_functions(name):
    """The listed name of a kernel function: without a clone suffix (.isra.0) and without the
    `ta_` / `ta_conv_` prefix its assembly entry points carry (ta_dw3x3s1_asm, ta_conv_gemm_...)."""
    base = name.split(".")[0]
    for prefix in ("ta_conv_", "ta_"):
        if base.startswith(prefix) and base[len(prefix):] in CONV_FUNCTIONS + DEPTHWISE_FUNCTIONS:
            return base[len(prefix):]
    return base


LIBC = ("memcpy", "memmove", "memset", "__aeabi_memcpy", "__aeabi_memset", "__aeabi_dmul", "__aeabi_d2iz", "round",
        "__aeabi_i2d", "__adddf3", "__muldf3", "__floatsidf", "__fixdfsi")


def kernel_functions(elf, kernel_dir, target):
    """{name: (lo, hi)} for every function defined by the kernel sources (and libc helpers)."""
    names = set(LIBC)
    for src in sorted((kernel_dir / "src").glob("*.c")):
        obj = elf.parent / (src.stem + ".prof.o")
        abi = ["-mfloat-abi=hard"] if target == "cortex-m55" else []  # arm_mve.h needs the FP registers
        run(["arm-none-eabi-gcc", "-std=c99", f"-mcpu={target}", "-mthumb", *abi, "-O2", "-ffp-contract=off", "-I", str(kernel_dir / "include"),
             "-c", str(src), "-o", str(obj)])
        names |= {line.split()[-1] for line in run(["arm-none-eabi-nm", str(obj)]).stdout.splitlines()
                  if line.split()[-2] in ("t", "T")}
    ranges = {}
    for line in sorted(run(["arm-none-eabi-nm", "-S", str(elf)]).stdout.splitlines()):
        fields = line.split()
        # a clone the model's build makes (group_columns.part.0) under its source function's name
        if len(fields) == 4 and fields[2] in ("t", "T") and fields[3].split(".")[0] in names:
            lo = int(fields[0], 16) & ~1
            if (lo, lo + int(fields[1], 16)) not in ranges.values():
                ranges[fields[3]] = (lo, lo + int(fields[1], 16))
    return ranges


def profile(path, work, plugin, cflags, kernel_sources=None, target="cortex-m4"):
    plan = tinyarena.plan(path)
    out_dir = work / path.stem
    compile_model(plan, out_dir, target=target, name="model")
    if kernel_sources:  # copied over the generated folder's (sources only one version has stay unused)
        for src in sorted(pathlib.Path(kernel_sources).glob("*")):
            if src.suffix in (".c", ".h"):
                shutil.copy(src, out_dir / "kernels" / "src" / src.name)
    bench_inputs(plan, out_dir)
    counts = {}
    for runs in (1, 2):
        elf = build(out_dir, cflags, runs, target)
        total, _, _ = count(elf, plugin, None, target)
        functions = kernel_functions(elf, out_dir / "kernels", target)
        counts[runs] = {name: count(elf, plugin, lo_hi, target)[1] for name, lo_hi in functions.items()}
        counts[runs]["total"] = total
    one = {name: counts[2][name] - counts[1].get(name, 0) for name in counts[2]}
    total = one.pop("total")
    return plan, total, {name: n for name, n in one.items() if n}


def print_by_op_type(plan, total, rows):
    """Instructions and instructions per MAC of the CONV_2D and DEPTHWISE_CONV_2D kernels."""
    print("\n| op type | MACs | instructions | instr/MAC | share |\n|---|---:|---:|---:|---:|")
    for op_type, functions in (("CONV_2D", CONV_FUNCTIONS), ("DEPTHWISE_CONV_2D", DEPTHWISE_FUNCTIONS)):
        macs = sum(op.macs for op in plan.ops if op.type == op_type)
        n = sum(count for f, count in rows.items() if op_functions(f) in functions)
        if macs:
            print(f"| {op_type} | {macs:,} | {n:,} | {n / macs:.2f} | {100 * n / total:.1f}% |")
    rest = total - sum(n for f, n in rows.items() if op_functions(f) in CONV_FUNCTIONS + DEPTHWISE_FUNCTIONS)
    print(f"| everything else | | {rest:,} | | {100 * rest / total:.1f}% |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["vww_96_int8", "person_detect", "kws_ref_model",
                                                         "pretrainedResnet_quant"])
    parser.add_argument("--plain", action="store_true", help="profile the plain C build (-DTA_NO_SIMD)")
    parser.add_argument("--kernel-sources", help="build with the kernel sources of this folder instead")
    parser.add_argument("--target", default="cortex-m4", choices=("cortex-m3", "cortex-m4", "cortex-m55"),
                        help="the core (default cortex-m4; cortex-m3 builds the portable kernels, cortex-m55 the Helium ones)")
    args = parser.parse_args()
    cflags = VARIANTS["plain C" if args.plain else "DSP"]
    with tempfile.TemporaryDirectory(prefix="tinyarena-profile-") as tmp:
        work = pathlib.Path(tmp)
        plugin = build_plugin(work)
        for name in args.models:
            path = pathlib.Path(name) if name.endswith(".tflite") else MODELS_DIR / f"{name}.tflite"
            plan, total, rows = profile(path, work, plugin, cflags, args.kernel_sources, args.target)
            print(f"\n{path.stem}: {plan.macs:,} MACs, {total:,} instructions per inference")
            print("| function | instructions | per MAC | share |\n|---|---:|---:|---:|")
            for fn, n in sorted(rows.items(), key=lambda kv: -kv[1]):
                print(f"| {fn} | {n:,} | {n / plan.macs:.3f} | {100 * n / total:.1f}% |")
            rest = total - sum(rows.values())
            print(f"| (invoke body, inlined copies) | {rest:,} | {rest / plan.macs:.3f} | {100 * rest / total:.1f}% |")
            print_by_op_type(plan, total, rows)


if __name__ == "__main__":
    main()
