"""Measure the Cortex-M4 code bytes of each kernel the generated code calls.

Each kernel library source is compiled as the generated Makefile builds it for
TARGET=cortex-m4 (-O2, -ffunction-sections), with the files of its SIMD path and
assembly (conv_simd.c, conv_s8w_asm.c, ...: NAME_*.c beside NAME.c, which the generated
code compiles with it), then linked with the kernel as the only entry and
--gc-sections: the .text left is that kernel and every function of its files it
reaches (libc and libgcc helpers are not counted). The planner's
table (cpp/src/op_params/flash.cpp) holds these figures; tests/test_planner.py
re-measures them when arm-none-eabi-gcc is installed.

    python tools/kernel_code_bytes.py          prints "function bytes" and "source bytes" lines
    python tools/kernel_code_bytes.py --write  rewrites the two tables in cpp/src/op_params/flash.cpp
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


def measure(gcc="arm-none-eabi-gcc"):
    """{kernel function: code bytes} for every function of ENTRY_POINTS, and {source: code bytes
    of all its entry points linked together} (what a model calling several of them links)."""
    functions, sources = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for source, entries in ENTRY_POINTS.items():
            objs = [tmp / (path.name + ".o") for path in source_files(source)]
            for path, obj in zip(source_files(source), objs):
                _run([gcc, *CFLAGS, *ARM_FLAGS, "-c", str(path), "-o", str(obj)])
            for function in entries:
                functions[function] = _linked_bytes(gcc, objs, [function], tmp / (function + ".elf"))
            sources[source] = _linked_bytes(gcc, objs, list(entries), tmp / (source + ".elf"))
    return functions, sources


def write_tables(functions, sources, path=FLASH_CPP):
    """Replaces the bodies of flash.cpp's two `kBytes` tables (functions first, then sources)."""
    text = path.read_text()
    for sizes in (functions, sources):
        body = ",\n".join(f'      {{"{name}", {size}}}' for name, size in sizes.items())
        text, count = re.subn(r"(static const std::map<std::string, int64_t> kBytes = \{\n)(?!// written)(.*?)(\};)",
                              lambda m: m.group(1) + "// written\n" + body + m.group(3), text, count=1, flags=re.S)
        assert count == 1, "flash.cpp's kBytes tables not found"
    path.write_text(text.replace("// written\n", ""))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--write"]
    functions, sources = measure(*args[:1])
    if "--write" in sys.argv:
        write_tables(functions, sources)
    for name, size in {**functions, **sources}.items():
        print(name, size)
