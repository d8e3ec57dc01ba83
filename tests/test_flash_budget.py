"""The flash budget (op_params::choose_weight_layouts, plan/compile ``flash=`` and ``--flash``):
per-layer weight layouts of the SIMD builds chosen within the budget, reported per layer and in
total as the generated C holds them, bit-exact in mixed layouts."""

import subprocess
import sys

import pytest
import tinyarena
from real_models import real_model
from tinyarena.codegen import compile as compile_model
from tinyarena.verify import verify

PERSON = real_model("person_detect")
KWS = real_model("kws_ref_model")
LAYOUT_TYPES = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


@pytest.fixture(scope="module")
def person_plan():
    return tinyarena.plan(PERSON)


def _layer_indices(plan, op_type):
    return [op.index for op in plan.graph.ops if op.type == op_type and not op.elided]


def _flash_sum(plan):
    parts = ("weights", "biases", "requant", "tables", "code")
    return {part: sum(getattr(r.flash, part) for r in plan.ops) for part in parts}


def test_no_budget_keeps_the_default_layouts(person_plan):
    assert person_plan.flash_limit is None and person_plan.flash_fits
    assert person_plan.weight_layouts == {}
    assert {person_plan.weight_layout(i) for i in _layer_indices(person_plan, "CONV_2D")} == {"packed_int8"}
    assert {person_plan.weight_layout(i) for i in _layer_indices(person_plan, "DEPTHWISE_CONV_2D")} == {"packed_int8"}


def test_budgets_are_respected_and_buy_fewer_predicted_instructions(person_plan):
    compact = person_plan.with_flash(1).compact_flash_bytes
    everything_fast = person_plan.with_layouts(
        {i: "packed_int16" for i in _layer_indices(person_plan, "CONV_2D")}).flash_bytes
    # the default layouts are the most compact: conv's records (12 B per channel) are as large as the
    # plain layout's bias, multiplier and shift, and plain convs would link the portable conv path
    assert compact == person_plan.flash_bytes < everything_fast
    predicted, layouts_seen = [], set()
    for budget in (compact, compact + 10_000, compact + 20_000, everything_fast):
        plan = person_plan.with_flash(budget)
        assert plan.flash_fits and plan.flash_bytes <= budget, (budget, plan.flash_bytes)
        assert plan.core.weight_layouts.flash_bytes == plan.flash_bytes  # the policy's total is the report's
        predicted.append(plan.core.weight_layouts.predicted_instructions)
        layouts_seen.add(tuple(sorted(plan.weight_layouts.items())))
    assert predicted == sorted(predicted, reverse=True) and predicted[0] > predicted[-1]
    assert len(layouts_seen) == 4
    # the smallest budget: every layer at its smallest layout (the default); the largest: every layer at its fastest
    assert person_plan.with_flash(compact).weight_layouts == {}
    # the largest: no more predicted instructions than every conv at its fastest layout (the greedy may
    # spend the bytes elsewhere, e.g. on fully connected int16, where the cost model sees more saved)
    fastest = person_plan.with_flash(everything_fast)
    every_conv_int16 = person_plan.with_layouts({i: "packed_int16" for i in _layer_indices(person_plan, "CONV_2D")})
    assert sum(r.predicted_instructions for r in fastest.ops) <= sum(r.predicted_instructions for r in every_conv_int16.ops)
    assert "packed_int16" in {fastest.weight_layout(i) for i in _layer_indices(fastest, "CONV_2D")}
    # depthwise: int16 weights buy no predicted instructions over int8 ones (widened per channel)
    assert "packed_int16" not in {fastest.weight_layout(i) for i in _layer_indices(fastest, "DEPTHWISE_CONV_2D")}


@pytest.mark.parametrize("model, target", [("person_detect", "cortex-m4"), ("kws_ref_model", "cortex-m4"),
                                           ("vww_96_int8", "cortex-m4"), ("person_detect", "cortex-m55")])
def test_the_default_flash_buys_the_default_build(model, target):
    """Shared kernel code is priced per family: at the default's own flash the budget predicts no
    more instructions than the default (person_detect: before, 2 convs stayed plain, since the
    portable conv code falls away only when the last plain conv leaves it; on the M55 the budget
    could not pick the conv's default TA_PACKED_MVE layout)."""
    default = tinyarena.plan(real_model(model), target=target)
    for budget in (default.flash_bytes, default.flash_bytes + 1, default.flash_bytes + 10_000):
        plan = default.with_flash(budget)
        assert plan.flash_fits and plan.flash_bytes <= budget
        assert plan.predicted_instructions <= default.predicted_instructions, (budget, plan.weight_layouts)
    assert "plain" not in default.with_flash(default.flash_bytes).weight_layouts.values()


