"""The transforms stage: PAD folding and zero-copy concatenation/splitting give new graphs
(the input stays as it was), plan() keeps what helps and reports it, and the generated code
stays bit-exact with TFLite's reference kernels."""

import functools
import json

import numpy as np
import pytest
import tinyarena
from real_models import REAL_MODEL_NAMES, real_model
from test_schedule import check_schedule, detection_model, inception_model, topological_orders
from tinyarena import builder, schedule, transforms
from tinyarena.builder import ModelBuilder
from tinyarena.cli import main
from tinyarena.verify import verify

needs_cortex_m = pytest.mark.qemu  # the Arm toolchain and QEMU (tests/conftest.py)


def padded_windows_model():
    """PADs in front of window ops: conv (folds), depthwise with its own SAME padding (folds,
    adding up), max pool after RELU (pad value -128: folds), average pool (never: TFLite leaves
    padding out of the average), a PAD read by a conv and an average pool (stays), a PAD of the
    channels (stays)."""
    mb = ModelBuilder("padded_windows", seed=5)
    x = mb.input([1, 12, 12, 4])
    a = mb.conv2d(mb.pad(x, ((0, 0), (1, 2), (2, 1), (0, 0))), 8, kernel=3, stride=2, padding="VALID",
                  activation="RELU")
    b = mb.depthwise_conv2d(mb.pad(a, ((0, 0), (1, 1), (0, 1), (0, 0))), 3, padding="SAME", activation="RELU")
    c = mb.max_pool2d(mb.pad(b, ((0, 0), (1, 0), (1, 0), (0, 0))), 2)
    shared = mb.pad(c, ((0, 0), (1, 1), (1, 1), (0, 0)))
    d = mb.conv2d(shared, 4, kernel=3, padding="VALID")
    e = mb.average_pool2d(shared, 2)
    f = mb.average_pool2d(mb.pad(c, ((0, 0), (0, 1), (0, 1), (0, 0))), 2)
    g = mb.conv2d(mb.pad(c, ((0, 0), (0, 0), (0, 0), (0, 2))), 4, kernel=1)
    mb.output(d, e, f, g)
    return mb.build()


def concat_bottleneck_model():
    """Three branches joined by a channel concatenation where memory peaks; the builder
    requantizes branches whose quantization differs with QUANTIZE ops, as the converter does."""
    mb = ModelBuilder("concat_bottleneck", seed=6)
    x = mb.input([1, 16, 16, 16])
    b1 = mb.conv2d(x, 32, kernel=1, activation="RELU")
    b2 = mb.depthwise_conv2d(mb.conv2d(x, 32, kernel=1, activation="RELU"), 3, activation="RELU")
    b3 = mb.max_pool2d(x, 3, stride=1, padding="SAME")
    mb.output(mb.conv2d(mb.concatenation([b1, b2, b3], axis=3), 16, kernel=1))
    return mb.build()


def pooled_concat_model():
    """Max and average pools of one map (they keep its quantization, so no QUANTIZE comes
    between them and the channel concatenation): the pool kernels write strided."""
    mb = ModelBuilder("pooled_concat", seed=9)
    y = mb.conv2d(mb.input([1, 8, 8, 3]), 8, kernel=3, activation="RELU")
    pools = [mb.max_pool2d(y, 3, stride=1, padding="SAME"), mb.average_pool2d(y, 3, stride=1, padding="SAME")]
    mb.output(mb.conv2d(mb.concatenation(pools, axis=3), 4, kernel=1))
    return mb.build()


def ssd_heads_model():
    """Detection-style: two box heads reshaped to [1, boxes, 6] and concatenated along the
    boxes (contiguous slices, written through the RESHAPE views)."""
    mb = ModelBuilder("ssd_heads", seed=7)
    x = mb.input([1, 40, 40, 3])  # 32x32: the conv column scratch, not the activations, set the peak
    f1 = mb.conv2d(x, 16, kernel=3, stride=2, activation="RELU6")
    f2 = mb.conv2d(f1, 32, kernel=3, stride=2, activation="RELU6")
    h1 = mb.reshape(mb.conv2d(f1, 6, kernel=3), [1, 400, 6])
    h2 = mb.reshape(mb.conv2d(f2, 6, kernel=3), [1, 100, 6])
    mb.output(mb.concatenation([h1, h2], axis=1))
    return mb.build()


