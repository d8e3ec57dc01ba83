"""Where the benchmarks find their inputs: everything lives in the repository."""

import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]
MODELS_DIR = REPO / "tests" / "data" / "models"  # the real int8 models (SOURCES.md there)
CORPUS_DIR = REPO / "tests" / "data" / "converted"  # real exports from converters (SOURCES.md there)
PLUGIN_SOURCE = REPO / "tools" / "qemu_insn_count.c"  # the QEMU instruction-count plugin


def model_path(name):
    """A .tflite path as given, else the model NAME in MODELS_DIR or CORPUS_DIR."""
    path = pathlib.Path(name)
    if path.suffix == ".tflite":
        return path
    for folder in (MODELS_DIR, CORPUS_DIR):
        if (folder / f"{name}.tflite").exists():
            return folder / f"{name}.tflite"
    raise SystemExit(f"no model {name} in {MODELS_DIR} or {CORPUS_DIR}")
