"""Suite-wide set-up: test modules in sub-folders import the helpers in this folder
(real_models, tflm_reference); tests marked `qemu` need the Arm toolchain and QEMU, tests marked
`executorch` the [executorch] extra (torch and executorch). The generated programs' builds share
compiled kernel objects (tests/compile_cache.py).
Markers are declared in pyproject.toml."""

import importlib.util
import os
import pathlib
import shutil
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import compile_cache as compile_cache_module  # noqa: E402 -- found through the line above

CORTEX_M_TOOLS = ("arm-none-eabi-gcc", "qemu-system-arm")


# Files whose set-up takes minutes (test_cpp.py's sanitizer build) are collected first, so that
# pytest-xdist starts them first rather than leaving them last on the critical path.
SLOWEST_FILES_FIRST = ("test_cpp.py",)


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.path.name not in SLOWEST_FILES_FIRST)  # stable: the rest keep their order


@pytest.fixture(scope="session", autouse=True)
def compile_cache(tmp_path_factory):
    """Every `make` of a generated program in this session compiles each kernel source once per
    set of flags (tests/compile_cache.py); the pytest-xdist workers share the cache."""
    base = tmp_path_factory.getbasetemp()
    cache_dir = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "compile-cache"
    before = os.environ.get("MAKEFLAGS")
    os.environ["MAKEFLAGS"] = " ".join(filter(None, [before, compile_cache_module.install(cache_dir)]))
    yield cache_dir
    if before is None:
        del os.environ["MAKEFLAGS"]
    else:
        os.environ["MAKEFLAGS"] = before


def pytest_runtest_setup(item):
    _require_cortex_m_tools(item)
    _require_executorch(item)


def _skip_or_fail(message):
    """Outside CI a missing tool skips; in CI (CI=true), where .ci/run installs it, it fails."""
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def _require_executorch(item):
    """An `executorch` test without torch and executorch skips on a developer's machine and fails in CI."""
    if item.get_closest_marker("executorch") is None:
        return
    missing = [m for m in ("torch", "executorch") if importlib.util.find_spec(m) is None]
    if missing:
        _skip_or_fail(f"{' and '.join(missing)} not installed (pip install .[executorch]; CI installs it)")


def _require_cortex_m_tools(item):
    """A `qemu` test without the tools skips on a developer's machine and fails in CI: a broken
    install is never a quiet skip."""
    if item.get_closest_marker("qemu") is None:
        return
    missing = [tool for tool in CORTEX_M_TOOLS if shutil.which(tool) is None]
    if not missing:
        return
    _skip_or_fail(f"{' and '.join(missing)} not found (Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi "
                  "qemu-system-arm; CI installs them)")
