"""tinyarena as ExecuTorch's memory planner (the [executorch] extra), beside the default planner and
Cadence's two algorithms, on five networks exported here: the .pte of every plan runs in ExecuTorch's
portable runtime with outputs identical to the default plan's; tinyarena's plan is never larger, and
keeps no smaller share of the accessed bytes in the fastest memory."""


import pytest

pytestmark = pytest.mark.executorch

KIB, MIB = 1024, 1024 * 1024
ONE, THREE = [8 * MIB], [64 * KIB, 512 * KIB, 8 * MIB]
_EDGES = {}


def _edge(name, quantized=False):
    """(edge program, example input, default program, default outputs) of a model, made once per session."""
    import executorch_models as em

    if (name, quantized) not in _EDGES:
        edge, example = em.edge_program(name, quantized)
        default, _ = em.lower(edge, "default", [])
        _EDGES[name, quantized] = edge, example, default, em.run(default, example)
    return _EDGES[name, quantized]


def _plan_of(program, ours, sizes):
    from tinyarena.executorch import ExecuTorchPlan

    return ours.plan if ours else ExecuTorchPlan.from_graph_module(program.exported_program().graph_module,
                                                                   memory_sizes=sizes)


@pytest.mark.slow
@pytest.mark.parametrize("model, quantized", [(m, False) for m in ("mobilenetv2", "resnet18", "ds-cnn", "transformer",
                                                                    "unet")] + [("ds-cnn", True), ("unet", True)])
def test_every_plan_runs_identically_and_tinyarena_is_never_worse(model, quantized):
    import executorch_models as em
    import torch

    edge, example, default, reference = _edge(model, quantized)
    assert all(torch.equal(a, b) for a, b in zip(em.run(default, example), reference))
    for sizes in (ONE, THREE):
        results = {}
        for planner in ("cadence-position", "cadence-greedy", "tinyarena"):
            program, ours = em.lower(edge, planner, sizes)
            outputs = em.run(program, example)
            assert len(outputs) == len(reference)
            assert all(torch.equal(a, b) for a, b in zip(outputs, reference)), (model, sizes, planner)
            results[planner] = (em.buffer_sizes(program), _plan_of(program, ours, sizes))
        ours_sizes, ours_plan = results.pop("tinyarena")
        assert len(ours_sizes) == len(sizes) and all(s <= c for s, c in zip(ours_sizes, sizes))
        others = [sum(s) for s, _ in results.values()] + ([sum(em.buffer_sizes(default))] if sizes == ONE else [])
        assert sum(ours_sizes) <= min(others), (model, sizes, ours_sizes, others)
        assert ours_plan.fast_share >= max(p.fast_share for _, p in results.values()) - 1e-12
        if sizes == ONE:
            assert ours_sizes[0] >= ours_plan.lower_bounds[0] > 0


def test_a_memory_too_small_names_the_bytes_needed_and_available():
    import executorch_models as em
    from tinyarena.executorch import MemoryPlanning

    edge, *_ = _edge("ds-cnn")
    with pytest.raises(MemoryError, match=r"need at least \d+ bytes .*but it has 4096"):
        em.copy_lower(edge, MemoryPlanning([4096]))


def test_a_memory_of_exactly_the_optimum_fits_where_greedy_placement_does_not():
    import executorch_models as em
    from tinyarena.allocation import greedy_size_first_fit
    from tinyarena.executorch import MemoryPlanning

    edge, *_ = _edge("transformer")
    roomy = MemoryPlanning([MIB])
    em.copy_lower(edge, roomy)
    optimum = roomy.plan.heights[0]
    assert roomy.plan.proven_optimal == (True,)
    greedy = greedy_size_first_fit(_aligned_problem(roomy.plan.tensors)).height
    assert greedy > optimum  # the exact search is what makes it fit
    exact = MemoryPlanning([optimum])
    em.copy_lower(edge, exact)
    assert exact.plan.heights == (optimum,)
    with pytest.raises(MemoryError, match=f"but it has {optimum - 16}"):
        em.copy_lower(edge, MemoryPlanning([optimum - 16]))


