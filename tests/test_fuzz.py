"""The reader under hostile input: every 1/64 truncation and 10,000 random byte
mutants of each real model, plus empty and non-flatbuffer files, either load
or raise ModelError -- no other exception, no crash, no hang. (The same corpus
runs through the C++ reader under ASan+UBSan in test_cpp.py.)"""

import numpy as np
import pytest

import tinyarena
from real_models import REAL_MODEL_NAMES, real_model

pytestmark = pytest.mark.fuzz

MUTANTS_PER_MODEL = 10_000


def load_or_reject(data):
    try:
        graph = tinyarena.load_model(data)
    except tinyarena.ModelError as e:
        assert str(e)  # names what is wrong
        return False
    # A loaded mutant must be usable by the next stages without crashing.
    for t in graph.tensors:
        _ = t.name, t.shape, t.data
    return True


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_truncations_and_mutants_load_or_raise_model_error(name):
    data = real_model(name).read_bytes()
    for k in range(64):
        assert not load_or_reject(data[: len(data) * k // 64])
    rng = np.random.default_rng(sum(map(ord, name)))
    original = np.frombuffer(data, dtype=np.uint8)
    loaded = 0
    for _ in range(MUTANTS_PER_MODEL):
        mutant = original.copy()
        flips = int(rng.integers(1, 9))
        mutant[rng.integers(0, len(mutant), flips)] = rng.integers(0, 256, flips, dtype=np.uint8)
        loaded += load_or_reject(mutant.tobytes())
    assert 0 < loaded <= MUTANTS_PER_MODEL


@pytest.mark.parametrize("data", [b"", b"\x00" * 3, b"TFL3" * 10, b"\xff" * 64, bytes(range(256))])
def test_junk_is_rejected(data):
    assert not load_or_reject(data)


def test_loaded_mutants_plan_or_fail_cleanly():
    """Mutants that load must also plan (or raise a ValueError), never crash."""
    data = np.frombuffer(real_model("kws_ref_model").read_bytes(), dtype=np.uint8)
    rng = np.random.default_rng(7)
    planned = 0
    for _ in range(500):
        mutant = data.copy()
        mutant[rng.integers(0, 2048, 2)] = rng.integers(0, 256, 2, dtype=np.uint8)  # the structure-heavy head
        try:
            plan = tinyarena.plan(mutant.tobytes())
        except ValueError:
            continue
        assert plan.validate() == []
        planned += 1
    assert planned > 0
