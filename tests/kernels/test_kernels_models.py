"""Every op of the 8 real int8 models, kernel by kernel, against TFLite's reference kernels.

Each model is run once with the reference resolver on random inputs (all intermediates kept);
each op's kernel is then fed the interpreter's own input tensors and must reproduce the
interpreter's output bytes exactly, in the portable and the SIMD (emulated) variant.
"""

import pytest

from model_ops import run_model
from real_models import REAL_MODEL_NAMES, real_model
from runner import compare


@pytest.mark.parametrize("model", REAL_MODEL_NAMES)
def test_model_ops_bit_exact(kernel_libs, model):
    path = real_model(model)
    failures = []
    for seed in (0, 1):
        for case in run_model(path.read_bytes(), model, seed=seed):
            for k in kernel_libs.values():
                err = compare(k, case)
                if err:
                    failures.append(err)
    assert not failures, "\n".join(failures[:20])
