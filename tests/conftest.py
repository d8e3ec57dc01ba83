"""Suite-wide set-up: test modules in sub-folders import the helpers in this folder
(real_models, tflm_reference); tests marked `qemu` need the Arm toolchain and QEMU.
Markers are declared in pyproject.toml."""

import os
import pathlib
import shutil
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

CORTEX_M_TOOLS = ("arm-none-eabi-gcc", "qemu-system-arm")


def pytest_runtest_setup(item):
    """A `qemu` test without the tools skips on a developer's machine and fails in CI
    (CI=true), where .ci/run has installed them: a broken install is never a quiet skip."""
    if item.get_closest_marker("qemu") is None:
        return
    missing = [tool for tool in CORTEX_M_TOOLS if shutil.which(tool) is None]
    if not missing:
        return
    message = f"{' and '.join(missing)} not found (Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)"
    if os.environ.get("CI"):
        pytest.fail(message + ": CI installs them")
    pytest.skip(message)
