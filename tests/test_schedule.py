"""The schedule stage: reordering never loses to the file order, returns valid
topological orders, equals the brute-force optimum on small DAGs (in-place on
and off), and lowers the peak of branchy builder models."""

import pytest
import tinyarena
from real_models import REAL_MODEL_NAMES, real_model
from tinyarena import builder, schedule
from tinyarena.builder import ModelBuilder


def predecessors(graph):
    """For each op, the ops producing its inputs."""
    return [{graph.tensors[t].producer for t in op.inputs if t >= 0 and graph.tensors[t].producer >= 0}
            for op in graph.ops]


def assert_topological(graph, order):
    assert sorted(order) == list(range(len(graph.ops)))
    step = {op: i for i, op in enumerate(order)}
    for op, preds in enumerate(predecessors(graph)):
        assert all(step[p] < step[op] for p in preds), (order, op)


def topological_orders(graph, limit):
    """Every topological order (None when there are more than ``limit``)."""
    preds, orders, order = predecessors(graph), [], []

    def walk():
        if len(orders) > limit:
            return
        if len(order) == len(preds):
            orders.append(list(order))
            return
        for op in range(len(preds)):
            if op not in order and preds[op] <= set(order):
                order.append(op)
                walk()
                order.pop()

    walk()
    return orders if len(orders) <= limit else None


def check_schedule(graph, inplace=True, **options):
    result = schedule.find_schedule(graph, inplace=inplace, **options)
    assert_topological(graph, result.order)
    assert result.peak_bytes <= result.file_peak_bytes
    assert result.file_peak_bytes == schedule.order_peak_bytes(graph, inplace=inplace)
    assert result.peak_bytes == schedule.order_peak_bytes(graph, result.order, inplace=inplace)
    return result


@pytest.mark.parametrize("max_ops", [12, 20, 40])
def test_reordering_random_dags_is_valid_optimal_and_never_worse(max_ops):
    seeds = range(200) if max_ops == 40 else range(60)
    improved = 0
    for seed in seeds:
        graph = tinyarena.load_model(builder.random_dag(seed, max_ops=max_ops))
        for inplace in (True, False):
            result = check_schedule(graph, inplace)
            assert result.method == "exact" and result.proven_optimal, (seed, inplace, result)
            improved += result.peak_bytes < result.file_peak_bytes
    assert improved > len(seeds) // 4  # reordering matters on random branchy graphs


def test_exact_schedule_equals_brute_force_on_small_dags():
    compared = improvable = 0
    for max_ops in (10, 14, 18):
        for seed in range(60):
            graph = tinyarena.load_model(builder.random_dag(seed, max_ops=max_ops))
            orders = topological_orders(graph, limit=3000)
            if orders is None:
                continue
            for inplace in (True, False):
                peaks = [schedule.order_peak_bytes(graph, order, inplace=inplace) for order in orders]
                result = check_schedule(graph, inplace, method="exact")
                assert result.peak_bytes == min(peaks), (max_ops, seed, inplace)
                assert result.proven_optimal
                compared += 1
                improvable += min(peaks) < result.file_peak_bytes
    assert compared >= 300 and improvable >= 50


def test_greedy_beam_and_file_methods_and_budget_fallback():
    graph = tinyarena.load_model(builder.random_dag(12, max_ops=80))
    greedy = check_schedule(graph, method="greedy")
    assert greedy.method == "greedy" and not greedy.proven_optimal
    file = check_schedule(graph, method="file")
    assert file.method == "file" and file.order == tuple(range(len(graph.ops)))
    assert file.peak_bytes == file.file_peak_bytes
    small_budget = check_schedule(graph, max_states=10)  # exact, then beam, give up: greedy's order stays
    assert small_budget.method in ("beam", "local") and not small_budget.proven_optimal
    beam = check_schedule(graph, exact_max_ops=10, beam_width=4)
    assert beam.method in ("beam", "local") and not beam.proven_optimal
    assert beam.peak_bytes <= greedy.peak_bytes
    with pytest.raises(ValueError):
        schedule.find_schedule(graph, method="fastest")
    with pytest.raises(ValueError):
        schedule.find_schedule(graph, alignment=0)


