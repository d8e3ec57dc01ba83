"""Fixtures of the kernel tests: the C kernel library built for the host, in two variants.

The library is compiled once per session into a temporary directory with the host gcc and
loaded with ctypes (see ckernels.py). Both variants are checked against TFLite's reference
interpreter: "portable" (plain C) and "simd" (the Cortex-M DSP algorithm with emulated intrinsics).
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ckernels import Kernels, build_library  # noqa: E402


@pytest.fixture(scope="session")
def kernel_libs(tmp_path_factory):
    out = tmp_path_factory.mktemp("takernels")
    return {v: Kernels(build_library(out, v), v) for v in ("portable", "simd")}