def split_slice_model():
    """SPLIT and STRIDED_SLICE of rows (contiguous: views), a slice of columns (copied), and
    a concatenation of rows."""
    mb = ModelBuilder("split_slice", seed=8)
    y = mb.conv2d(mb.input([1, 8, 8, 8]), 8, kernel=1, activation="RELU")
    top, bottom = mb.split(y, 2, axis=1)
    rows = mb.strided_slice(y, [0, 2, 0, 0], [1, 6, 8, 8])
    cols = mb.strided_slice(y, [0, 0, 0, 0], [1, 8, 4, 8])
    joined = mb.concatenation([mb.conv2d(top, 4, kernel=1), mb.conv2d(bottom, 4, kernel=1)], axis=1)
    mb.output(joined, mb.depthwise_conv2d(rows, 3), mb.relu(cols))
    return mb.build()


@functools.lru_cache(maxsize=1)
def mobilenet_v2_224_with_pads():
    return builder.mobilenet_v2(1.0, 224, explicit_pad=True)


def op_types(graph):
    return [op.type for op in graph.ops]


def assert_bit_exact(data, target="host", **options):
    result = verify(data, target=target, **options)
    assert result.bit_exact, result.summary()


# PAD folding --------------------------------------------------------------------------------


def test_fold_pads_mobilenet_v2_224_lowers_the_bound_by_35_percent():
    data = mobilenet_v2_224_with_pads()
    graph = tinyarena.load_model(data)
    folded, rewrites = transforms.fold_pads(graph)
    assert op_types(graph).count("PAD") == 4 == len(rewrites)
    assert "PAD" not in op_types(folded) and len(folded.ops) == len(graph.ops) - 4
    explicit = [op for op in folded.ops if op.options.padding == "EXPLICIT"]
    assert [op.type for op in explicit] == ["DEPTHWISE_CONV_2D"] * 4
    # Keras' correct_pad on even sizes: nothing before, one row/column after.
    assert {(o.pad_top, o.pad_bottom, o.pad_left, o.pad_right) for o in (op.options for op in explicit)} == {(0, 1, 0, 1)}
    before = tinyarena.plan(graph, transforms=())
    after = tinyarena.plan(data)
    saving = 1 - after.lower_bound_bytes / before.lower_bound_bytes
    print(f"MobileNetV2 1.0@224 with PADs: lower bound {before.lower_bound_bytes:,} -> {after.lower_bound_bytes:,} B "
          f"({saving:.1%}), peak {before.peak_bytes:,} -> {after.peak_bytes:,} B")
    assert saving >= 0.35
    fold = after.transforms[0]
    assert fold.name == "fold_pads" and fold.applied and len(fold.changes) == 4
    assert (fold.lower_bound_before, fold.lower_bound_after) == (before.lower_bound_bytes, after.lower_bound_bytes)
    assert after.validate() == []
    assert op_types(graph).count("PAD") == 4  # the input graph is unchanged


# The core proof of the figure above: 11 s on the host, 18 s under QEMU (the portable kernels'
# int8 weights: the DSP build's packed int16 weights, 7 MB, overflow mps2-an386's 4 MB of flash).
@pytest.mark.parametrize("target, cflags", [pytest.param("host", "", marks=pytest.mark.slow),
                                            pytest.param("cortex-m4", "-DTA_NO_SIMD", marks=needs_cortex_m)])
def test_folded_mobilenet_v2_224_is_bit_exact(target, cflags):
    assert_bit_exact(mobilenet_v2_224_with_pads(), target, cflags=cflags)


@needs_cortex_m
def test_folded_mobilenet_v2_is_bit_exact_with_the_dsp_kernels():
    data = builder.mobilenet_v2(0.35, 96, explicit_pad=True)
    plan = tinyarena.plan(data)
    assert plan.transforms[0].applied and "PAD" not in op_types(plan.graph)
    assert plan.lower_bound_bytes < tinyarena.plan(data, transforms=()).lower_bound_bytes
    assert_bit_exact(data, "cortex-m4")


def test_fold_pads_folds_exactly_what_keeps_the_result():
    graph = tinyarena.load_model(padded_windows_model())
    folded, rewrites = transforms.fold_pads(graph)
    readers = {graph.ops[graph.tensors[graph.ops[r.op].outputs[0]].consumers[0]].type for r in rewrites}
    assert len(rewrites) == 3 and readers == {"CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D"}
    assert op_types(folded).count("PAD") == op_types(graph).count("PAD") - 3 == 3
    depthwise = next(op for op in folded.ops if op.type == "DEPTHWISE_CONV_2D")
    # SAME on the padded 9x8 map pads (1, 1) rows and (1, 1) columns; the PAD adds (1, 1) and (0, 1).
    o = depthwise.options
    assert (o.padding, o.pad_top, o.pad_bottom, o.pad_left, o.pad_right) == ("EXPLICIT", 2, 2, 1, 2)
    assert_bit_exact(padded_windows_model())


