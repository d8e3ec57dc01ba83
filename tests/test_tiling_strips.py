"""Column strips: a row-streamed segment replayed once per column strip of its output, so every
ring holds only the widest strip's columns (tinyarena/tiling/row_stream.h)."""

import pytest

import tinyarena
from test_converted_models import path as converted_path
from test_tiling import check_exact, mean_tail_model, mix, needs_cortex_m, replay, run_cli, spatial_ops  # noqa: F401
from tinyarena import _core, tiling
from tinyarena.builder import ModelBuilder


def strip_parts(stream, tensor):
    """Per strip, the columns [begin, end) of `tensor`."""
    i = list(stream.strip_tensors).index(tensor)
    count = len(stream.strip_tensors)
    cols = list(stream.strip_columns)
    return [tuple(cols[(s * count + i) * 2:(s * count + i) * 2 + 2]) for s in range(stream.column_strips)]


def head_ops(graph):
    """The residual stem through the average pool: strided, dilated and depth-multiplied windows."""
    return spatial_ops(graph)[:8]


@pytest.mark.parametrize("strips", [2, 3])
def test_strips_narrow_the_rings_and_recompute_only_shared_columns(mix, strips):
    ops = head_ops(mix)
    whole = _core.stream_rows(mix, ops, 1, True)
    split = _core.stream_rows(mix, ops, 1, True, strips)
    assert split.column_strips == strips and whole.column_strips == 1
    assert split.steps == whole.steps  # the same row schedule, replayed per strip
    replay(mix, split)
    for a, b in zip(whole.rings, split.rings):
        assert a.tensor == b.tensor and a.rows == b.rows and b.row_bytes <= a.row_bytes
    assert split.ring_bytes < whole.ring_bytes
    out = mix.ops[ops[-1]].outputs[0]
    parts = strip_parts(split, out)  # the output is partitioned: each column written once
    assert parts[0][0] == 0 and parts[-1][1] == mix.tensors[out].shape[2]
    assert all(parts[s][1] == parts[s + 1][0] for s in range(strips - 1))
    assert whole.macs < split.macs < strips * whole.macs  # halos only
    for t in split.strip_tensors:  # every tensor's strips cover it
        columns = strip_parts(split, t)
        assert min(c[0] for c in columns) == 0 and max(c[1] for c in columns) == mix.tensors[t].shape[2]


def test_strips_are_refused_where_columns_cannot_split(mix):
    tail = mean_tail_model(keep_dims=False)
    ops = spatial_ops(tail)  # ends with a MEAN summing whole rows
    _core.stream_rows(tail, ops, 1, False)
    with pytest.raises(ValueError, match="cannot run on patches"):
        _core.stream_rows(tail, ops, 1, False, 2)
    with pytest.raises(ValueError, match="column strips"):
        _core.stream_rows(mix, head_ops(mix), 1, False, 0)
    with pytest.raises(ValueError, match="grid"):
        _core.stream_rows(mix, head_ops(mix), 1, False, 100)  # more strips than output columns


def test_tiled_plan_with_strips_is_valid_and_smaller(mix):
    ops = head_ops(mix)
    rows = tiling.tile(mix, [tiling.Segment(ops)], stream_input=True)
    strips = tiling.tile(mix, [tiling.Segment(ops, column_strips=3)], stream_input=True)
    assert strips.validate() == []
    assert strips.peak_bytes < rows.peak_bytes and strips.mac_overhead > rows.mac_overhead == 1.0
    assert sum(r.macs for r in strips.ops) == strips.macs
    assert "3 column strips" in repr(strips) and strips.segments[0].column_strips == 3


@pytest.mark.parametrize("strips, stream_input, stripe_rows", [(2, True, 1), (3, False, 2)])
def test_strip_segments_are_bit_exact_on_host(mix, strips, stream_input, stripe_rows, tmp_path):
    ops = spatial_ops(mix)
    mean = next(op.index for op in mix.ops if op.type == "MEAN")
    segments = [tiling.Segment(head_ops(mix), stripe_rows=stripe_rows, column_strips=strips),
                tiling.Segment([o for o in ops if o > mean], column_strips=2)]
    check_exact(mix, tiling.tile(mix, segments, stream_input=stream_input), "host", tmp_path)


