"""Row-streamed segments that end in a reduction over rows and columns (MEAN over H,W, a global
AVERAGE_POOL_2D): the reduction sums rows into C int32 sums as they stream, so the map it reads
is a ring, never whole; squeeze-excite blocks end a segment at their MEAN and start one at their
MUL; the converter-made MCUNet models tiled by the search are bit-exact."""

import pathlib

import pytest

import tinyarena
from tinyarena import _core, tiling
from tinyarena.builder import ModelBuilder

from test_tiling import check_exact, spatial_ops  # the tiling tests' own helpers

CONVERTED_DIR = pathlib.Path(__file__).resolve().parent / "data" / "converted"


# ---------------------------------------------------------------- global AVERAGE_POOL_2D
def avg_pool_tail_model(activation="NONE"):
    """A spatial tail ending in a wide 1x1 conv that a global average pool (the whole 7x6 map,
    VALID) reduces to one pixel, then a classifier."""
    mb = ModelBuilder(f"avg_pool_tail_{activation}", seed=5)
    x = mb.input([1, 13, 11, 3])
    a = mb.conv2d(x, 8, kernel=3, stride=2, activation="RELU6")                # 7 x 6
    b = mb.depthwise_conv2d(a, kernel=3, activation="RELU6")
    c = mb.conv2d(b, 40, kernel=1)                                             # the wide head, signed
    p = mb.average_pool2d(c, pool=(7, 6), padding="VALID", activation=activation)
    mb.output(mb.fully_connected(mb.reshape(p, [1, 40]), 5))
    return tinyarena.load_model(mb.build())


def test_global_average_pool_streams_into_sums():
    graph = avg_pool_tail_model()
    pool = next(op.index for op in graph.ops if op.type == "AVERAGE_POOL_2D")
    head = graph.ops[pool].inputs[0]
    assert _core.is_tileable(graph, pool)
    assert _core.input_range(graph, pool, 0, "rows", 0, 1) == (0, 7)
    ops = spatial_ops(graph)
    assert ops[-1] == pool
    stream = _core.stream_rows(graph, ops, 2, True)
    assert next(r for r in stream.rings if r.tensor == head).rows == 2  # never the whole 7 rows
    assert stream.op_state == [0] * (len(ops) - 1) + [40 * 4]  # one int32 sum per channel
    summed = [(b, e) for kind, op, b, e in stream.steps if kind == "run" and op == pool]
    assert summed == [(0, 2), (2, 4), (4, 6), (6, 7)]
    with pytest.raises(ValueError, match="cannot run on patches"):
        _core.run_patches(graph, ops, 1, 1, False)


def test_a_windowed_average_pool_is_no_reduction():
    mb = ModelBuilder("avg_pool_windowed", seed=5)
    x = mb.input([1, 8, 8, 4])
    p = mb.average_pool2d(mb.conv2d(x, 8, kernel=1), pool=(2, 2))
    mb.output(p)
    graph = tinyarena.load_model(mb.build())
    pool = next(op.index for op in graph.ops if op.type == "AVERAGE_POOL_2D")
    assert _core.is_tileable(graph, pool)
    assert _core.input_range(graph, pool, 0, "rows", 1, 2) == (2, 4)  # a window, not every row
    stream = _core.stream_rows(graph, spatial_ops(graph), 1, False)
    assert stream.op_state == [0, 0]


@pytest.mark.parametrize("activation, stripe_rows", [("NONE", 1), ("RELU", 3)])
def test_row_streamed_global_average_pool_is_bit_exact_on_host(activation, stripe_rows, tmp_path):
    graph = avg_pool_tail_model(activation)
    ops = spatial_ops(graph)
    tiled = tiling.tile(graph, [tiling.Segment(ops, stripe_rows=stripe_rows)], stream_input=True)
    before_pool = tiling.tile(graph, [tiling.Segment(ops[:-1], stripe_rows=stripe_rows)], stream_input=True)
    assert tiled.validate() == [] and tiled.mac_overhead == 1.0
    assert tiled.peak_bytes < before_pool.peak_bytes  # the head's output is no longer whole
    assert any(b.name.startswith("sums@") and b.size == 40 * 4 for b in tiled.buffers)
    check_exact(tiled.graph, tiled, "host", tmp_path)


def test_search_ends_a_segment_at_the_global_average_pool(tmp_path):
    graph = avg_pool_tail_model()
    pool = next(op.index for op in graph.ops if op.type == "AVERAGE_POOL_2D")
    found = tiling.search(graph, tiling="rows", stream_input=True)
    assert any(seg.ops[-1] == pool for seg in found.best.segments)
    assert found.best.peak_bytes < found.untiled_peak_bytes
    check_exact(found.best.graph, found.best, "host", tmp_path)


