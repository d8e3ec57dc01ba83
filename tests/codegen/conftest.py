"""Fixtures of the code generator tests: the real models, the randomized single-op cases of
the kernel tests (tests/kernels/single_op_cases.py) and the Cortex-M tool checks."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))  # real_models
sys.path.insert(0, str(TESTS / "kernels"))  # single_op_cases

needs_cortex_m = pytest.mark.qemu  # the Arm toolchain and QEMU (tests/conftest.py)