@needs_cortex_m
def test_strip_segments_are_bit_exact_on_cortex_m4(mix, tmp_path):
    plan = tiling.tile(mix, [tiling.Segment(head_ops(mix), column_strips=3)], stream_input=True)
    check_exact(mix, plan, "cortex-m4", tmp_path)


def wide_depthwise_model():
    """A 3x3 depthwise over a map 48 columns wide: its kernel scratch grows with the call's width."""
    mb = ModelBuilder("wide_depthwise", seed=11)
    x = mb.input([1, 6, 48, 8])
    dw = mb.depthwise_conv2d(mb.conv2d(x, 16, kernel=1, activation="RELU6"), kernel=3, activation="RELU6")
    mb.output(mb.conv2d(dw, 8, kernel=1))
    return tinyarena.load_model(mb.build())


def scratch_buffer(plan):
    return next(b for b in plan.buffers if b.kind == "scratch")


@pytest.mark.parametrize("strips", [2, 4])
def test_strip_scratch_is_sized_for_the_strips_width(strips, tmp_path):
    # A strip's call runs as an image of the strip's width: its depthwise scratch is the strip's.
    graph = wide_depthwise_model()
    ops = spatial_ops(graph)
    whole = _core.stream_rows(graph, ops, 1, False)
    split = _core.stream_rows(graph, ops, 1, False, strips)
    assert 0 < split.scratch_bytes < whole.scratch_bytes
    plan = tiling.tile(graph, [tiling.Segment(ops, column_strips=strips)], stream_input=False, transforms="none")
    assert scratch_buffer(plan).size == -(-split.scratch_bytes // 16) * 16  # 16-byte alignment
    check_exact(graph, plan, "host", tmp_path)


@needs_cortex_m
def test_strip_scratch_is_enough_on_cortex_m4(tmp_path):  # the SIMD depthwise uses all of it
    graph = wide_depthwise_model()
    plan = tiling.tile(graph, [tiling.Segment(spatial_ops(graph), column_strips=4)], stream_input=False,
                       transforms="none")
    check_exact(graph, plan, "cortex-m4", tmp_path)


def test_search_takes_strips_when_halos_are_affordable(tmp_path):
    model = converted_path("mcunet_se_80_int8io.tflite")
    rows = tiling.search(model, tiling="rows").best
    auto = tiling.search(model, tiling="auto", max_mac_overhead=1.10).best
    assert auto.peak_bytes < rows.peak_bytes and auto.mac_overhead <= 1.10
    assert any(s.column_strips > 1 for s in auto.segments)
    assert auto.validate() == []
    check_exact(auto.graph, auto, "host", tmp_path)


@pytest.mark.parametrize("name", ["mobilenet_v2_035_224_floatio.tflite", "mobilenet_v2_torch_64.tflite"])
def test_strips_load_through_the_input_boundary_ops(name, tmp_path):
    # A float input's QUANTIZE, an NCHW input's TRANSPOSE: each strip loads its columns through them.
    best = tiling.search(converted_path(name), tiling="auto", max_mac_overhead=1.10).best
    first = best.segments[0]
    assert first.ops[0] == 0 and first.column_strips > 1
    assert any(ring.source >= 0 for ring in best.tiled.streams[0].rings)
    check_exact(best.graph, best, "host", tmp_path)


def test_cli_takes_column_strips():
    model = converted_path("mcunet_se_80_int8io.tflite")
    run = run_cli("plan", model, "--tiling", "auto", "--max-mac-overhead", "1.1", "--column-strips", "3")
    assert run.returncode == 0, run.stderr
    best = tiling.search(model, tiling="auto", max_mac_overhead=1.1, column_strips=(3,)).best
    assert f"tiling auto: peak {best.peak_bytes:,} B" in run.stdout
    assert {s.column_strips for s in best.segments} <= {1, 3} and "3 column strips" in run.stdout
    for args, message in ((["--tiling", "auto", "--column-strips", "0"], "positive integers"),
                          (["--column-strips", "2"], "--column-strips applies to tiled schedules only")):
        bad = run_cli("plan", model, *args)
        assert bad.returncode == 2 and message in bad.stderr and "Traceback" not in bad.stderr
