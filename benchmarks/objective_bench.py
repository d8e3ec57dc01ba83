"""The tiling search's two objectives side by side: at SRAM limits that force tiling, the peak
bytes and predicted instructions (cost model, Cortex-M4 SIMD build) of the plan
``tiling.search(..., objective="size")`` takes and of the one ``objective="speed"`` takes.

    python benchmarks/objective_bench.py [--models NAME ...] [--searches MODE@MAX_MAC_OVERHEAD ...]

Limits per model and search: "tight" is the smallest peak the search reaches (size's plan without
a limit), "mid" halfway between that and the untiled peak. Prints a Markdown table.
"""

import argparse
import pathlib

import tinyarena
from tinyarena import tiling

REPO = pathlib.Path(__file__).resolve().parents[1]
MODELS = ("tests/data/models/vww_96_int8.tflite", "tests/data/models/person_detect.tflite",
          "tests/data/converted/mcunet_se_80_int8io.tflite", "tests/data/converted/mobilenet_v2_035_96_int8io.tflite")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--searches", nargs="+", default=["rows@1.0", "auto@1.15"])
    args = parser.parse_args()
    print("| model | search | limit B | untiled peak B / instr. | size: peak B / instr. (x untiled) "
          "| speed: peak B / instr. (x untiled) |\n|---|---|---:|---:|---:|---:|")
    for model in args.models:
        path = str(REPO / model) if not pathlib.Path(model).is_file() else model
        untiled = tinyarena.plan(path)
        for search in args.searches:
            mode, overhead = search.split("@")
            options = dict(tiling=mode, max_mac_overhead=float(overhead))
            smallest = tiling.search(path, **options).best.peak_bytes
            if smallest >= untiled.peak_bytes:
                continue
            for name, limit in (("tight", smallest), ("mid", (smallest + untiled.peak_bytes) // 2)):
                cells = []
                for objective in ("size", "speed"):
                    best = tiling.search(path, sram=limit, objective=objective, **options).best
                    assert best.peak_bytes <= limit, (model, search, objective)
                    cells.append(f"{best.peak_bytes:,} / {best.predicted_instructions:,} "
                                 f"({best.predicted_instructions / untiled.predicted_instructions:.3f}x)")
                print(f"| {pathlib.Path(model).stem} | {search} | {name} {limit:,} "
                      f"| {untiled.peak_bytes:,} / {untiled.predicted_instructions:,} | {cells[0]} | {cells[1]} |",
                      flush=True)


if __name__ == "__main__":
    main()