# Zero-copy concatenation and splitting ---------------------------------------------------


def test_zero_copy_places_channel_slices_and_elides_the_concatenation():
    data = concat_bottleneck_model()
    graph = tinyarena.load_model(data)
    copied, rewrites = transforms.zero_copy(graph)
    concat = next(op for op in copied.ops if op.type == "CONCATENATION")
    assert concat.elided and len(rewrites) == 1 and not any(op.elided for op in graph.ops)
    out = concat.outputs[0]
    channels = [copied.tensors[t].shape[3] for t in concat.inputs]
    offsets = [sum(channels[:i]) for i in range(len(channels))]
    assert [copied.tensors[t].placement for t in concat.inputs] == [(out, k, sum(channels)) for k in offsets]
    assert all(graph.tensors[t].placement is None for t in concat.inputs)  # the input graph is unchanged
    plan = tinyarena.plan(copied, transforms=())
    lv = plan.liveness
    assert len({lv.tensor_buffer[t] for t in (*concat.inputs, out)}) == 1
    assert [lv.tensor_offset[t] for t in concat.inputs] == offsets and lv.tensor_offset[out] == 0
    assert plan.validate() == []


@pytest.mark.parametrize("name, build", [("concat_bottleneck", concat_bottleneck_model),
                                         ("three_branches", inception_model), ("ssd_heads", ssd_heads_model),
                                         ("two_heads", detection_model)])
def test_zero_copy_and_reordering_lower_the_peak_of_branchy_models(name, build):
    data = build()
    off = tinyarena.plan(data, transforms=())
    on = tinyarena.plan(data)
    reorder_only = tinyarena.plan(data, transforms="reorder")
    rows = {r.name: r for r in on.transforms}
    print(f"{name}: peak {off.peak_bytes:,} B unoptimised, {reorder_only.peak_bytes:,} B reordered only, "
          f"{on.peak_bytes:,} B with zero-copy and reordering (zero_copy applied: {rows['zero_copy'].applied})")
    assert on.peak_bytes < off.peak_bytes and on.peak_bytes <= reorder_only.peak_bytes
    assert on.validate() == []
    if name == "concat_bottleneck":  # the concatenation is where memory peaks
        assert rows["zero_copy"].applied and on.peak_bytes < reorder_only.peak_bytes
    assert_bit_exact(data)
    copied, rewrites = transforms.zero_copy(data)
    if rewrites:  # also where it does not lower the peak (the SSD heads' copies are off the peak)
        assert_bit_exact(copied, transforms=())


def test_pools_write_their_channel_slices():
    copied, rewrites = transforms.zero_copy(pooled_concat_model())
    writers = [op.type for op in copied.ops if copied.tensors[op.outputs[0]].placement]
    assert len(rewrites) == 1 and writers == ["MAX_POOL_2D", "AVERAGE_POOL_2D"]
    assert_bit_exact(copied, transforms=())


@needs_cortex_m
@pytest.mark.parametrize("build", [concat_bottleneck_model, inception_model])  # QUANTIZE per pixel, conv's DSP path
def test_zero_copy_concatenation_is_bit_exact_on_cortex_m4(build):
    assert tinyarena.plan(build()).transforms[1].applied
    assert_bit_exact(build(), "cortex-m4")


def test_contiguous_split_and_slices_become_views():
    data = split_slice_model()
    graph = tinyarena.load_model(data)
    copied, rewrites = transforms.zero_copy(graph)
    elided = [op.type for op in copied.ops if op.elided]
    assert elided == ["SPLIT", "STRIDED_SLICE", "CONCATENATION"] and len(rewrites) == 3
    rows = next(op for op in copied.ops if op.type == "STRIDED_SLICE")
    source = rows.inputs[0]
    assert copied.tensors[rows.outputs[0]].placement == (source, 2 * 8 * 8, 0)  # rows 2.. of an 8x8x8 map
    split = next(op for op in copied.ops if op.type == "SPLIT")
    assert [copied.tensors[t].placement for t in split.outputs] == [(source, 0, 0), (source, 256, 0)]
    plan = tinyarena.plan(copied, transforms=())
    shared = {t.index for t in copied.tensors if t.placement} | {t.placement[0] for t in copied.tensors if t.placement}
    inplace = [copied.ops[i] for i in plan.liveness.inplace_ops]
    assert inplace and not any(shared & {*op.inputs, *op.outputs} for op in inplace)  # slices may overlap
    assert_bit_exact(data, transforms="zero_copy")
    assert_bit_exact(data, transforms="zero_copy", inplace=False)


