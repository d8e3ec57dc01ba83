"""TFLite Micro (PyPI `tflite-micro`) as a reference: its arena report."""

import re
import subprocess
import sys

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