def _aligned_problem(tensors, alignment=16):
    from tinyarena.allocation import Buffer, Problem

    return Problem([Buffer(t.size, t.first, t.last, alignment=alignment) for t in tensors])


def test_blocklists_and_relative_placements_are_honoured():
    import executorch_models as em
    from tinyarena.executorch import MemoryPlanning

    edge, *_ = _edge("transformer")
    probe = MemoryPlanning([MIB])
    em.copy_lower(edge, probe)
    tensors = sorted(probe.plan.tensors, key=lambda t: -t.size)
    big, small = tensors[0], next(t for t in tensors if t.last < tensors[0].first or t.first > tensors[0].last)
    ours = MemoryPlanning([256 * KIB, MIB], memory_names=["fast", "slow"], blocked={big.name: ["fast"]},
                          relative={small.name: (big.name, 64)})
    program = em.copy_lower(edge, ours)
    where = {t.name: t for t in ours.plan.tensors}
    assert where[big.name].memory == 1
    assert (where[small.name].memory, where[small.name].offset) == (1, where[big.name].offset + 64)
    specs = {n.name: n.meta["spec"] for n in program.exported_program().graph_module.graph.nodes if "spec" in n.meta}
    assert specs[big.name].mem_id == 2 and specs[small.name].mem_offset == specs[big.name].mem_offset + 64


def test_cadence_cat_constraints_place_the_operands_inside_the_output():
    # Cadence's opt level 2 turns outermost-dimension cats into no-ops (run only by Cadence's runtime):
    # each operand must then live inside the cat's output, at its offset there.
    import executorch_models as em
    from tinyarena.executorch import MemoryPlanning, cadence_constraints

    edge, *_ = _edge("unet")
    made = []
    generate = cadence_constraints(2)
    ours = MemoryPlanning([256 * KIB, 8 * MIB], constraints=lambda gm: made.append(generate(gm)) or made[-1])
    graph = em.copy_lower(edge, ours).exported_program().graph_module.graph
    placed = 0
    for node in graph.nodes:
        source = made[0].get_relative_placement_source(node)
        if source is None or "spec" not in node.meta:
            continue
        spec, parent = node.meta["spec"], source.source.meta["spec"]
        assert (spec.mem_id, spec.mem_offset) == (parent.mem_id, parent.mem_offset + source.offset), node.name
        placed += 1
    assert placed >= 6 and sum(str(n.target) == "aten._cat_nop.out" for n in graph.nodes) == 3


def test_report_and_chart_show_each_memory(tmp_path):
    import executorch_models as em
    from tinyarena.executorch import MemoryPlanning

    edge, *_ = _edge("unet")
    ours = MemoryPlanning(THREE, memory_names=["dtcm", "sram", "dram"])
    em.copy_lower(edge, ours)
    plan = ours.plan
    text = plan.table()
    assert "dtcm live B" in text and "dram live B" in text and "fastest memory's share" in text
    for m in range(3):
        live = plan.live_bytes(m)
        assert live.max(initial=0) <= plan.heights[m] <= THREE[m]
    assert sum(plan.live_bytes(0)) > 0
    figure = plan.plot(tmp_path / "plan.png")
    used = {t.memory for t in plan.tensors}
    assert len(figure.axes) >= len(used) and (tmp_path / "plan.png").stat().st_size > 10_000


@pytest.mark.slow  # exporting the program takes about 10 s
def test_a_1000_node_program_is_planned():
    """Its planning time is a benchmark figure (`executorch_planners.py --chain 230`), not a test's."""
    import executorch_models as em
    from tinyarena.executorch import MemoryPlanning

    edge, _ = em.chain_edge_program(ops=230)
    planning = MemoryPlanning(THREE)
    program = em.copy_lower(edge, planning)
    nodes = len(program.exported_program().graph_module.graph.nodes)
    assert nodes >= 1000 and len(planning.plan.tensors) >= 400
    for m in range(3):
        assert planning.plan.live_bytes(m).max(initial=0) <= planning.plan.heights[m] <= THREE[m]


def test_tinyarena_and_its_executorch_module_import_without_torch():
    import subprocess
    import sys

    code = "import sys, tinyarena, tinyarena.executorch; assert 'torch' not in sys.modules, 'torch imported'"
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
