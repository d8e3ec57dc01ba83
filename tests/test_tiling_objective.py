"""The tiling search's objective (tiling::Objective, ``objective=`` / ``--objective``): ``size``
(default) the smallest peak within the budgets, ``speed`` the fewest instructions predicted by the
cost model among the plans that fit the SRAM limit and the budgets."""

import json

import pytest

import tinyarena
from tinyarena import _core, cli, tiling

from real_models import REAL_MODELS_DIR as MODEL_DIR

VWW = MODEL_DIR / "vww_96_int8.tflite"


def between(path, **options):
    """An SRAM limit halfway between the smallest tiled peak and the untiled one."""
    size = tiling.search(path, **options).best
    untiled = tinyarena.plan(path).peak_bytes
    assert size.peak_bytes < untiled
    return (size.peak_bytes + untiled) // 2


@pytest.mark.parametrize("mode, budget", [("rows", 1.0), ("auto", 1.15)])
def test_speed_takes_fewer_predicted_instructions_than_size_within_the_limit(mode, budget):
    limit = between(VWW, tiling=mode, max_mac_overhead=budget)
    size = tiling.search(VWW, tiling=mode, max_mac_overhead=budget, sram=limit).best
    speed = tiling.search(VWW, tiling=mode, max_mac_overhead=budget, sram=limit, objective="speed").best
    assert size.peak_bytes <= limit and speed.peak_bytes <= limit  # both fit
    assert size.mac_overhead <= budget + 1e-12 and speed.mac_overhead <= budget + 1e-12
    assert speed.predicted_instructions < size.predicted_instructions
    assert speed.peak_bytes >= size.peak_bytes or speed.mac_overhead < size.mac_overhead


def test_speed_is_the_fewest_predicted_instructions_of_the_fitting_front():
    limit = between(VWW, tiling="auto", max_mac_overhead=1.15)
    found = tiling.search(VWW, tiling="auto", max_mac_overhead=1.15, sram=limit, objective="speed")
    fitting = [p.plan.predicted_instructions for p in found.front
               if p.peak_bytes <= limit and p.mac_overhead <= 1.15 + 1e-12]
    assert found.best.predicted_instructions == min(fitting)


def test_speed_respects_the_latency_budget_and_without_a_limit_takes_the_cheapest_plan():
    bounded = tiling.search(VWW, tiling="rows", objective="speed", max_latency_overhead=1.05).best
    assert bounded.latency_overhead <= 1.05
    free = tiling.search(VWW, tiling="rows", objective="speed")
    assert free.best.predicted_instructions == min(p.plan.predicted_instructions for p in free.front)


def test_speed_with_a_limit_the_untiled_plan_fits_takes_the_untiled_plan():
    untiled = tinyarena.plan(VWW)
    speed = tiling.search(VWW, tiling="auto", max_mac_overhead=1.15, sram=untiled.peak_bytes, objective="speed").best
    assert not speed.segments and speed.peak_bytes == untiled.peak_bytes
    assert speed.predicted_instructions == untiled.predicted_instructions
    size = tiling.search(VWW, tiling="auto", max_mac_overhead=1.15, sram=untiled.peak_bytes).best
    assert speed.predicted_instructions <= size.predicted_instructions


def test_speed_falls_back_to_the_smallest_peak_when_nothing_fits():
    size = tiling.search(VWW, tiling="rows", sram=1024).best
    speed = tiling.search(VWW, tiling="rows", sram=1024, objective="speed").best
    assert not speed.fits and speed.peak_bytes == size.peak_bytes


def test_the_objective_is_deterministic():
    limit = between(VWW, tiling="auto", max_mac_overhead=1.15)
    runs = [tiling.search(VWW, tiling="auto", max_mac_overhead=1.15, sram=limit, objective="speed").best
            for _ in range(2)]
    assert runs[0].segments == runs[1].segments
    assert runs[0].peak_bytes == runs[1].peak_bytes
    assert runs[0].predicted_instructions == runs[1].predicted_instructions


def test_size_is_the_default():
    default = tiling.search(VWW, tiling="rows").best
    size = tiling.search(VWW, tiling="rows", objective="size").best
    assert default.segments == size.segments and default.peak_bytes == size.peak_bytes


def test_unknown_objective_is_an_error():
    with pytest.raises(ValueError, match="unknown objective"):
        tiling.search(VWW, objective="latency")
    with pytest.raises(ValueError, match="objective must be 'size' or 'speed'"):
        _core.TilingSearchOptions(objective="latency")


def test_cli_objective(tmp_path, capsys):
    model = str(VWW)
    assert cli.main(["plan", model, "--objective", "speed"]) == 2
    assert "--objective applies to tiled schedules only" in capsys.readouterr().err
    limit = between(VWW, tiling="rows")
    out = {}
    for objective in ("size", "speed"):
        path = tmp_path / f"{objective}.json"
        assert cli.main(["plan", model, "--tiling", "rows", "--sram", str(limit), "--objective", objective,
                         "--json", str(path)]) == 0
        out[objective] = json.loads(path.read_text())
    assert out["speed"]["predicted_instructions"] < out["size"]["predicted_instructions"]
    assert max(out["speed"]["peak_bytes"], out["size"]["peak_bytes"]) <= limit
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        cli.main(["plan", model, "--tiling", "rows", "--objective", "fast"])
    assert exited.value.code == 2
    assert "invalid choice: 'fast'" in capsys.readouterr().err