def detection_model():
    """SSD-style: a backbone, then a box head on the stride-2 map and one on the
    stride-8 map, written after the backbone as converters do."""
    mb = ModelBuilder("two_heads", seed=3)
    x = mb.input([1, 64, 64, 3])
    f1 = mb.conv2d(x, 16, kernel=3, stride=2, activation="RELU6")
    f1 = mb.conv2d(mb.depthwise_conv2d(f1, 3, activation="RELU6"), 24, kernel=1, activation="RELU6")
    f2 = mb.conv2d(f1, 32, kernel=3, stride=2, activation="RELU6")
    f2 = mb.conv2d(mb.depthwise_conv2d(f2, 3, activation="RELU6"), 48, kernel=1, activation="RELU6")
    f3 = mb.conv2d(f2, 64, kernel=3, stride=2, activation="RELU6")
    heads = []
    for feature, size in ((f1, 32), (f3, 8)):
        h = mb.conv2d(feature, 12, kernel=3, activation="RELU")
        heads.append(mb.reshape(mb.conv2d(h, 6, kernel=1), [1, size * size, 6]))
    mb.output(*heads)
    return mb.build()


def inception_model():
    """Three branches of different sizes joined by a concatenation; the file
    starts every branch before finishing any (as some converters do)."""
    mb = ModelBuilder("three_branches", seed=4)
    x = mb.input([1, 32, 32, 8])
    b1 = mb.conv2d(x, 16, kernel=1, activation="RELU")
    b2 = mb.conv2d(x, 24, kernel=3, activation="RELU")
    b3 = mb.average_pool2d(x, 2)
    b1 = mb.max_pool2d(b1, 2)
    b2 = mb.depthwise_conv2d(b2, 3, stride=2, activation="RELU")
    b3 = mb.conv2d(b3, 8, kernel=1, activation="RELU")
    b2 = mb.conv2d(b2, 8, kernel=1, activation="RELU")
    mb.output(mb.concatenation([b1, b2, b3], axis=3))
    return mb.build()


@pytest.mark.parametrize("name, build", [("two_heads", detection_model), ("three_branches", inception_model)])
@pytest.mark.parametrize("inplace", [True, False])
def test_reordering_lowers_the_peak_of_branchy_models(name, build, inplace):
    graph = tinyarena.load_model(build())
    result = check_schedule(graph, inplace)
    print(f"{name} inplace={inplace}: file order {result.file_peak_bytes} B -> reordered {result.peak_bytes} B "
          f"({result.method}, optimal={result.proven_optimal}, {result.states} states)")
    assert result.proven_optimal
    assert result.peak_bytes < result.file_peak_bytes
    orders = topological_orders(graph, limit=5000)  # the heads end in RESHAPE views
    assert result.peak_bytes == min(schedule.order_peak_bytes(graph, order, inplace=inplace) for order in orders)


def test_plan_reorder_plans_the_order_found():
    data = detection_model()
    reordered = tinyarena.plan(data, reorder=True)
    found = reordered.schedule
    assert found is not None and tinyarena.plan(data, transforms=()).schedule is None
    assert tinyarena.plan(data).schedule.order == found.order  # the default transforms reorder too
    assert [row.index for row in reordered.ops] == list(found.order)
    assert [row.step for row in reordered.ops] == list(range(len(found.order)))
    assert reordered.lower_bound_bytes == found.peak_bytes < found.file_peak_bytes
    assert reordered.peak_bytes < tinyarena.plan(data, transforms=()).peak_bytes
    assert reordered.validate() == []
    assert tinyarena.plan(data, reorder=True, inplace=False, alignment=1).schedule.file_peak_bytes == \
        schedule.order_peak_bytes(data, inplace=False, alignment=1)
    with pytest.raises(ValueError):
        tinyarena.plan(data, reorder=True, order=list(found.order))


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_real_models_reorder_within_their_file_peak(name):
    result = check_schedule(tinyarena.load_model(real_model(name)))
    assert result.proven_optimal


