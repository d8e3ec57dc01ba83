"""Our greedy first fit predicts TFLite Micro's own arena head byte for byte:
measured here by running TFLM itself (PyPI `tflite-micro`, RecordingMicroAllocator)."""

import re
import subprocess
import sys

import pytest

import tinyarena
from shared_models import SHARED_MODEL_NAMES, TFLM_ARENA_BYTES, shared_model

PRINT_ALLOCATIONS = """
import sys
from tflite_micro.python.tflite_micro import runtime
runtime.Interpreter.from_file(sys.argv[1]).print_allocations()
"""


def tflm_arena_head(path):
    """TFLM's planned-tensor arena (the 'head'), from its allocation report."""
    # TFLM prints from C++ straight to stdout, so run it in its own process.
    result = subprocess.run([sys.executable, "-c", PRINT_ALLOCATIONS, str(path)], capture_output=True, text=True,
                            timeout=120)
    match = re.search(r"Arena allocation head (\d+) bytes", result.stdout + result.stderr)
    assert match, f"tflite-micro printed no arena report: {result.stdout[-500:]} {result.stderr[-500:]}"
    return int(match.group(1))


@pytest.mark.parametrize("name", SHARED_MODEL_NAMES)
def test_first_fit_equals_tflm_arena_head(name):
    try:
        import tflite_micro  # noqa: F401
    except ImportError:
        pytest.fail("tflite-micro is not installed (pip install tflite-micro; .ci/run installs it)")
    path = shared_model(name)
    measured = tflm_arena_head(path)
    assert measured == TFLM_ARENA_BYTES[name]
    plan = tinyarena.plan(path, allocator="greedy_size_first_fit", inplace=False, scratch=False, align=16)
    assert plan.peak_bytes == measured
