"""Randomized single-op models (tinyarena.builder) against TFLite's reference kernels.

Every case builds a one-op int8 model with random shapes/options/quantization, runs it with
the reference interpreter on random full-range int8 inputs, and requires the C kernel (both
library variants) to reproduce the output bytes. A quarter of the conv/depthwise/pool cases
compute the output in 3 row stripes, a quarter write through a strided output (extra channels
per pixel), a quarter run in place (depthwise in place; ADD/MUL with the output over an input).
The SIMD conv runs on doubled int8 weights (TA_PACKED_S8, as generated code), once more on single
ones and once on doubled int16 weights (TA_PACKED_S16).
"""

import ctypes

import pytest
from ckernels import MIRRORED_STRUCTS
from model_ops import run_model
from runner import compare
from single_op_cases import FAMILIES, PIPELINE_ONLY, all_cases, make_case

CASES = all_cases(set(FAMILIES) - PIPELINE_ONLY)


@pytest.mark.parametrize("family,i", CASES, ids=[f"{f}-{i}" for f, i in CASES])
def test_single_op_bit_exact(kernel_libs, family, i):
    model, mode = make_case(family, i)
    failures = []
    for case in run_model(model, f"{family}-{i}", seed=i):
        for k in kernel_libs.values():
            # the SIMD conv also on single weights (ta_rq4) and on the int16 layout, depthwise and
            # fully connected on it
            single = (({"doubled": False}, {"conv_weights": "s16"}) if k.simd and case.op_type == "CONV_2D"
                      else ({"conv_weights": "s16"},)
                      if k.simd and case.op_type in ("DEPTHWISE_CONV_2D", "FULLY_CONNECTED") else ())
            for m in (({}, mode) if mode else ({},)) + single:
                err = compare(k, case, **m)
                if err:
                    failures.append(err)
    assert not failures, "\n".join(failures)


def test_case_count():
    assert len(CASES) >= 500


@pytest.mark.parametrize("variant", ["portable", "simd"])
def test_ctypes_mirrors_have_the_sizes_of_the_header_structs(kernel_libs, variant):
    """ckernels.py copies the parameter structs by hand: each copy is as large as the C struct
    (a field added, dropped or retyped in the header changes its size)."""
    lib = kernel_libs[variant]
    sizes = {c_name: lib.ta_test_struct_bytes(c_name.encode()) for c_name in MIRRORED_STRUCTS.values()}
    assert all(sizes.values()), sizes  # every name is known to the probe
    assert {c_name: ctypes.sizeof(mirror) for mirror, c_name in MIRRORED_STRUCTS.items()} == sizes
