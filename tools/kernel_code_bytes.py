"""Measure the Cortex-M4 code bytes of each kernel the generated code calls.

Each kernel library source is compiled as the generated Makefile builds it for
TARGET=cortex-m4 (-O2, -ffunction-sections), with the files of its SIMD path and
assembly (conv_simd.c, conv_s8w_asm.c, ...: NAME_*.c beside NAME.c, which the generated
code compiles with it), then linked with the kernel as the only entry and
--gc-sections: the .text left is that kernel and every function of its files it
reaches (libc and libgcc helpers are not counted). The planner's
table (cpp/src/op_params/flash.cpp) holds these figures; tests/test_planner.py
re-measures them when arm-none-eabi-gcc is installed.

    python tools/kernel_code_bytes.py          prints "function bytes", "source bytes", "variant bytes" lines
    python tools/kernel_code_bytes.py --write  rewrites the three tables in cpp/src/op_params/flash.cpp
"""

import pathlib
import re
import subprocess
import sys
import tempfile

KERNELS = pathlib.Path(__file__).resolve().parents[1] / "cpp" / "kernels"
FLASH_CPP = KERNELS.parent / "src" / "op_params" / "flash.cpp"
ARM_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]
CFLAGS = ["-std=c99", "-O2", "-ffp-contract=off", "-ffunction-sections", "-fdata-sections", f"-I{KERNELS / 'include'}"]

# The kernels generated code calls, by source file.
ENTRY_POINTS = {
    "conv.c": ("ta_conv_s8", "ta_conv_s8_packed16"),
    "depthwise.c": ("ta_depthwise_conv_s8", "ta_depthwise_conv_s8_inplace"),
    "fully_connected.c": ("ta_fully_connected_s8",),
    "pooling.c": ("ta_avg_pool_s8", "ta_max_pool_s8"),
    "elementwise.c": ("ta_add_s8", "ta_mul_s8", "ta_squared_difference_s8", "ta_add_f32", "ta_sub_f32", "ta_mul_f32"),
    "softmax.c": ("ta_softmax_s8", "ta_log_softmax_s8"),
    "activations.c": ("ta_requantize_s8", "ta_lut_s8", "ta_hard_swish_s8", "ta_quantize_f32_s8",
                      "ta_dequantize_s8_f32", "ta_leaky_relu_s8"),
    "mean.c": ("ta_mean_s8",),
    "data_movement.c": ("ta_pad_s8", "ta_concat_s8", "ta_split_s8", "ta_transpose_s8", "ta_strided_slice_s8",
                        "ta_resize_nearest_s8", "ta_gather_s8", "ta_tile_s8"),
    "lstm.c": ("ta_lstm_s8", "ta_lstm_s8_float_input", "ta_lstm_s8_reset_state"),
}


# A source's kernel variant families: the compile-time guards the generated Makefile sets to 0
# for the families no layer reaches (conv.c and conv_simd.h, depthwise_simd.h, fully_connected.c), and the name under which the code
# several families share is counted (once, with the first of them a model uses; None: no such code).
VARIANTS = {
    "conv.c": (("TA_CONV_PORTABLE", "TA_CONV_COL_PIXEL", "TA_CONV_S8W_GENERAL"), None),
    "depthwise.c": (("TA_DW_3X3_S1", "TA_DW_3X3_S1_ASM", "TA_DW_3X3_S2", "TA_DW_3X3_S2_ASM", "TA_DW_WIDE5_S1",
                     "TA_DW_WIDE5_S2", "TA_DW_WIDE7_S1", "TA_DW_WIDE7_S2", "TA_DW_GENERIC", "TA_DW_PORTABLE",
                     "TA_DW_CHANNELS"),
                    "depthwise.c SIMD path"),
    "fully_connected.c": (("TA_FC_PACKED16", "TA_FC_PORTABLE"), None),
}

# Families reached only through another (the 3x3 assembly through its stride's rows): the other is
# measured with them left out, so a model using both is charged each byte once.
DEPENDENTS = {"TA_DW_3X3_S1": ("TA_DW_3X3_S1_ASM",), "TA_DW_3X3_S2": ("TA_DW_3X3_S2_ASM",)}


