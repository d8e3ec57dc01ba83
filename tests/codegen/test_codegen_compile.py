"""What compile() writes: errors for what the kernel library cannot run, byte-identical
sources on every run, one weight format per build, and scratch inside the planned arena."""

import subprocess

import numpy as np
import pytest

import tinyarena
from conftest import needs_cortex_m
from real_models import REAL_MODEL_NAMES, real_model
from tinyarena import builder
from tinyarena.builder import opcodes
from tinyarena.codegen import compile as compile_model

SOURCES = ("model.h", "model.c", "main.c", "Makefile")


def relu_then(monkeypatch, op, code):
    """A RELU followed by `op` (a unary builtin the builder does not know, declared here)."""
    monkeypatch.setitem(opcodes.OPCODES, op, opcodes.OpCode(code, 1))
    mb = builder.ModelBuilder("unsupported")
    y = mb.relu(mb.input([1, 4, 4, 3], scale=0.02, zero_point=-3))
    mb.output(mb._unary(op, op.lower(), y, np.floor))
    return mb.build()


def test_unsupported_op_names_op_and_index(monkeypatch, tmp_path):
    plan = tinyarena.plan(relu_then(monkeypatch, "FLOOR", 8))
    with pytest.raises(tinyarena.UnsupportedError, match=r"op 1 \(FLOOR\)"):
        compile_model(plan, tmp_path)
    assert not (tmp_path / "model.c").exists()


def test_unsupported_types_name_op_and_index(tmp_path):
    # A float32 RELU (the library runs int8 activations only); the builder makes int8 layers,
    # so the op is emitted by hand.
    mb = builder.ModelBuilder("float_relu")
    x = mb.input([1, 4], dtype="float32")
    y = mb._new_tensor("relu", np.zeros([1, 4]), dtype="float32")
    mb._emit("RELU", [x], [y])
    mb.output(mb.quantize(y, 0.01, 0))
    with pytest.raises(tinyarena.UnsupportedError, match=r"op 0 \(RELU\): the input is float32"):
        compile_model(tinyarena.plan(mb.build()), tmp_path)


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_compiling_twice_gives_identical_sources(name, tmp_path):
    plan = tinyarena.plan(real_model(name))
    first = compile_model(plan, tmp_path / "a")
    second = compile_model(tinyarena.plan(real_model(name)), tmp_path / "b")
    for source in SOURCES:
        assert (first.out_dir / source).read_bytes() == (second.out_dir / source).read_bytes(), source
    assert sorted(p.name for p in (tmp_path / "a" / "kernels" / "src").iterdir()) == sorted(
        p.name for p in (tmp_path / "b" / "kernels" / "src").iterdir())


def test_scratch_planned_is_what_the_kernels_ask():
    plan = tinyarena.plan(real_model("pretrainedResnet_quant"), inplace=False)
    scratch = {b.name: b.size for b in plan.buffers if b.kind == "scratch"}
    graph = plan.graph
    first_conv = next(op for op in graph.ops if op.type == "CONV_2D")
    k = 3 * 3 * 3  # 3x3 over 3 input channels
    out_c = graph.tensors[first_conv.outputs[0]].shape[3]
    # ta_conv_s8_scratch_bytes with the per-channel records precomputed into flash: four int16
    # columns (the int8-weight path's pixel slots) of K rounded up to 4 plus the end-mark word of
    # each (already a multiple of the plan's 16-byte alignment), no per-output-channel part.
    assert out_c == 16
    assert scratch[f"scratch@{first_conv.index} CONV_2D"] == 4 * 2 * ((k + 3) // 4 * 4 + 2) == 240


def test_plan_without_scratch_cannot_be_compiled(tmp_path):
    plan = tinyarena.plan(real_model("kws_ref_model"), scratch=False)
    with pytest.raises(tinyarena.UnsupportedError, match=r"op 0 \(CONV_2D\) needs \d+ B of kernel scratch"):
        compile_model(plan, tmp_path)


@needs_cortex_m
def test_dsp_build_ships_packed_weights_only_and_the_planned_arena(tmp_path):
    plan = tinyarena.plan(real_model("kws_ref_model"))
    compiled = compile_model(plan, tmp_path, target="cortex-m4")

    def symbols(cflags):  # {name: size} of the linked image
        subprocess.run(["make", "-s", "clean"], cwd=compiled.out_dir, check=True)
        subprocess.run(["make", "-s", f"EXTRA_CFLAGS={cflags}"], cwd=compiled.out_dir, check=True)
        nm = subprocess.run(["arm-none-eabi-nm", "-S", "model_cortex-m4.elf"], cwd=compiled.out_dir, check=True,
                            capture_output=True, text=True).stdout
        fields = [line.split() for line in nm.splitlines()]
        return {f[-1]: int(f[1], 16) if len(f) == 4 else 0 for f in fields}

    dsp, plain = symbols(""), symbols("-DTA_NO_SIMD")
    # the conv's weights stay int8 in the DSP build (TA_PACKED_S8: reordered, K padded to a multiple of 4)
    assert "op0_packed_s8_weights" in dsp and "op0_weights" not in dsp and "op0_packed_weights" not in dsp
    assert "op0_weights" in plain and "op0_packed_s8_weights" not in plain
    k = plan.graph.tensors[plan.graph.ops[0].inputs[1]].shape
    assert dsp["op0_packed_s8_weights"] == (k[0] + 1) // 2 * 2 * ((k[1] * k[2] * k[3] + 3) // 4 * 4)
    assert dsp["op0_packed_s8_weights"] <= 1.1 * plain["op0_weights"]
    assert "ta_conv_s8_packed16" not in dsp  # no int16 layer: the int16 conv path is not linked
    # the conv's per-channel records (2 requantization words + bias: 12 bytes, as the portable
    # build's bias, multiplier and shift) are const data of the DSP build only, and replace those there
    out_c = plan.graph.tensors[plan.graph.ops[0].outputs[0]].shape[3]
    assert dsp["op0_rq_records"] == 3 * 4 * out_c and "op0_rq_records" not in plain
    assert all(f"op0_{name}" in plain and f"op0_{name}" not in dsp for name in ("bias", "out_mult", "out_shift"))
    # fully connected reads the model's int8 weights in both builds (no packed copy)
    fc = next(op.index for op in plan.graph.ops if op.type == "FULLY_CONNECTED")
    assert dsp[f"op{fc}_weights"] == plain[f"op{fc}_weights"] and f"op{fc}_packed_weights" not in dsp
    # one static arena of exactly the planned peak (activations and kernel scratch), in both builds
    assert dsp["ta_arena"] == plain["ta_arena"] == plan.peak_bytes