def test_mobilenet_v2_reorders_exactly():
    result = check_schedule(tinyarena.load_model(builder.mobilenet_v2(0.35, 144)))
    assert result.proven_optimal


def unrolled_lstm(steps=49, features=16, units=32, seed=5, slicing="strided_slice"):
    """An unrolled LSTM in a converter's order: the input [1, steps, features] is cut into
    steps (one STRIDED_SLICE each, or with ``slicing="split"`` one SPLIT, as UNPACK does) and
    all ``steps`` input projections (FULLY_CONNECTED) are computed before the recurrent chain
    (FULLY_CONNECTED on h, ADD, SPLIT into gates, LOGISTIC/TANH, MUL, ADD). Returns the model
    and, per time step, its op indices (slice, projection, chain; a SPLIT counts to step 0)."""
    mb = ModelBuilder("unrolled_lstm", seed=seed)
    x = mb.input([1, steps, features])
    per_step = [[] for _ in range(steps)]

    def emit(t, make):
        first = mb.num_operators
        out = make()
        per_step[t].extend(range(first, mb.num_operators))
        return out

    if slicing == "split":
        xs = emit(0, lambda: mb.split(x, steps, axis=1))
    else:
        xs = [emit(t, lambda t=t: mb.strided_slice(x, [0, t, 0], [1, t + 1, features], shrink_axis_mask=2))
              for t in range(steps)]
    projections = [emit(t, lambda t=t: mb.fully_connected(xs[t], 4 * units)) for t in range(steps)]
    h = c = None
    for t in range(steps):
        def cell(h=h, c=c, t=t):
            z = projections[t] if h is None else mb.add(projections[t], mb.fully_connected(h, 4 * units))
            i, f, g, o = mb.split(z, 4, axis=1)
            i, f, g, o = mb.logistic(i), mb.logistic(f), mb.tanh(g), mb.logistic(o)
            c = mb.mul(i, g) if c is None else mb.add(mb.mul(f, c), mb.mul(i, g))
            return mb.mul(o, mb.tanh(c)), c
        h, c = emit(t, cell)
    mb.output(h)
    return mb.build(), per_step


@pytest.mark.parametrize("slicing", ["strided_slice", "split"])
def test_reordering_brings_an_unrolled_lstm_down_to_one_time_step(slicing):
    data, per_step = unrolled_lstm(slicing=slicing)
    graph = tinyarena.load_model(data)
    assert len(graph.ops) > 600
    step_order = [op for ops in per_step for op in ops]  # each step's slice and projection just in time
    assert_topological(graph, step_order)
    one_step = schedule.order_peak_bytes(graph, step_order)  # the largest time step's live bytes
    result = check_schedule(graph)
    assert result.file_peak_bytes > 3 * one_step  # the converter's order holds every projection at once
    assert result.peak_bytes <= 1.10 * one_step, (result.peak_bytes, one_step, result.method)
    planned = tinyarena.plan(data, reorder=True)
    assert planned.peak_bytes <= 1.10 * one_step
    assert planned.validate() == []


@pytest.mark.parametrize("max_ops", [400, 1000])
def test_reordering_large_random_dags_is_valid_and_never_worse(max_ops):
    improved = 0
    for seed in range(6):
        graph = tinyarena.load_model(builder.random_dag(seed, max_ops=max_ops))
        result = check_schedule(graph)
        # the heuristics, or the exact search when it finishes within its budget (a proof)
        assert result.method in ("beam", "local", "greedy") or (result.method == "exact" and result.proven_optimal)
        again = schedule.find_schedule(graph)  # deterministic
        assert again.order == result.order and again.peak_bytes == result.peak_bytes
        improved += result.peak_bytes < result.file_peak_bytes
    assert improved >= 3


def test_local_method_moves_and_windows_only():
    graph = tinyarena.load_model(builder.random_dag(3, max_ops=300))
    local = check_schedule(graph, method="local")
    greedy = check_schedule(graph, method="greedy")
    assert local.method in ("local", "greedy") and not local.proven_optimal
    assert local.peak_bytes <= greedy.peak_bytes