def _run(args):
    subprocess.run(args, check=True, capture_output=True, text=True)


def text_bytes(elf):
    out = subprocess.run(["arm-none-eabi-size", str(elf)], check=True, capture_output=True, text=True).stdout
    return int(out.splitlines()[1].split()[0])


def _linked_bytes(gcc, objs, functions, elf):
    """.text of `objs` linked with `functions` as their only roots."""
    roots = [f"-Wl,-u,{f}" for f in functions]
    _run([gcc, *ARM_FLAGS, "-nostdlib", "-Wl,--gc-sections", f"-Wl,-e,{functions[0]}", *roots,
          "-Wl,--unresolved-symbols=ignore-all", *map(str, objs), "-o", str(elf)])
    return text_bytes(elf)


def source_files(source):
    """The library files a source's kernels compile from: it and its NAME_*.c (SIMD path, assembly)."""
    stem = source.removesuffix(".c")
    return [KERNELS / "src" / source, *sorted((KERNELS / "src").glob(f"{stem}_*.c"))]


def _objects(gcc, source, tmp, off=()):
    """The source's files compiled with the variant families `off` set to 0."""
    folder = tmp / "_".join(("obj",) + tuple(off))
    folder.mkdir(exist_ok=True)
    objs = [folder / (path.name + ".o") for path in source_files(source)]
    for path, obj in zip(source_files(source), objs):
        _run([gcc, *CFLAGS, *ARM_FLAGS, *(f"-D{m}=0" for m in off), "-c", str(path), "-o", str(obj)])
    return objs


def _variant_bytes(gcc, source, entries, tmp):
    """{variant: code bytes} of a source with variant families, all its entries linked: each
    family what leaving it out saves from the whole (with its DEPENDENTS left out on both sides),
    the shared SIMD path the rest above the entries with every family left out."""
    families, shared = VARIANTS[source]

    def linked(off):
        return _linked_bytes(gcc, _objects(gcc, source, tmp, off), list(entries), tmp / ("_".join(("elf",) + off)))

    whole, bare = linked(()), linked(families)
    sizes = {}
    for family in families:
        dependents = DEPENDENTS.get(family, ())
        sizes[family] = linked(dependents) - linked((family, *dependents))
    if shared:
        sizes[shared] = whole - bare - sum(sizes.values())
    return sizes


def measure(gcc="arm-none-eabi-gcc"):
    """{kernel function: code bytes} for every function of ENTRY_POINTS, {source: code bytes of
    all its entry points linked together} (what a model calling several of them links) and
    {variant: code bytes}. A source with variant families (VARIANTS) is measured with every
    family left out (its entries' own code); a model links the families it uses on top."""
    functions, sources, variants = {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for source, entries in ENTRY_POINTS.items():
            objs = _objects(gcc, source, tmp, VARIANTS.get(source, ((),))[0])
            for function in entries:
                functions[function] = _linked_bytes(gcc, objs, [function], tmp / (function + ".elf"))
            sources[source] = _linked_bytes(gcc, objs, list(entries), tmp / (source + ".elf"))
            if source in VARIANTS:
                variants.update(_variant_bytes(gcc, source, entries, tmp))
    return functions, sources, variants


def write_tables(functions, sources, variants, path=FLASH_CPP):
    """Replaces the bodies of flash.cpp's three `kBytes` tables (functions, sources, variants)."""
    text = path.read_text()
    for sizes in (functions, sources, variants):
        body = ",\n".join(f'      {{"{name}", {size}}}' for name, size in sizes.items())
        text, count = re.subn(r"(static const std::map<std::string, int64_t> kBytes = \{\n)(?!// written)(.*?)(\};)",
                              lambda m: m.group(1) + "// written\n" + body + m.group(3), text, count=1, flags=re.S)
        assert count == 1, "flash.cpp's kBytes tables not found"
    path.write_text(text.replace("// written\n", ""))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--write"]
    functions, sources, variants = measure(*args[:1])
    if "--write" in sys.argv:
        write_tables(functions, sources, variants)
    for name, size in {**functions, **sources, **variants}.items():
        print(name, size)
