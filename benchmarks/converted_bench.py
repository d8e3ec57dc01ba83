"""Peaks of the converter-made corpus (tests/data/converted): untiled, the int8 graph's lower
bound, and the tiled search at 1.00x and at most 1.10x MACs, with the model's float I/O kept and
with ``io="int8"``; whether each compiles (the first reason when not).

    python benchmarks/converted_bench.py [--models NAME ...]

Prints one Markdown table row per model and interface. ``io="int8"`` on a model whose I/O is
already int8 changes nothing; on a float-I/O model it drops the input QUANTIZE and output
DEQUANTIZE (see README, "Model interface").
"""

import argparse

from bench_paths import REPO

import tinyarena
from tinyarena import codegen, tiling

CONVERTED = REPO / "tests" / "data" / "converted"


def row(path, io):
    untiled = tinyarena.plan(path, io=io)
    bound = tinyarena.plan(path, io="int8").lower_bound_bytes if io == "model" else untiled.lower_bound_bytes
    at_1 = tiling.search(path, tiling="auto", max_mac_overhead=1.0, io=io).best
    at_110 = tiling.search(path, tiling="auto", max_mac_overhead=1.1, io=io).best
    issues = codegen.unsupported_ops(untiled.graph)
    compiles = "yes" if not issues else next(iter(issues.values()))
    return (f"| {path.stem} | {io} | {untiled.peak_bytes:,} | {bound:,} | {at_1.peak_bytes:,} "
            f"({at_1.peak_bytes / untiled.peak_bytes:.2f}x) | {at_110.peak_bytes:,} @ {at_110.mac_overhead:.3f}x "
            f"({at_110.peak_bytes / untiled.peak_bytes:.2f}x) | {compiles} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", help="file stems in tests/data/converted (default: all)")
    args = parser.parse_args()
    paths = sorted(CONVERTED.glob("*.tflite"))
    if args.models:
        paths = [p for p in paths if p.stem in args.models]
    print("| model | io | untiled B | int8 bound B | tiled 1.00x B | tiled <= 1.10x B | compiles |")
    print("|---|---|---:|---:|---:|---:|---|")
    for path in paths:
        for io in ("model", "int8"):
            try:
                print(row(path, io), flush=True)
            except ValueError as e:  # e.g. io="int8" on a model whose boundary is not a QUANTIZE
                print(f"| {path.stem} | {io} | {e} | | | | |", flush=True)


if __name__ == "__main__":
    main()