# ---------------------------------------------------------------- squeeze-excite
def squeeze_excite_model(gate="LOGISTIC"):
    """An inverted-residual block with a squeeze-excite gate as the converter writes it: MEAN
    over H,W, two 1x1 convs, a sigmoid (or a hard gate: the second conv's RELU6 alone) and the MUL
    that broadcasts [1, 1, 1, C] over the map, then the projection."""
    mb = ModelBuilder(f"se_{gate}", seed=3)
    x = mb.input([1, 40, 32, 3])
    a = mb.conv2d(x, 16, kernel=3, activation="RELU6")                         # 40 x 32, the widest map
    a = mb.depthwise_conv2d(a, kernel=3, stride=2, activation="RELU6")         # 20 x 16
    e = mb.conv2d(a, 32, kernel=1, activation="RELU6")                         # the expanded map
    d = mb.depthwise_conv2d(e, kernel=3, activation="RELU6")
    s = mb.mean(d, axes=(1, 2), keep_dims=True)
    s = mb.conv2d(s, 8, kernel=1, activation="RELU")
    s = mb.conv2d(s, 32, kernel=1, activation="RELU6" if gate == "hard" else "NONE")
    g = mb.logistic(s) if gate == "LOGISTIC" else s
    y = mb.mul(d, g)
    p = mb.conv2d(y, 8, kernel=1)
    m = mb.mean(p, axes=(1, 2))
    mb.output(mb.fully_connected(m, 4))
    return tinyarena.load_model(mb.build())


@pytest.mark.parametrize("gate", ["LOGISTIC", "hard"])
def test_squeeze_excite_segments_end_at_the_mean_and_restart_at_the_mul(gate, tmp_path):
    graph = squeeze_excite_model(gate)
    means = [op.index for op in graph.ops if op.type == "MEAN"]
    gate_mul = next(op.index for op in graph.ops if op.type == "MUL")
    se_map = graph.ops[means[0]].inputs[0]
    producer = graph.tensors[se_map].producer
    found = tiling.search(graph, tiling="rows", stream_input=True)
    best = found.best
    assert best.peak_bytes < found.untiled_peak_bytes and best.mac_overhead == 1.0
    # The gate needs the whole map before the MUL can run: no segment runs from the map (or its
    # MEAN) across the MUL, so the map stays whole between them (the search may also leave the
    # map's producer and the MUL plain, writing over their inputs).
    assert not any(producer in seg.ops and gate_mul in seg.ops for seg in best.segments)
    assert not any(means[0] in seg.ops and gate_mul in seg.ops for seg in best.segments)
    assert any(seg.ops[-1] <= producer for seg in best.segments)  # something before the map streams
    check_exact(best.graph, best, "host", tmp_path / "searched")
    # Both MEANs ending segments: the squeeze's (its map whole, read by the MUL) and the tail's.
    ops = spatial_ops(graph)
    both = tiling.tile(graph, [tiling.Segment([o for o in ops if o <= means[0]]),
                               tiling.Segment([o for o in ops if o >= gate_mul])], stream_input=True)
    assert both.validate() == [] and both.peak_bytes < found.untiled_peak_bytes
    assert sum(b.name.startswith("sums@") for b in both.buffers) == 2
    check_exact(both.graph, both, "host", tmp_path / "both")


# ---------------------------------------------------------------- converter-made MCUNet
def squeeze_maps(graph):
    """Producers of the maps a squeeze-excite MEAN reduces and a MUL then scales."""
    producers = set()
    for op in graph.ops:
        if op.type != "MEAN":
            continue
        t = graph.tensors[op.inputs[0]]
        if any(graph.ops[c].type == "MUL" for c in t.consumers):
            producers.add(t.producer)
    return producers


# The search's best at <= 1.10x MACs stays within these fractions of the untiled peak. Row
# streaming cannot go much lower on these models: at 80x80 the rings of the first stage (a 7x7
# stride-2 depthwise holds 7 rows of a 40x40x24 map) plus the whole 20x20x16 map where that
# segment ends; at 224x224 a squeeze-excite map is whole when its gate is ready (28x28x72) next
# to the block's skip input (28x28x24), both needed until the MUL and ADD run.
@pytest.mark.parametrize("name, ratio", [("mcunet_se_80_int8io.tflite", 0.36),
                                         ("mcunet_se_224_int8io.tflite", 0.25)])
def test_converted_mcunet_searched_is_bit_exact_and_smaller(name, ratio, tmp_path):
    found = tiling.search(CONVERTED_DIR / name, tiling="auto", max_mac_overhead=1.1)
    best = found.best
    assert best.mac_overhead <= 1.1 and best.validate() == []
    assert best.peak_bytes <= ratio * found.untiled_peak_bytes
    assert {seg.ops[-1] for seg in best.segments} & squeeze_maps(best.graph)  # a segment ends at a squeeze map
    check_exact(best.graph, best, "host", tmp_path)


