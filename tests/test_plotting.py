"""The allocation chart and the Pareto plot, checked on their matplotlib objects after drawing."""

import shutil

import matplotlib
import pytest
from real_models import real_model

import tinyarena
from tinyarena import tiling
from tinyarena.memories import parse_pin
from tinyarena.plotting import short_name

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Annotation  # noqa: E402


@pytest.fixture(scope="module")
def vww():
    return tinyarena.plan(real_model("vww_96_int8"))


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def drawn(ax):
    ax.figure.canvas.draw()
    return ax


def extent(artist):
    return artist.get_window_extent(artist.figure.canvas.get_renderer())


def by_gid(ax, gid):
    (found,) = [t for t in ax.texts if t.get_gid() == gid]
    return found


def inside(box, outer):
    return outer.x0 <= box.x0 and box.x1 <= outer.x1 and outer.y0 <= box.y0 and box.y1 <= outer.y1


@pytest.mark.parametrize("times_peak", [1.1, 10.0])
def test_legend_and_labels_never_overlap(vww, times_peak):
    ax = drawn(vww.plot(sram_limit=int(times_peak * vww.peak_bytes)))
    legend, limit, peak = extent(ax.get_legend()), extent(by_gid(ax, "sram_limit")), extent(by_gid(ax, "peak"))
    assert not legend.overlaps(limit) and not legend.overlaps(peak) and not limit.overlaps(peak)
    assert not legend.overlaps(ax.xaxis.get_tightbbox(ax.figure.canvas.get_renderer()))
    assert inside(legend, ax.figure.bbox) and inside(limit, ax.figure.bbox)


def test_legends_of_side_by_side_charts_stay_apart():
    best = tiling.search(real_model("vww_96_int8"), tiling="rows").best
    fig, axes = plt.subplots(1, 3, figsize=(18, 4.5))
    for ax in axes:
        best.plot(ax=ax)
    fig.canvas.draw()
    left, middle, right = (extent(ax.get_legend()) for ax in axes)
    assert not left.overlaps(middle) and not middle.overlaps(right)


def test_title_is_the_short_file_name_inside_the_figure(tmp_path):
    stem = "a_very_long_model_file_name_that_goes_on_" * 4
    model = tmp_path / f"{stem}.tflite"
    shutil.copy(real_model("vww_96_int8"), model)
    ax = drawn(tinyarena.plan(model).plot())
    title = ax.title.get_text()
    assert str(tmp_path) not in title and title.startswith(short_name(model) + ":")
    assert inside(extent(ax.title), ax.figure.bbox)


def test_short_name_keeps_both_ends_of_a_long_stem():
    assert short_name("/models/dir.v2/vww_96_int8.tflite") == "vww_96_int8"
    name = short_name("/x/" + "head_" + "m" * 100 + "_tail.tflite")
    assert len(name) <= 32 and name.startswith("head_") and name.endswith("_tail") and "\u2026" in name


def test_buffer_labels_are_the_indices_the_json_and_pin_use(vww):
    ax = drawn(vww.plot())
    buffers = vww.to_dict()["buffers"]
    labels = [t for t in ax.texts if t.get_gid() is None and "\n" in t.get_text()]
    assert len(labels) >= 5
    for text in labels:
        key, size = text.get_text().split("\n")
        index, _ = parse_pin(f"{key}=sram")
        assert isinstance(index, int)
        b = buffers[index]
        x, y = text.get_position()
        assert x == pytest.approx((b["first"] + b["last"]) / 2)
        assert y == pytest.approx((b["offset"] + b["size"] / 2) / 1024)
        assert size == (f"{b['size']} B" if b["size"] < 1024 else f"{b['size'] / 1024:.1f}K")
    assert "--pin INDEX=MEMORY" in ax.get_legend().get_title().get_text()


@pytest.mark.parametrize("name", ["hello_world_int8", "vww_96_int8"])
def test_op_ticks_are_whole_steps(name):
    ax = drawn(tinyarena.plan(real_model(name)).plot())
    low, high = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if low <= t <= high]
    assert len(ticks) >= 2 and all(t == int(t) for t in ticks)


def test_a_far_limit_is_an_arrow_and_the_axis_follows_the_peak(vww):
    peak_kib = vww.peak_bytes / 1024
    ax = drawn(vww.plot(sram_limit=10 * vww.peak_bytes))
    assert peak_kib < ax.get_ylim()[1] <= 1.25 * peak_kib
    limit = by_gid(ax, "sram_limit")
    assert isinstance(limit, Annotation) and f"{10 * vww.peak_bytes:,} B" in limit.get_text()
    assert inside(extent(limit), ax.bbox)


def test_a_near_limit_is_a_line_on_the_axis(vww):
    limit = int(1.2 * vww.peak_bytes)
    ax = drawn(vww.plot(sram_limit=limit))
    assert ax.get_ylim()[1] >= limit / 1024
    assert not isinstance(by_gid(ax, "sram_limit"), Annotation)
    assert any(line.get_ydata()[0] == pytest.approx(limit / 1024) for line in ax.lines)


@pytest.mark.parametrize("mode, mark, legend", [("rows", "[ring", "ring buffer (row stream)"),
                                                ("patches", "[patch", "per-patch buffer")])
def test_tiled_chart_shades_segments_and_hatches_their_buffers(mode, mark, legend):
    best = tiling.search(real_model("vww_96_int8"), tiling=mode, max_mac_overhead=1.5).best
    assert best.segments
    ax = drawn(best.plot())
    step_of_op = {r.index: r.step for r in best.ops}
    spans = sorted(p.get_x() for p in ax.patches)
    assert spans == sorted(step_of_op[s.ops[0]] - 0.5 for s in best.segments)
    (hatched,) = [c for c in ax.collections[1:] if c.get_hatch()]
    assert len(hatched.get_paths()) == sum(mark in b.name for b in best.buffers) > 0
    assert len(ax.collections[0].get_paths()) == len(best.buffers)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend in texts and ("row-streamed segment" if mode == "rows" else "patch segment") in texts
    assert f"{len(best.segments)} tiled segment" in ax.title.get_text()


def test_untiled_chart_has_no_segments_or_hatching(vww):
    ax = drawn(vww.plot())
    assert not ax.patches and len(ax.collections) == 1
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {"activation", "scratch"}


def test_pareto_plot_marks_the_untiled_point():
    found = tiling.search(real_model("vww_96_int8"), tiling="auto", max_mac_overhead=1.3)
    ax = drawn(tiling.plot_pareto(found))
    (untiled,) = [line for line in ax.lines if line.get_gid() == "untiled"]
    assert list(untiled.get_xdata()) == [1.0]
    assert list(untiled.get_ydata()) == [found.untiled_peak_bytes / 1024]
    assert ax.get_ylim()[1] > found.untiled_peak_bytes / 1024 > max(p.peak_bytes for p in found.front) / 1024
    assert any(t.get_text().startswith("untiled") for t in ax.get_legend().get_texts())
    front = [line for line in ax.lines if line.get_gid() != "untiled"][0]
    assert list(front.get_ydata()) == [p.peak_bytes / 1024 for p in found.front]