@pytest.mark.parametrize("model", ["person_detect", "kws_ref_model"])
def test_more_budget_never_predicts_more_instructions(model):
    default = tinyarena.plan(real_model(model))
    compact = default.with_flash(1).compact_flash_bytes
    fastest = default.with_layouts({i: "packed_int16" for t in ("CONV_2D", "FULLY_CONNECTED")
                                    for i in _layer_indices(default, t)}).flash_bytes
    budgets = sorted({compact + (default.flash_bytes - compact) * i // 24 for i in range(25)}
                     | {default.flash_bytes + (fastest - default.flash_bytes) * i // 12 for i in range(13)})
    predicted = []
    for budget in budgets:
        plan = default.with_flash(budget)
        assert plan.flash_fits and plan.flash_bytes <= budget, (budget, plan.flash_bytes)
        predicted.append(plan.core.weight_layouts.predicted_instructions)
    assert all(a >= b for a, b in zip(predicted, predicted[1:])), list(zip(budgets, predicted))
    assert predicted[0] > predicted[-1]


def test_per_layer_flash_sums_to_the_total(person_plan):
    plan = person_plan.with_flash(_mixed_budget())
    assert "packed_int16" in plan.weight_layouts.values()  # a mixed build
    sums = _flash_sum(plan)
    f = plan.flash
    assert sums == {"weights": f.weights, "biases": f.biases, "requant": f.requant, "tables": f.tables,
                    "code": f.code}
    assert sum(r.flash_bytes for r in plan.ops) == plan.flash_bytes
    as_json = plan.to_dict()
    assert sum(op["flash_bytes"] for op in as_json["ops"]) == as_json["flash_bytes"] == plan.flash_bytes
    assert {op["index"]: op["weight_layout"] for op in as_json["ops"] if op["type"] in LAYOUT_TYPES} == {
        r.index: plan.weight_layout(r.index) for r in plan.ops if r.type in LAYOUT_TYPES}
    assert as_json["flash_limit"] == plan.flash_limit and as_json["flash_fits"]


def test_reported_constants_are_the_generated_arrays(person_plan, tmp_path):
    """The plan's constant bytes per build are what the generated model.c compiles in."""
    mixed = person_plan.with_flash(_mixed_budget())
    assert "packed_int16" in mixed.weight_layouts.values()
    compiled = compile_model(mixed, tmp_path / "c", target="cortex-m4", name="model")
    assert compiled.program.const_array_bytes("cortex-m4") == mixed.flash.constants
    assert compiled.program.const_array_bytes("host") == mixed.with_flash(None, "host").flash.constants


def _mixed_budget():
    """10,000 B above person_detect's most compact build (its default): some conv layers take int16
    weights, the others keep int8 (person_detect's first int16 conv, with the int16 path's code,
    needs about 9.9 KB)."""
    return tinyarena.plan(PERSON).with_flash(1).compact_flash_bytes + 10_000


def test_same_budget_same_c(tmp_path):
    budget = _mixed_budget()
    texts = []
    for run in range(2):
        plan = tinyarena.plan(PERSON)
        compile_model(plan, tmp_path / str(run), target="cortex-m4", name="model", flash=budget)
        texts.append((tmp_path / str(run) / "model.c").read_text())
    assert texts[0] == texts[1]
    int16 = [op for op, layout in plan.with_flash(budget).weight_layouts.items() if layout == "packed_int16"]
    assert int16 and all(f"op{op}_packed_weights[" in texts[0] and f"op{op}_packed_s8" not in texts[0] for op in int16)


def test_compile_flash_chooses_layouts_the_c_follows(person_plan, tmp_path):
    budget = _mixed_budget()
    compiled = compile_model(person_plan, tmp_path, target="cortex-m4", name="model", flash=budget)
    plan = person_plan.with_flash(budget)
    text = (tmp_path / "model.c").read_text()
    for op, layout in plan.weight_layouts.items():
        if layout == "plain":
            assert f"op{op}_weights" in text and f"op{op}_packed" not in text and f"op{op}_rq_records" not in text
        if layout == "packed_int16" and plan.graph.ops[op].type == "CONV_2D":
            assert f"ta_conv_s8_packed16(&op{op}_params" in text
    assert compiled.program.const_array_bytes("cortex-m4") == plan.flash.constants <= 265 * 1024


def test_too_small_a_budget_gives_needed_and_allowed(person_plan, tmp_path):
    small = person_plan.with_flash("100K")
    assert not small.flash_fits and small.compact_flash_bytes > 100 * 1024
    with pytest.raises(ValueError, match=f"{small.compact_flash_bytes:,} bytes.*{100 * 1024:,} bytes"):
        compile_model(person_plan, tmp_path, flash="100K")
    for command in (["plan", PERSON], ["compile", PERSON, "-o", tmp_path / "out"]):
        result = subprocess.run([sys.executable, "-m", "tinyarena.cli", *map(str, command), "--flash", "100K"],
                                capture_output=True, text=True, check=False)
        assert result.returncode == 2, result.stderr
        assert f"{small.compact_flash_bytes:,} bytes" in result.stderr and "102,400 bytes" in result.stderr
    assert not (tmp_path / "out" / "model.c").exists()


def test_compile_refuses_a_plan_over_its_own_limits(person_plan, tmp_path):
    """A plan made under a flash or SRAM limit it does not meet is not compiled either (needed vs
    allowed bytes), whether or not compile is given the limit again."""
    over_flash = person_plan.with_flash("100K")
    with pytest.raises(ValueError, match=f"{over_flash.compact_flash_bytes:,} bytes.*{100 * 1024:,} bytes"):
        compile_model(over_flash, tmp_path / "flash")
    over_sram = tinyarena.plan(real_model("person_detect"), sram="20K")
    assert not over_sram.fits
    with pytest.raises(ValueError, match=f"{over_sram.peak_bytes:,} bytes of SRAM.*{20 * 1024:,} bytes"):
        compile_model(over_sram, tmp_path / "sram")
    assert not (tmp_path / "flash" / "model.c").exists() and not (tmp_path / "sram" / "model.c").exists()


def test_cli_plan_flash_reports_layouts_and_limit():
    budget = _mixed_budget()
    result = subprocess.run([sys.executable, "-m", "tinyarena.cli", "plan", str(PERSON), "--flash", str(budget)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert " CONV_2D [packed_int16]" in result.stdout and " CONV_2D [packed_int8]" in result.stdout
    assert f"flash limit   {budget:,} B: fits" in result.stdout


def test_layouts_without_a_kernel_path_are_refused(person_plan):
    pool = _layer_indices(person_plan, "AVERAGE_POOL_2D")[0]
    with pytest.raises(ValueError, match=f"op {pool} \\(AVERAGE_POOL_2D\\) cannot take the packed_int8"):
        person_plan.with_layouts({pool: "packed_int8"})
    with pytest.raises(ValueError, match="unknown weight layout"):
        person_plan.with_layouts({_layer_indices(person_plan, "DEPTHWISE_CONV_2D")[0]: "int4"})


def _every_layout(plan):
    """kws's layers in every layout their kernels have, alternating along the model."""
    convs = _layer_indices(plan, "CONV_2D")
    layouts = {op: ("plain", "packed_int8", "packed_int16")[i % 3] for i, op in enumerate(convs)}
    layouts.update({op: ("plain", "packed_int16")[i % 2]
                    for i, op in enumerate(_layer_indices(plan, "DEPTHWISE_CONV_2D"))})
    layouts.update({op: ("packed_int16", "plain")[i % 2]
                    for i, op in enumerate(_layer_indices(plan, "FULLY_CONNECTED"))})
    return plan.with_layouts(layouts)


def test_mixed_layouts_are_bit_exact_on_the_host_simd_emulation():
    plan = _every_layout(tinyarena.plan(KWS))
    assert set(plan.weight_layouts.values()) == {"plain", "packed_int16"}  # and the default packed_int8
    result = verify(KWS, target="host", cflags="-DTA_SIMD_EMULATE", plan=plan)
    assert result.bit_exact, result.summary()


@pytest.mark.qemu
@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])  # DSP loops; Helium (packed_int8 conv: TA_PACKED_MVE)
def test_mixed_layouts_are_bit_exact_on_cortex_m(target):
    plan = _every_layout(tinyarena.plan(KWS))
    result = verify(KWS, target=target, plan=plan)
    assert result.bit_exact, result.summary()


@pytest.mark.qemu
def test_budget_chosen_build_is_bit_exact_on_cortex_m4():
    plan = tinyarena.plan(PERSON, flash="280K")
    assert len({plan.weight_layout(r.index) for r in plan.ops if r.type in LAYOUT_TYPES}) >= 2
    result = verify(PERSON, target="cortex-m4", plan=plan)
    assert result.bit_exact, result.summary()
