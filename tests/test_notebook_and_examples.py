"""The notebook runs top to bottom and the examples run, as a user would run them."""

import pytest
import subprocess
import sys

from real_models import REPO, real_model


@pytest.mark.slow
def test_walkthrough_notebook_runs_top_to_bottom():
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(REPO / "notebooks" / "walkthrough.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the chart rendered inline
    assert any("peak SRAM" in o.get("text", "") for o in outputs)


def test_examples_run(tmp_path):
    plan = subprocess.run([sys.executable, str(REPO / "examples" / "plan_model.py"), str(real_model("kws_ref_model")),
                           "64K"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert plan.returncode == 0, plan.stderr
    assert (tmp_path / "allocation.png").exists() and (tmp_path / "plan.json").exists()
    compare = subprocess.run([sys.executable, str(REPO / "examples" / "compare_allocators.py"),
                              str(real_model("vww_96_int8"))], capture_output=True, text=True, timeout=300)
    assert compare.returncode == 0, compare.stderr
    assert "73,728" in compare.stdout  # TFLM's rule without in-place on vww


@pytest.mark.slow
def test_tiling_notebook_runs_top_to_bottom():
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(REPO / "notebooks" / "tiling.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    assert any("bit-exact on host" in o.get("text", "") for o in outputs)
    first = "".join(o.get("text", "") for o in nb.cells[1].outputs)
    assert first.startswith("untiled: peak ") and all(line.strip() for line in first.splitlines())
    printed = "".join(o.get("text", "") for o in outputs)
    assert "<ParetoPoint peak " in printed and "object at 0x" not in printed
