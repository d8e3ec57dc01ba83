"""Overwrites: a row segment writing a whole output over a whole input that dies in it, when its
fixed schedule never writes a byte before that byte's last read (tinyarena/tiling/tiled_plan.h)."""

import pytest

import tinyarena
from test_tiling import check_exact
from tinyarena import _core, tiling
from tinyarena.builder import ModelBuilder


def residual_model():
    """An untiled stem, then an inverted residual block whose ADD output has the stem's shape,
    then a strided depthwise and a 1x1 conv (a smaller output, written behind the reads)."""
    mb = ModelBuilder("overwrites", seed=5)
    x = mb.input([1, 12, 10, 3])
    stem = mb.conv2d(x, 8, kernel=3, stride=1, activation="RELU6")          # op 0: 12 x 10 x 8
    wide = mb.conv2d(stem, 24, kernel=1, activation="RELU6")                 # op 1
    dw = mb.depthwise_conv2d(wide, kernel=3, activation="RELU6")            # op 2
    narrow = mb.conv2d(dw, 8, kernel=1)                                      # op 3
    block = mb.add(stem, narrow)                                             # op 4: 12 x 10 x 8
    down = mb.depthwise_conv2d(block, kernel=3, stride=2)                    # op 5: 6 x 5 x 8
    project = mb.conv2d(down, 16, kernel=1)                                  # op 6: 6 x 5 x 16
    mb.output(mb.conv2d(project, 4, kernel=1))                               # op 7
    return tinyarena.load_model(mb.build())


@pytest.fixture(scope="module")
def graph():
    return residual_model()


def tensor(graph, op):
    return graph.ops[op].outputs[0]


def buffer_of(plan, t):
    return next(b for b in plan.buffers if t in b.tensors)


def test_a_residual_block_writes_its_output_over_its_input(graph, tmp_path):
    block = [1, 2, 3, 4]
    stream = _core.stream_rows(graph, block, 1, False)
    stem, out = tensor(graph, 0), tensor(graph, 4)
    assert (out, stem) in stream.overwrites  # the ADD writes row r once row r is read for the last time
    plan = tiling.tile(graph, [tiling.Segment(block)], stream_input=False, transforms="none")
    shared = buffer_of(plan, stem)
    assert out in shared.tensors and shared.size == graph.tensors[stem].byte_size
    apart = tiling.tile(graph, [tiling.Segment(block)], stream_input=False, transforms="none", inplace=False)
    assert buffer_of(apart, stem) is not buffer_of(apart, out) and out not in buffer_of(apart, stem).tensors
    assert plan.peak_bytes < apart.peak_bytes
    assert plan.validate() == [] and apart.validate() == []
    check_exact(graph, plan, "host", tmp_path)


def test_writes_that_reach_a_row_still_needed_are_refused(graph):
    wide, dw = tensor(graph, 1), tensor(graph, 2)
    # A 3x3 depthwise still needs input row r - 1 when it writes output row r; a widening 1x1
    # conv writes 3 bytes per input byte it has read.
    assert (dw, wide) not in _core.stream_rows(graph, [2], 1, False).overwrites
    assert (wide, tensor(graph, 0)) not in _core.stream_rows(graph, [1], 1, False).overwrites
    # Nor may a call write the rows it reads (row 0 of a strided depthwise), unless elementwise.
    assert _core.stream_rows(graph, [5], 1, False).overwrites == []
    # Behind a strided depthwise, the 1x1 conv writes output row r after input rows below 2r + 2
    # are done: allowed, but here the plan declines a smaller output over a larger input (the
    # merged buffer would outlive the input at the input's size, and the peak is no lower).
    down = [5, 6]
    assert (tensor(graph, 6), tensor(graph, 4)) in _core.stream_rows(graph, down, 1, False).overwrites
    plan = tiling.tile(graph, [tiling.Segment(down)], stream_input=False, transforms="none")
    assert tensor(graph, 6) not in buffer_of(plan, tensor(graph, 4)).tensors


def shrinking_model():
    """A wide map, then a strided depthwise and a 1x1 conv whose output is smaller than the map:
    the peak is where the map and that output are both whole."""
    mb = ModelBuilder("smaller_overwrite", seed=7)
    x = mb.input([1, 16, 16, 4])
    wide = mb.conv2d(x, 16, kernel=1, activation="RELU6")       # op 0: 16 x 16 x 16, 4,096 B
    down = mb.depthwise_conv2d(wide, kernel=3, stride=2)         # op 1: 8 x 8 x 16
    project = mb.conv2d(down, 24, kernel=1)                      # op 2: 8 x 8 x 24, 1,536 B
    mb.output(mb.conv2d(project, 4, kernel=1))                   # op 3
    return tinyarena.load_model(mb.build())


def test_a_smaller_output_is_written_over_its_dying_input_where_that_lowers_the_peak(tmp_path):
    graph = shrinking_model()
    segment = [tiling.Segment([1, 2])]
    wide, project = tensor(graph, 0), tensor(graph, 2)
    assert (project, wide) in _core.stream_rows(graph, [1, 2], 1, False).overwrites
    plan = tiling.tile(graph, segment, stream_input=False, transforms="none")
    shared = buffer_of(plan, wide)
    assert project in shared.tensors and shared.size == graph.tensors[wide].byte_size  # the input's size
    apart = tiling.tile(graph, segment, stream_input=False, transforms="none", inplace=False)
    assert project not in buffer_of(apart, wide).tensors
    assert plan.peak_bytes < apart.peak_bytes
    assert plan.validate() == []
    check_exact(graph, plan, "host", tmp_path / "host")
    found = tiling.search(graph, tiling="rows", stream_input=False, transforms="none").best
    assert found.peak_bytes <= plan.peak_bytes


@pytest.mark.qemu
def test_a_smaller_output_over_its_input_is_bit_exact_on_cortex_m4(tmp_path):
    graph = shrinking_model()
    plan = tiling.tile(graph, [tiling.Segment([1, 2])], stream_input=False, transforms="none")
    check_exact(graph, plan, "cortex-m4", tmp_path)


def test_column_strips_write_over_nothing(graph):
    assert _core.stream_rows(graph, [1, 2, 3, 4], 1, False, 2).overwrites == []


def test_search_plans_what_it_estimates_with_overwrites(graph, tmp_path):
    result = tiling.search(graph, tiling="rows", stream_input=False, transforms="none")
    best = result.best
    assert best.validate() == [] and best.peak_bytes <= result.untiled_peak_bytes
    assert any(len(b.tensors) > 1 for b in best.buffers)
    check_exact(graph, best, "host", tmp_path)
