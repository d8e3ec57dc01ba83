"""Tiling: receptive-field algebra, row-streamed segments (rings), patch runs, tiled plans through
the real liveness and allocator, the search, and bit-exact code for row-streamed schedules."""

import random
import subprocess
import sys

import pytest

import tinyarena
from real_models import real_model
from tinyarena import _core, builder, tiling
from tinyarena.builder import ModelBuilder
from tinyarena.verify import verify

needs_cortex_m = pytest.mark.qemu  # the Arm toolchain and QEMU (tests/conftest.py)


def mixed_model():
    """Every op kind a segment can stream: strided, dilated and depth-multiplied windows, pools,
    a residual ADD, a MUL broadcast along rows, one-input elementwise ops; 20 x 17 input."""
    mb = ModelBuilder("tiling_mix", seed=3)
    x = mb.input([1, 20, 17, 4])
    a = mb.conv2d(x, 8, kernel=3, stride=2, activation="RELU6")                # 10 x 9
    b = mb.depthwise_conv2d(a, kernel=3, dilation=2, activation="RELU")        # dilated
    c = mb.conv2d(b, 8, kernel=1)
    d = mb.add(a, c)                                                           # residual
    e = mb.depthwise_conv2d(d, kernel=(3, 5), stride=(2, 1), depth_multiplier=2)  # 5 x 9 x 16
    f = mb.max_pool2d(e, pool=3, stride=1, padding="SAME")
    g = mb.hard_swish(f)
    h = mb.average_pool2d(g, pool=2, stride=1, padding="SAME")
    row_mean = mb.mean(h, axes=(1,), keep_dims=True)                           # 1 x 9 x 16
    i = mb.mul(h, row_mean)                                                    # broadcast over rows
    j = mb.logistic(i)
    mb.output(mb.conv2d(j, 6, kernel=3, padding="VALID"))
    return tinyarena.load_model(mb.build())


@pytest.fixture(scope="module")
def mix():
    return mixed_model()


def spatial_ops(graph):
    return [op.index for op in graph.ops if _core.is_tileable(graph, op.index)]