@pytest.mark.parametrize("name", ["mcunet_se_80_int8io.tflite", "mcunet_se_224_int8io.tflite"])
def test_converted_mcunet_with_every_mean_ending_a_segment_is_bit_exact(name, tmp_path):
    """Every run of spatial ops cut right after each MEAN: the squeeze MEANs and the tail's
    sum their rows as they stream, the gates and MULs start the next segment."""
    graph = tinyarena.load_model(CONVERTED_DIR / name)
    segments, current = [], []
    for op in spatial_ops(graph):
        current.append(op)
        if graph.ops[op].type == "MEAN":
            segments.append(tiling.Segment(current))
            current = []
    assert len(segments) == 6 and not current
    tiled = tiling.tile(graph, segments, stream_input=True)
    assert tiled.validate() == [] and tiled.mac_overhead == 1.0
    assert sum(b.name.startswith("sums@") for b in tiled.buffers) == 6
    check_exact(tiled.graph, tiled, "host", tmp_path)


@pytest.mark.parametrize("name", ["ds_cnn_kws_int8io.tflite", "ds_cnn_kws_floatio.tflite"])
def test_converted_ds_cnn_streams_into_its_global_average_pool(name):
    """DS-CNN's head is a global AVERAGE_POOL_2D over the last 64-channel map: ending the
    segment there, the map is a ring, not whole (0.85x -> 0.40x of the untiled peak)."""
    found = tiling.search(CONVERTED_DIR / name)
    graph = found.best.graph
    pool = next(op.index for op in graph.ops if op.type == "AVERAGE_POOL_2D")
    assert any(seg.ops[-1] == pool for seg in found.best.segments)
    assert found.best.validate() == [] and found.best.mac_overhead == 1.0
    assert found.best.peak_bytes <= 0.45 * found.untiled_peak_bytes


# ---------------------------------------------------------------- PAD inside a segment
def pad_model():
    """A PAD that stays (transforms="none") between a conv and a max pool, asymmetric on rows
    and columns, inside a run of spatial ops."""
    mb = ModelBuilder("pad_in_segment", seed=9)
    x = mb.input([1, 12, 10, 3])
    a = mb.conv2d(x, 8, kernel=3, activation="RELU")
    p = mb.pad(a, [(0, 0), (2, 1), (1, 2), (0, 0)])                             # 15 x 13
    m = mb.max_pool2d(p, pool=(3, 3), stride=(2, 2))                            # 7 x 6
    mb.output(mb.conv2d(m, 4, kernel=1))
    return mb.build()


def test_pad_streams_inside_a_segment_but_not_on_patches():
    graph = tiling.transformed_graph(pad_model(), transforms="none")[0]
    pad = next(op.index for op in graph.ops if op.type == "PAD")
    assert _core.is_tileable(graph, pad)
    assert _core.input_range(graph, pad, 0, "rows", 0, 2) == (0, 0)  # padding rows read nothing
    assert _core.input_range(graph, pad, 0, "rows", 1, 4) == (0, 2)
    ops = spatial_ops(graph)
    assert pad in ops[1:-1]
    stream = _core.stream_rows(graph, ops, 1, True)
    runs = [(b, e) for kind, op, b, e in stream.steps if kind == "run" and op == pad]
    assert runs == [(r, r + 1) for r in range(15)]  # every output row once, padding rows too
    with pytest.raises(ValueError, match="cannot run on patches"):
        _core.run_patches(graph, ops, 2, 2, False)


@pytest.mark.parametrize("stripe_rows", [1, 2, 4])
def test_row_streamed_pad_is_bit_exact_on_host(stripe_rows, tmp_path):
    data = pad_model()
    graph = tiling.transformed_graph(data, transforms="none")[0]
    tiled = tiling.tile(data, [tiling.Segment(spatial_ops(graph), stripe_rows=stripe_rows)], transforms="none")
    assert "PAD" in [tiled.graph.ops[i].type for i in tiled.segments[0].ops]
    assert tiled.validate() == [] and tiled.peak_bytes < tinyarena.plan(data, transforms="none").peak_bytes
    check_exact(tiled.graph, tiled, "host", tmp_path)


@pytest.mark.qemu
def test_row_streamed_global_average_pool_and_pad_are_bit_exact_on_cortex_m4(tmp_path):
    graph = avg_pool_tail_model("RELU")
    tiled = tiling.tile(graph, [tiling.Segment(spatial_ops(graph), stripe_rows=2)], stream_input=True)
    check_exact(graph, tiled, "cortex-m4", tmp_path / "avg_pool")
    data = pad_model()
    ops = spatial_ops(tiling.transformed_graph(data, transforms="none")[0])
    tiled = tiling.tile(data, [tiling.Segment(ops, stripe_rows=2)], transforms="none")
    check_exact(tiled.graph, tiled, "cortex-m4", tmp_path / "pad")