def lstm_then_slice(step, also_output=False):
    """LSTM(8) over 5 steps of 3 features, then STRIDED_SLICE of one step (batch 1)."""
    mb = ModelBuilder("lstm_slice", seed=4)
    x = mb.input([1, 5, 3], scale=0.05, zero_point=-3)
    sequence = mb.lstm(x, 8, cell_clip=1.5)
    mb.output(mb.strided_slice(sequence, [0, step, 0], [1, step + 1, 8], shrink_axis_mask=2))
    if also_output:
        mb.output(sequence)
    return mb.build()


def test_zero_copy_folds_the_last_step_slice_into_the_lstm():
    data = lstm_then_slice(4)
    copied, rewrites = transforms.zero_copy(tinyarena.load_model(data))
    assert [op.type for op in copied.ops] == ["UNIDIRECTIONAL_SEQUENCE_LSTM"] and len(rewrites) == 1
    assert tuple(copied.tensors[copied.ops[0].outputs[0]].shape) == (1, 8)
    assert copied.ops[0].outputs[0] == copied.outputs[0]
    assert tinyarena.plan(data).peak_bytes < tinyarena.plan(data, transforms="none").peak_bytes
    assert_bit_exact(data, transforms="zero_copy")
    # Another step, or a sequence the model also returns, keeps the slice (a view of the sequence).
    for other in (lstm_then_slice(2), lstm_then_slice(4, also_output=True)):
        copied, _ = transforms.zero_copy(tinyarena.load_model(other))
        assert [op.type for op in copied.ops] == ["UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE"]
        assert copied.ops[1].elided
        assert_bit_exact(other, transforms="zero_copy")


def lstm_with(position=None, cell_scale_log2=None):
    """An LSTM(4); with `position`, that input (peephole 9..11, projection 16, layer norm 20..23)
    set to an int16 constant of 4 values."""
    mb = ModelBuilder("lstm_refused", seed=1)
    mb.output(mb.lstm(mb.input([1, 3, 4], scale=0.05, zero_point=0), 4, cell_scale_log2=cell_scale_log2))
    if position is not None:
        mb._graph.operators[-1].inputs[position] = mb._constant("extra", np.ones(4, np.int16), "int16")
    return mb.build()


@pytest.mark.parametrize("position,what", [(10, "peephole (cell-to-gate) weights"),
                                           (16, "projection weights and bias"),
                                           (21, "layer normalization coefficients")])
def test_lstm_features_the_kernel_lacks_are_named(position, what):
    assert list(tinyarena.plan(lstm_with(position)).compile_issues) == [
        f"op 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): {what} are not supported"]
    reason = "op 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): the cell state's scale is 2^-8; the kernel takes 2^-15 .. 2^-9"
    assert list(tinyarena.plan(lstm_with(cell_scale_log2=-8)).compile_issues) == [reason]


# plan(), random DAGs, real models, CLI ---------------------------------------------------


@pytest.mark.slow
def test_random_dags_with_transforms_never_peak_higher_and_stay_exact():
    checked = exact = 0
    for seed in range(40):
        data = builder.random_dag(seed, max_ops=40)
        off = tinyarena.plan(data, transforms=())
        on = tinyarena.plan(data)
        assert on.peak_bytes <= off.peak_bytes and on.validate() == [], seed
        applied = {r.name for r in on.transforms if r.applied}
        checked += 1
        if applied & {"fold_pads", "zero_copy"} and exact < 5:
            assert_bit_exact(data)
            exact += 1
    assert checked == 40 and exact == 5


def test_reordering_zero_copy_graphs_is_exact_and_never_worse():
    """The schedule's memory model knows placements (a slice buffer is made by its first writer)."""
    compared = 0
    for max_ops in (12, 16, 40):
        for seed in range(40):
            graph, rewrites = transforms.zero_copy(builder.random_dag(seed, max_ops=max_ops))
            if not rewrites:
                continue
            result = check_schedule(graph)
            assert result.proven_optimal, (max_ops, seed)
            orders = topological_orders(graph, limit=2000) if max_ops < 40 else None
            if orders:
                assert result.peak_bytes == min(schedule.order_peak_bytes(graph, order) for order in orders)
                compared += 1
    assert compared >= 15


