"""Where the benchmarks find their inputs: everything lives in the repository."""

import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]
MODELS_DIR = REPO / "tests" / "data" / "models"  # the real int8 models (SOURCES.md there)
PLUGIN_SOURCE = REPO / "tools" / "qemu_insn_count.c"  # the QEMU instruction-count plugin
