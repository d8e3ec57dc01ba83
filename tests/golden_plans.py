"""Hashes of what the pipeline produces for every committed model: the plan (its JSON) and the
generated C, for the default plan, the file's graph untransformed, the int8 interface, and the
tiling search at 1.00x and 1.10x MACs. A refactor that should change nothing for users is checked
against ``tests/data/golden_hashes.json`` (test_golden.py).

Rewrite the file only when a change is meant to alter plans or code, and say so in the commit:
    python tests/golden_plans.py --write
"""

import hashlib
import json
import pathlib
import sys

import tinyarena
from tinyarena import _core, codegen, tiling

REPO = pathlib.Path(__file__).resolve().parents[1]
GOLDEN_FILE = REPO / "tests" / "data" / "golden_hashes.json"
MODEL_DIRS = (REPO / "tests" / "data" / "models", REPO / "tests" / "data" / "converted")

# name -> how to plan a model; each returns a Plan (or TiledPlan)
CONFIGURATIONS = {
    "plan": lambda m: tinyarena.plan(m),
    "plan_untransformed": lambda m: tinyarena.plan(m, transforms="none"),
    "plan_int8_io": lambda m: tinyarena.plan(m, io="int8", input_layout="nhwc"),
    "tiled_rows": lambda m: tiling.search(m, tiling="rows").best,
    "tiled_auto_1.1": lambda m: tiling.search(m, max_mac_overhead=1.1).best,
}


def model_paths():
    return [path for folder in MODEL_DIRS for path in sorted(folder.glob("*.tflite"))]


def _digest(text):
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def plan_hash(plan):
    """The plan's JSON without the model's path (a clone lives elsewhere)."""
    data = plan.to_dict()
    data.pop("model", None)
    return _digest(json.dumps(data, sort_keys=True))


def code_hash(plan):
    """The generated C (every emitted file, Cortex-M4 build), or why the plan does not compile."""
    try:
        program = codegen.lower(plan)
    except tinyarena.UnsupportedError as error:
        return "unsupported: " + str(error)
    return _digest("".join(f"{path}\0{text}\0" for path, text in _core.emit_sources(program, "cortex-m4")))


def hashes(path):
    """{configuration: [plan hash, code hash]} of one model."""
    result = {}
    for name, make in CONFIGURATIONS.items():
        planned = make(path)
        result[name] = [plan_hash(planned), code_hash(planned)]
    return result


def all_hashes():
    return {path.name: hashes(path) for path in model_paths()}


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/golden_plans.py --write")
    GOLDEN_FILE.write_text(json.dumps(all_hashes(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN_FILE}")