def test_rewrites_are_tried_one_at_a_time_when_all_together_raise_the_peak():
    data = builder.random_dag(65, max_ops=40)  # two zero-copy rewrites: eliding both raises the peak, one lowers it
    greedy = "greedy_size_first_fit"  # the peaks this case was built on
    on = tinyarena.plan(data, allocator=greedy)
    everything, rewrites = transforms.zero_copy(data)
    kept = on.transforms[1]
    assert not on.transforms[0].changes  # no PAD: `everything` is the graph zero_copy saw
    assert kept.name == "zero_copy" and kept.applied and 0 < len(kept.changes) < len(rewrites) == 2
    all_at_once = tinyarena.plan(everything, transforms="reorder", allocator=greedy)
    assert on.peak_bytes < all_at_once.peak_bytes
    assert on.peak_bytes <= tinyarena.plan(data, transforms="reorder", allocator=greedy).peak_bytes
    assert sum(op.elided for op in on.graph.ops) == len(kept.changes)
    assert_bit_exact(data)


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_real_models_peak_no_higher_with_transforms(name):
    on, off = tinyarena.plan(real_model(name)), tinyarena.plan(real_model(name), transforms="none")
    assert on.peak_bytes <= off.peak_bytes and on.lower_bound_bytes <= off.lower_bound_bytes
    assert [r.name for r in on.transforms] == list(transforms.TRANSFORMS) and off.transforms == ()


def test_transform_options_and_errors():
    data = split_slice_model()
    assert transforms.parse_transforms("reorder, zero_copy") == ("zero_copy", "reorder")
    assert tinyarena.plan(data, transforms=["fold_pads"]).transforms[0].name == "fold_pads"
    with pytest.raises(ValueError, match="unknown transform"):
        tinyarena.plan(data, transforms="fold")
    with pytest.raises(ValueError, match="unknown transform"):
        transforms.apply_transform(data, "reorder")
    with pytest.raises(ValueError, match="order"):
        tinyarena.plan(data, order=list(range(len(tinyarena.load_model(data).ops))), transforms="zero_copy")
    padded = builder.mobilenet_v2(0.35, 96, explicit_pad=True)
    with pytest.raises(ValueError, match="transforms"):
        tinyarena.plan(padded, inplace=False).write_offline_plan("unused.tflite")


@pytest.mark.slow
def test_cli_transforms_flags(tmp_path, capsys):
    model = tmp_path / "padded.tflite"
    model.write_bytes(builder.mobilenet_v2(0.35, 96, explicit_pad=True))
    assert main(["plan", str(model), "--json", str(tmp_path / "on.json")]) == 0
    text = capsys.readouterr().out
    assert "fold_pads" in text and "applied" in text
    rows = json.loads((tmp_path / "on.json").read_text())["transforms"]
    assert [r["name"] for r in rows] == ["fold_pads", "zero_copy", "reorder"] and rows[0]["applied"]
    assert rows[0]["lower_bound_after"] < rows[0]["lower_bound_before"]
    concat = tmp_path / "concat.tflite"
    concat.write_bytes(concat_bottleneck_model())
    assert main(["plan", str(concat), "--json", str(tmp_path / "concat.json")]) == 0
    buffers = json.loads((tmp_path / "concat.json").read_text())["buffers"]
    assert any(b["tensor_offsets"] == [0, 32, 64, 0] for b in buffers)  # three channel slices, then the concatenation
    capsys.readouterr()
    assert main(["plan", str(model), "--no-transforms", "--json", str(tmp_path / "off.json")]) == 0
    assert json.loads((tmp_path / "off.json").read_text())["transforms"] == []
    assert "fold_pads" not in capsys.readouterr().out
    assert main(["plan", str(model), "--transforms", "fold_pads,bogus"]) == 2
    assert "unknown transform 'bogus'" in capsys.readouterr().err
    assert main(["verify", str(model), "--transforms", "fold_pads"]) == 0
    assert "bit-exact on host" in capsys.readouterr().out
    assert main(["compile", str(model), "-o", str(tmp_path / "c"), "--no-transforms"]) == 0
    assert "PAD" in (tmp_path / "c" / "model.c").read_text() and "none applied" in capsys.readouterr().out
    assert main(["compile", str(model), "-o", str(tmp_path / "folded")]) == 0
    assert "PAD" not in (tmp_path / "folded" / "model.c").read_text()
    unfolded = tinyarena.plan(model.read_bytes(), transforms="none").peak_bytes
    folded = tinyarena.plan(model.read_bytes(), transforms="fold_pads").peak_bytes
    assert folded < unfolded
    assert f"transforms: fold_pads ({unfolded:,} -> {folded:,} B)" in capsys.readouterr().out