# ---------------------------------------------------------------- receptive-field algebra
def test_window_input_covers_every_tap_and_nothing_beyond_the_window():
    rng = random.Random(5)
    for _ in range(3000):
        size, kernel = rng.randint(1, 30), rng.randint(1, 7)
        stride, dilation, pad = rng.randint(1, 3), rng.randint(1, 3), rng.randint(0, 4)
        out = max(1, (size + 2 * pad - (kernel - 1) * dilation - 1) // stride + 1)
        begin = rng.randrange(out)
        end = rng.randint(begin + 1, out)
        a, b = _core.window_input(size, kernel, stride, dilation, pad, begin, end)
        taps = [o * stride - pad + k * dilation for o in range(begin, end) for k in range(kernel)]
        valid = [t for t in taps if 0 <= t < size]
        if a < b:  # the window's hull, clipped: what a kernel widening whole windows touches
            assert (a, b) == (max(0, min(taps)), min(size, max(taps) + 1))
        if valid:
            assert a <= min(valid) and max(valid) < b  # every row read is inside
            if dilation == 1 and stride <= kernel:
                assert (a, b) == (min(valid), max(valid) + 1)  # no row in between is spare


def test_input_range_of_real_ops_at_the_borders(mix):
    first = mix.ops[0]  # conv 3x3 stride 2 SAME on 20 rows: pad_top 0 (the odd pad goes to the bottom)
    assert first.type == "CONV_2D"
    assert _core.input_range(mix, 0, 0, "rows", 0, 1) == (0, 3)
    assert _core.input_range(mix, 0, 0, "rows", 9, 10) == (18, 20)
    assert _core.input_range(mix, 0, 0, "cols", 0, 1) == (0, 2)  # 17 cols: pad_left 1 -> taps -1..1
    assert _core.input_range(mix, 0, 0, "cols", 8, 9) == (15, 17)
    dilated = 1  # depthwise 3x3 dilation 2 SAME: pad 2
    assert _core.input_range(mix, dilated, 0, "rows", 0, 1) == (0, 3)
    assert _core.input_range(mix, dilated, 0, "rows", 5, 6) == (3, 8)
    mul = next(op for op in mix.ops if op.type == "MUL")
    assert _core.input_range(mix, mul.index, 0, "rows", 2, 4) == (2, 4)
    assert _core.input_range(mix, mul.index, 1, "rows", 2, 4) == (0, 1)  # broadcast row
    last = mix.ops[-1]  # conv 3x3 VALID
    assert _core.input_range(mix, last.index, 0, "rows", 0, 3) == (0, 5)


def test_input_range_of_pad_and_resize():
    mb = ModelBuilder("pad_resize", seed=1)
    x = mb.input([1, 6, 5, 2])
    p = mb.pad(x, [[0, 0], [2, 1], [1, 0], [0, 0]])  # 9 x 6
    mb.output(mb.resize_nearest_neighbor(p, (18, 12)))
    g = tinyarena.load_model(mb.build())
    assert _core.input_range(g, 0, 0, "rows", 0, 2) == (0, 0)  # all padding: nothing read
    assert _core.input_range(g, 0, 0, "rows", 0, 4) == (0, 2)
    assert _core.input_range(g, 0, 0, "rows", 7, 8) == (5, 6)
    assert _core.input_range(g, 0, 0, "rows", 8, 9) == (0, 0)  # the bottom padding
    assert _core.input_range(g, 1, 0, "rows", 4, 7) == (2, 4)  # nearest, scale 1/2
    assert _core.is_tileable(g, 0)  # PAD streams its rows (row streams only, never patches)


# ---------------------------------------------------------------- row streaming
def replay(graph, stream):
    """Replays a stream's steps, checking each call finds its input rows in the rings."""
    lo = {r.tensor: 0 for r in stream.rings}
    hi = dict(lo)
    cap = {r.tensor: r.rows for r in stream.rings}
    by_op = {op: graph.ops[op] for op in stream.ops}
    produced = {}
    for kind, target, begin, end in stream.steps:
        if kind == "shift":
            t = stream.rings[target].tensor
            assert lo[t] <= begin <= hi[t]
            lo[t] = begin
            continue
        if kind == "load":
            t = stream.rings[target].tensor
        else:
            op = by_op[target]
            for position, u in enumerate(op.inputs):
                if u in lo:
                    a, b = _core.input_range(graph, target, position, "rows", begin, end)
                    assert lo[u] <= a and b <= hi[u], f"op {target} rows {begin}..{end} needs {a}..{b} of {u}"
            t = op.outputs[0]
        assert produced.get(t, 0) == begin  # every row once, in order
        produced[t] = end
        if t in lo:
            hi[t] = end
            assert hi[t] - lo[t] <= cap[t]
    return produced


@pytest.mark.parametrize("stripe_rows, stream_input", [(1, True), (2, False), (3, True)])
def test_stream_rows_replay_holds_every_window(mix, stripe_rows, stream_input):
    ops = spatial_ops(mix)
    ops = ops[: ops.index(next(op.index for op in mix.ops if op.type == "MUL"))]  # the run before MEAN's reader
    stream = _core.stream_rows(mix, ops, stripe_rows, stream_input)
    produced = replay(mix, stream)
    for t in stream.full_outputs:
        assert produced[t] == mix.tensors[t].shape[1]
    assert (mix.inputs[0] in [r.tensor for r in stream.rings]) == stream_input
    untiled = sum(r.macs for r in tinyarena.plan(mix).ops if r.index in ops)
    assert stream.macs == untiled  # row streaming recomputes nothing
    for ring in stream.rings:
        assert ring.rows < mix.tensors[ring.tensor].shape[1]


def test_stream_rows_rejects_what_it_cannot_stream(mix):
    mean = next(op.index for op in mix.ops if op.type == "MEAN")
    with pytest.raises(ValueError, match="cannot be row-streamed"):
        _core.stream_rows(mix, [mean])
    with pytest.raises(ValueError, match="stripe rows"):
        _core.stream_rows(mix, [0], 0)


# ---------------------------------------------------------------- tiled plans and search
def test_tiled_plan_is_valid_and_uses_rings(mix):
    untiled = tinyarena.plan(mix)
    ops = spatial_ops(mix)[:4]  # the strided stem through the residual ADD: the untiled peak is at op 0
    tiled = tiling.tile(mix, [tiling.Segment(ops)], stream_input=True)
    assert tiled.validate() == []
    assert tiled.peak_bytes < untiled.peak_bytes
    assert tiled.mac_overhead == 1.0 and sum(r.macs for r in tiled.ops) == tiled.macs
    rings = [b for b in tiled.buffers if "[ring" in b.name]
    assert rings and all(b.first == 0 and b.last == len(ops) - 1 for b in rings)
    assert mix.inputs[0] not in [t for b in tiled.buffers if "[ring" not in b.name for t in b.tensors]
    with pytest.raises(ValueError, match="consecutive"):
        tiling.tile(mix, [tiling.Segment([0, 2])])


def test_patch_run_recomputes_halos(mix):
    ops = spatial_ops(mix)[4:7]  # depthwise, max pool (its input needs halos), hard swish
    run = _core.run_patches(mix, ops, 2, 2, False)
    untiled = sum(r.macs for r in tinyarena.plan(mix).ops if r.index in ops)
    assert run.macs > untiled  # the halos
    plan = tiling.tile(mix, [tiling.Segment(ops, mode="patches", patches_h=2, patches_w=2)])
    assert plan.validate() == [] and plan.mac_overhead > 1.0
    assert sum(r.macs for r in plan.ops) == plan.macs == plan.core.macs  # the report shows the recomputation
    with pytest.raises(ValueError, match="grid"):
        _core.run_patches(mix, ops, 50, 1, False)


@pytest.mark.parametrize("name", ["vww_96_int8", "person_detect"])
def test_search_rows_keeps_macs_and_cuts_the_peak(name):
    path = real_model(name)
    result = tiling.search(path, tiling="rows")
    best = result.best
    assert best.validate() == [] and best.mac_overhead <= 1.0
    assert best.peak_bytes < result.untiled_peak_bytes / 2
    assert [p.peak_bytes for p in result.front][0] == best.peak_bytes


def test_search_with_patches_respects_the_budget():
    result = tiling.search(real_model("person_detect"), tiling="auto", max_mac_overhead=1.1, stream_input=False)
    assert result.best.mac_overhead <= 1.1
    macs = [p.macs for p in result.front]
    peaks = [p.peak_bytes for p in result.front]
    assert macs == sorted(macs) and peaks == sorted(peaks, reverse=True)  # a Pareto front
    assert len(set(peaks)) == len(peaks)
    with pytest.raises(ValueError, match="at least 1.0"):
        tiling.search(real_model("person_detect"), max_mac_overhead=0.9)


def test_search_under_a_limit_takes_the_fewest_macs_that_fit():
    free = tiling.search(real_model("person_detect"), tiling="auto", max_mac_overhead=1.1, stream_input=False)
    assert free.best.mac_overhead > 1.0  # the smallest peak costs MACs
    roomy = tiling.search(real_model("person_detect"), tiling="auto", max_mac_overhead=1.1, stream_input=False,
                          sram="30K")
    assert roomy.best.fits and roomy.best.mac_overhead == 1.0 and roomy.best.peak_bytes > free.best.peak_bytes


def test_sweep_records_fit_exactly_when_the_peak_is_within_the_limit():
    records = tiling.sweep(real_model("person_detect"), sram_limits=[8 * 1024, "20K", "64K"], max_mac_overhead=1.1)
    assert [r.fits for r in records] == [r.peak_bytes <= r.sram_limit for r in records]
    assert not records[0].fits and records[-1].fits
    assert records[-1].mac_overhead == 1.0  # with room to spare, no recomputation


def test_every_front_point_is_a_plan_that_tile_makes_again():
    """A front point carries its plan and options; tile()'s defaults are search()'s, so
    tile(model, point.segments) gives the peak the front shows (with tile()'s old defaults,
    stream_input=False and no transforms, the first segment's input stays whole)."""
    path = real_model("person_detect")
    result = tiling.search(path, tiling="auto", max_mac_overhead=1.5)
    assert len(result.front) >= 3 and all(p.segments for p in result.front)
    for point in result.front:
        assert isinstance(point.plan, tiling.TiledPlan) and point.plan.validate() == []
        assert point.plan.peak_bytes == point.peak_bytes and point.plan.macs == point.macs
        assert list(point.plan.segments) == list(point.segments)
        assert tiling.tile(path, point.segments).peak_bytes == point.peak_bytes
        assert tiling.tile(path, point.segments, **point.options).peak_bytes == point.peak_bytes
    old_defaults = tiling.tile(path, result.front[0].segments, stream_input=False, transforms="none")
    assert old_defaults.peak_bytes > result.front[0].peak_bytes
    assert result.best is result.front[-1].plan  # the smallest peak within the budget
    resident = tiling.search(path, tiling="rows", stream_input=False, transforms="none").front[-1]
    assert resident.options["stream_input"] is False and resident.options["transforms"] == "none"
    assert tiling.tile(path, resident.segments, **resident.options).peak_bytes == resident.peak_bytes


def test_tile_defaults_equal_search_defaults():
    import inspect

    def defaults(function):
        return {k: v.default for k, v in inspect.signature(function).parameters.items()
                if v.default is not inspect.Parameter.empty}

    tile, search, sweep = defaults(tiling.tile), defaults(tiling.search), defaults(tiling.sweep)
    shared = set(tile) & set(search)
    assert {"stream_input", "transforms", "alignment", "allocator", "inplace", "scratch", "seconds"} <= shared
    assert {k: tile[k] for k in shared} == {k: search[k] for k in shared}
    assert sweep["max_mac_overhead"] == search["max_mac_overhead"] == tiling.MAX_MAC_OVERHEAD == 1.0
    assert sweep["patch_grids"] == search["patch_grids"] and "patches" not in sweep


def test_results_print_what_they_hold(mix):
    segment = tiling.Segment([1, 2, 3], mode="patches", patches_h=2, patches_w=3)
    assert repr(segment) == "Segment([1, 2, 3], mode='patches', patches_h=2, patches_w=3)"
    assert eval(repr(segment), {"Segment": tiling.Segment}) == segment
    assert repr(tiling.Segment([4])) == "Segment([4], mode='rows', stripe_rows=1)"
    result = tiling.search(mix, tiling="auto", max_mac_overhead=1.5)
    point = result.front[-1]
    text = repr(point)
    assert text.startswith("<ParetoPoint peak ") and f"{point.peak_bytes:,} B" in text
    assert f"MACs x{point.mac_overhead:.3f}" in text
    assert f"{point.segments[0].mode} {point.segments[0].ops[0]}..{point.segments[0].ops[-1]}" in text
    assert _core.describe_segments([]) == "untiled" and repr(tiling.tile(mix, transforms="none")).endswith("untiled>")
    assert f"{result.best.peak_bytes:,} B" in repr(result) and f"{len(result.front)} Pareto points" in repr(result)
    assert f"peak {point.peak_bytes:,} B" in repr(point.plan) and "object at 0x" not in repr(point.plan.tiled)


def test_sweep_records_carry_their_plans():
    path = real_model("person_detect")
    records = tiling.sweep(path, sram_limits=["20K", "64K"], max_mac_overhead=1.1, patch_grids=(2, 3))
    for record in records:
        assert record.plan.peak_bytes == record.peak_bytes and record.plan.mac_overhead == record.mac_overhead
        assert record.plan.validate() == [] and "object at 0x" not in repr(record)
    with pytest.raises(TypeError):
        tiling.sweep(path, sram_limits=["20K"], patches=(2,))  # one name: patch_grids
    with pytest.raises(ValueError, match="positive"):
        tiling.search(path, patch_grids=(0,))


def test_cli_takes_stripe_heights_and_patch_grids(tmp_path):
    path = real_model("person_detect")
    run = subprocess.run([sys.executable, "-m", "tinyarena.cli", "plan", path, "--tiling", "auto",
                          "--max-mac-overhead", "1.1", "--stripe-rows", "1,2", "--patch-grids", "2"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    best = tiling.search(path, tiling="auto", max_mac_overhead=1.1, stripe_rows=(1, 2), patch_grids=(2,)).best
    assert f"tiling auto: peak {best.peak_bytes:,} B" in run.stdout
    assert all(s.mode == "rows" or (s.patches_h, s.patches_w) == (2, 2) for s in best.segments)
    bad = subprocess.run([sys.executable, "-m", "tinyarena.cli", "plan", path, "--patch-grids", "2,x"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "positive integers" in bad.stderr and "Traceback" not in bad.stderr


# ---------------------------------------------------------------- code generation
def check_exact(graph, tiled, target, tmp_path):
    result = verify(None, target=target, plan=tiled, work_dir=tmp_path)
    assert result.bit_exact, result.summary()
    assert result.arena_bytes == tiled.peak_bytes


@pytest.mark.parametrize("stripe_rows, stream_input", [(1, True), (3, False)])
def test_row_streamed_mixed_model_is_bit_exact_on_host(mix, stripe_rows, stream_input, tmp_path):
    ops = spatial_ops(mix)
    mean = next(op.index for op in mix.ops if op.type == "MEAN")
    segments = [tiling.Segment([o for o in ops if o < mean], stripe_rows=stripe_rows),
                tiling.Segment([o for o in ops if o > mean], stripe_rows=stripe_rows)]
    check_exact(mix, tiling.tile(mix, segments, stream_input=stream_input), "host", tmp_path)


def test_mobilenet_v2_row_streamed_is_bit_exact_on_host(tmp_path):
    graph = tinyarena.load_model(builder.mobilenet_v2(alpha=0.35, resolution=128, num_classes=10))
    best = tiling.search(graph, tiling="rows").best
    assert best.segments and best.peak_bytes < tinyarena.plan(graph).peak_bytes
    check_exact(graph, best, "host", tmp_path / "searched")
    first_add = next(op.index for op in graph.ops if op.type == "ADD")  # a residual block inside the segment
    check_exact(graph, tiling.tile(graph, [tiling.Segment(range(first_add + 4))], stream_input=True), "host",
                tmp_path / "residual")


def test_explicit_pad_mobilenet_v2_streams_after_pad_folding(tmp_path):
    """As TF exports it (a PAD before every stride-2 depthwise): a PAD streams as a copy with a
    ring of its own; folded into the depthwise's explicit padding, neither is needed."""
    data = builder.mobilenet_v2(alpha=0.35, resolution=96, num_classes=10, explicit_pad=True)
    unfolded = tiling.search(data, tiling="rows", transforms="none").best
    folded = tiling.search(data, tiling="rows").best
    assert "PAD" in [op.type for op in unfolded.graph.ops] and "PAD" not in [op.type for op in folded.graph.ops]
    assert folded.transforms[0].name == "fold_pads" and folded.transforms[0].applied
    explicit = {op.index for op in folded.graph.ops if op.options.padding == "EXPLICIT"}
    assert explicit & {op for seg in folded.segments for op in seg.ops}  # a folded depthwise inside a segment
    assert folded.mac_overhead == 1.0 and folded.peak_bytes < unfolded.peak_bytes
    assert folded.validate() == []
    result = verify(data, target="host", plan=folded, work_dir=tmp_path)
    assert result.bit_exact, result.summary()
    assert result.arena_bytes == folded.peak_bytes


def test_segments_stop_at_zero_copy_slices(tmp_path):
    """Concatenation branches writing their channel slices are placed tensors: no segment holds
    them or the elided concatenation, and the mixed plan stays bit-exact."""
    from test_transforms import concat_bottleneck_model

    data = concat_bottleneck_model()
    best = tiling.search(data, tiling="rows", transforms="zero_copy").best
    graph = best.graph
    elided = [op.index for op in graph.ops if op.elided]
    placed = {t.index for t in graph.tensors if t.placement} | {t.placement[0] for t in graph.tensors if t.placement}
    assert elided and placed
    assert not any(_core.is_tileable(graph, op) for op in elided)
    for seg in best.segments:
        for op in (graph.ops[i] for i in seg.ops):
            assert not op.elided and not placed & set(op.outputs) and not placed & set(op.inputs)
    tileable = [op.index for op in graph.ops if _core.is_tileable(graph, op.index)]
    assert tileable  # ops off the slices still tile
    result = verify(data, target="host", plan=tiling.tile(graph, [tiling.Segment(tileable[-1:])], stream_input=True),
                    work_dir=tmp_path)
    assert result.bit_exact, result.summary()


@pytest.mark.parametrize("name", ["kws_ref_model", "pretrainedResnet_quant", "str_ww_ref_model"])
def test_real_models_tiled_in_both_modes_are_bit_exact_on_host(name, tmp_path):
    graph = tinyarena.load_model(real_model(name))
    ops = spatial_ops(graph)
    assert ops == list(range(len(ops)))  # the spatial layers come first, one run
    check_exact(graph, tiling.tile(graph, [tiling.Segment(ops)], stream_input=True), "host", tmp_path / "rows")
    while graph.tensors[graph.ops[ops[-1]].outputs[0]].shape[1] < 2:  # patches need two output rows
        ops.pop()
    width = graph.tensors[graph.ops[ops[-1]].outputs[0]].shape[2]
    patches = tiling.Segment(ops, mode="patches", patches_h=2, patches_w=min(2, width))
    check_exact(graph, tiling.tile(graph, [patches], stream_input=True), "host", tmp_path / "patches")


@needs_cortex_m
def test_row_streamed_schedules_are_bit_exact_on_cortex_m4(mix, tmp_path):
    check_exact(mix, tiling.tile(mix, [tiling.Segment(spatial_ops(mix)[:8])], stream_input=True), "cortex-m4",
                tmp_path / "mix")
    vww = tiling.search(real_model("vww_96_int8"), tiling="rows").best
    check_exact(vww.graph, vww, "cortex-m4", tmp_path / "vww")


def patch_and_row_segments(graph):
    ops = spatial_ops(graph)
    return [tiling.Segment(ops[:4], mode="patches", patches_h=2, patches_w=3),  # a residual ADD inside
            tiling.Segment(ops[4:8], stripe_rows=2)]


@pytest.mark.parametrize("stream_input", [True, False])
def test_patch_and_mixed_schedules_are_bit_exact_on_host(mix, stream_input, tmp_path):
    plan = tiling.tile(mix, patch_and_row_segments(mix), stream_input=stream_input)
    assert plan.mac_overhead > 1.0 and plan.validate() == []
    check_exact(mix, plan, "host", tmp_path)


@needs_cortex_m
def test_patch_and_mixed_schedules_are_bit_exact_on_cortex_m4(mix, tmp_path):
    check_exact(mix, tiling.tile(mix, patch_and_row_segments(mix), stream_input=True), "cortex-m4", tmp_path)


# ---------------------------------------------------------------- command line
def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "tinyarena.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_cli_tiling_plan_and_too_small_sram(tmp_path):
    ok = run_cli("plan", real_model("vww_96_int8"), "--tiling", "rows", "--sram", "32K")
    assert ok.returncode == 0, ok.stderr
    assert "tiling rows: peak" in ok.stdout and "1.000x" in ok.stdout
    small = run_cli("plan", real_model("vww_96_int8"), "--tiling", "auto", "--max-mac-overhead", "1.2",
                    "--sram", "4K")
    assert small.returncode == 2
    assert "smallest peak the tiling search reached" in small.stderr and "4,096 bytes" in small.stderr
    verified = run_cli("verify", real_model("person_detect"), "--tiling", "auto", "--max-mac-overhead", "1.1")
    assert verified.returncode == 0 and "bit-exact on host" in verified.stdout and "rows" in verified.stdout
    both = run_cli("compile", real_model("vww_96_int8"), "--tiling", "rows", "--transforms", "fold_pads", "-o",
                   tmp_path / "out")
    assert both.returncode == 0 and "tiling rows: peak" in both.stdout and "transforms: none applied" in both.stdout
    exclusive = run_cli("plan", real_model("vww_96_int8"), "--transforms", "zero_copy", "--no-transforms")
    assert exclusive.returncode == 2 and "not allowed with" in exclusive.stderr
    bad = run_cli("plan", real_model("vww_96_int8"), "--tiling", "diagonal")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


# ---------------------------------------------------------------- MEAN over rows and columns
def mean_tail_model(keep_dims):
    """A spatial tail ending in a 1x1 conv that feeds MEAN over H and W (a classifier head):
    the MEAN sums rows as they stream, so the wide conv output is a ring, never whole."""
    mb = ModelBuilder(f"mean_tail_{int(keep_dims)}", seed=11)
    x = mb.input([1, 13, 11, 3])
    a = mb.conv2d(x, 8, kernel=3, stride=2, activation="RELU6")                # 7 x 6
    b = mb.depthwise_conv2d(a, kernel=3, activation="RELU6")
    c = mb.conv2d(b, 40, kernel=1, activation="RELU6")                         # the wide head
    m = mb.mean(c, axes=(1, 2), keep_dims=keep_dims)
    mb.output(mb.fully_connected(mb.reshape(m, [1, 40]) if keep_dims else m, 5))
    return tinyarena.load_model(mb.build())


@pytest.mark.parametrize("keep_dims", [False, True])
def test_mean_over_rows_and_columns_streams_into_sums(keep_dims):
    graph = mean_tail_model(keep_dims)
    mean = next(op.index for op in graph.ops if op.type == "MEAN")
    assert _core.is_tileable(graph, mean)
    head = graph.ops[mean].inputs[0]
    assert _core.input_range(graph, mean, 0, "rows", 0, 1) == (0, graph.tensors[head].shape[1])
    ops = spatial_ops(graph)
    assert ops[-1] == mean
    stream = _core.stream_rows(graph, ops, 2, True)
    ring = next(r for r in stream.rings if r.tensor == head)
    assert ring.rows == 2  # the conv's output held two rows at a time
    assert stream.op_state == [0] * (len(ops) - 1) + [40 * 4]  # one int32 sum per channel
    summed = [(b, e) for kind, op, b, e in stream.steps if kind == "run" and op == mean]
    assert summed == [(0, 2), (2, 4), (4, 6), (6, 7)]  # every input row once, in order
    assert stream.macs == sum(r.macs for r in tinyarena.plan(graph).ops if r.index in ops)
    with pytest.raises(ValueError, match="cannot run on patches"):
        _core.run_patches(graph, ops, 1, 1, False)


@pytest.mark.parametrize("keep_dims, stripe_rows", [(False, 1), (True, 3)])
def test_row_streamed_mean_tail_is_bit_exact_on_host(keep_dims, stripe_rows, tmp_path):
    graph = mean_tail_model(keep_dims)
    ops = spatial_ops(graph)
    tiled = tiling.tile(graph, [tiling.Segment(ops, stripe_rows=stripe_rows)], stream_input=True)
    before_mean = tiling.tile(graph, [tiling.Segment(ops[:-1], stripe_rows=stripe_rows)], stream_input=True)
    assert tiled.validate() == [] and tiled.mac_overhead == 1.0
    assert tiled.peak_bytes < before_mean.peak_bytes  # the head's output is no longer whole
    assert any(b.name.startswith("sums@") and b.size == 40 * 4 for b in tiled.buffers)
    check_exact(graph, tiled, "host", tmp_path)


@needs_cortex_m
def test_row_streamed_mean_tail_is_bit_exact_on_cortex_m4(tmp_path):
    graph = mean_tail_model(False)
    check_exact(graph, tiling.tile(graph, [tiling.Segment(spatial_ops(graph), stripe_rows=2)], stream_input=True),
                "cortex-m4", tmp_path)


def test_segments_plan_no_kernel_scratch_when_scratch_is_off():
    """scratch=False leaves every kernel's scratch out, a segment's too, so the search weighs
    streamed and plain ops alike (the MEAN's sums are state, still counted)."""
    graph = mean_tail_model(False)
    segments = [tiling.Segment(spatial_ops(graph))]
    with_scratch = tiling.tile(graph, segments, stream_input=True)
    without = tiling.tile(graph, segments, stream_input=True, scratch=False)
    assert any(b.kind == "scratch" for b in with_scratch.core.liveness.buffers)
    assert not any(b.kind == "scratch" for b in without.core.liveness.buffers)
    assert any(b.name.startswith("sums@") for b in without.buffers) and without.validate() == []
    assert tiling.search(graph, tiling="rows", scratch=False).best.segments


@pytest.mark.parametrize("stripe_rows", [1, 2])
def test_a_segment_streams_the_same_inside_any_longer_run_ending_with_it(stripe_rows):
    """What the search reads off one stream of a run's last steps for every segment ending
    there: the rings of the segment's own tensors and its ops' state do not depend on where
    the streamed run starts."""
    graph = tinyarena.load_model(builder.chain(24, shape=(1, 16, 16, 8)))
    ops = [op.index for op in graph.ops]
    for end in (9, 16, 24):
        run = _core.stream_rows(graph, ops[:end], stripe_rows)
        rings = {r.tensor: r.rows for r in run.rings}
        for begin in range(end):
            alone = _core.stream_rows(graph, ops[begin:end], stripe_rows)
            inside = {graph.ops[op].outputs[0] for op in ops[begin:end]}
            assert {r.tensor: r.rows for r in alone.rings if r.tensor in inside} == \
                {t: rows for t, rows in rings.items() if t in inside}
            assert list(alone.op_state) == list(run.op_state)[begin:]


def test_search_on_a_long_chain_streams_runs_and_plans_what_it_reports():
    graph = tinyarena.load_model(builder.chain(300, shape=(1, 32, 32, 8)))
    found = tiling.search(graph, tiling="rows")
    best = found.best
    assert len(best.segments) > 20 and best.peak_bytes < found.untiled_peak_bytes
    assert best.mac_overhead == 1.0
    again = tiling.tile(graph, [tiling.Segment(list(s.ops)) for s in best.segments], stream_input=True)
    assert again.peak_bytes == best.peak_bytes
    assert found.front[0].peak_bytes == best.peak_bytes
