"""Shared fixtures of the builder tests."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # test modules import builder_test_support
from builder_test_support import run  # noqa: E402


@pytest.fixture
def run_model():
    """``run_model(model_bytes, seed=0) -> (outputs, output details)`` with the reference kernels."""
    return run
