"""Random DAGs: always valid, varied in shape, and reproducible."""

from collections import Counter

import pytest
from ai_edge_litert import schema_py_generated as schema
from builder_test_support import load
from tinyarena import builder

SEEDS = range(60)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_dag_loads_and_runs(seed, run_model):
    model = builder.random_dag(seed, max_ops=40)
    interpreter = load(model)
    assert 1 <= len(interpreter._get_ops_details()) <= 40
    outputs, details = run_model(model, seed=seed)
    assert len(outputs) == len(details) >= 1
    for out, detail in zip(outputs, details):
        assert out.shape == tuple(detail["shape"])


def _graph(seed, max_ops=40):
    return schema.ModelT.InitFromPackedBuf(builder.random_dag(seed, max_ops), 0).subgraphs[0]


def test_random_dags_have_branches_joins_and_several_inputs_or_outputs():
    joins = branches = multi_input = multi_output = 0
    for seed in SEEDS:
        graph = _graph(seed)
        ops = graph.operators
        readers = Counter(i for op in ops for i in op.inputs)
        produced = {i for op in ops for i in op.outputs}
        branches += any(readers[t] > 1 for t in produced)
        activation_inputs = [[i for i in op.inputs if i in produced or i in graph.inputs] for op in ops]
        joins += any(len(inputs) > 1 for inputs in activation_inputs)
        multi_input += len(graph.inputs) > 1
        multi_output += len(graph.outputs) > 1
    assert branches > 30 and joins > 30
    assert 5 <= multi_input < 55 and 10 <= multi_output < 58


def test_random_dag_op_budget_is_respected():
    for max_ops in (6, 10, 25):
        for seed in range(10):
            assert len(_graph(seed, max_ops).operators) <= max_ops


def test_random_dag_is_deterministic_per_seed():
    assert builder.random_dag(7) == builder.random_dag(7)
    assert builder.random_dag(7) != builder.random_dag(8)


def test_random_dag_op_variety():
    names = Counter()
    for seed in range(30):
        names.update(op["op_name"] for op in load(builder.random_dag(seed))._get_ops_details())
    expected = {"CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "CONCATENATION", "MUL", "SPLIT", "MEAN", "LOGISTIC"}
    assert expected <= set(names)
    assert len(names) >= 15


def test_random_dag_rejects_tiny_budget():
    with pytest.raises(ValueError):
        builder.random_dag(0, max_ops=2)
