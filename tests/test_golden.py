"""Plans and generated C of every committed model equal the recorded golden hashes
(tests/golden_plans.py says how they are made and when to rewrite them)."""

import json

import pytest

from golden_plans import GOLDEN_FILE, hashes, model_paths

GOLDEN = json.loads(GOLDEN_FILE.read_text())


def test_every_committed_model_has_golden_hashes():
    assert sorted(GOLDEN) == sorted(path.name for path in model_paths())


@pytest.mark.parametrize("path", model_paths(), ids=lambda p: p.stem)
def test_plans_and_code_equal_the_golden_hashes(path):
    assert hashes(path) == GOLDEN[path.name]
