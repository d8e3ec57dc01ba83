"""Random int8 DAGs for property tests of liveness analysis, planning and operator reordering.

``random_dag(seed, max_ops)`` grows a graph from one or two NHWC inputs. Each step applies a
random op to a random tensor, preferring tensors nobody reads yet, so the graph gets branches
(a tensor read twice, SPLIT) and joins (ADD, MUL, CONCATENATION, squeeze-excite style
broadcasts). Every tensor that ends up unread becomes a model output, so models sometimes have
several outputs; some end in a FULLY_CONNECTED + SOFTMAX head or a float DEQUANTIZE, and some
start from a float input with QUANTIZE. All parameters are chosen valid by construction.
"""

from typing import Callable, Dict, List

import numpy as np

from .args import positive_int
from .model_builder import ModelBuilder
from .tensor import Tensor

_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
_MAX_CHANNELS = 24
_MAX_SIDE = 16
_STEP_COST = 4
"""Most ops one growth step can add (a 3-way CONCATENATION with requantizing QUANTIZEs)."""
_TAIL_COST = 3
"""Ops kept in reserve for the optional output heads."""
_MIN_OPS = 6


class _Dag:
    """The builder plus the bookkeeping of which tensors are still unread (the leaves)."""

    def __init__(self, mb: ModelBuilder, rng: np.random.Generator, max_ops: int):
        self.mb = mb
        self.rng = rng
        self.max_ops = max_ops
        self.tensors: List[Tensor] = []
        self.leaves: Dict[int, Tensor] = {}

    def produce(self, *tensors: Tensor) -> None:
        for t in tensors:
            self.tensors.append(t)
            self.leaves[t.index] = t

    def consume(self, *tensors: Tensor) -> None:
        for t in tensors:
            self.leaves.pop(t.index, None)

    def pick(self) -> Tensor:
        """A rank-4 operand: usually an unread tensor, sometimes any (which makes a branch)."""
        leaves = [t for t in self.leaves.values() if t.rank == 4]
        pool = leaves if leaves and self.rng.random() < 0.85 else [t for t in self.tensors if t.rank == 4]
        return pool[int(self.rng.integers(len(pool)))]

    def choice(self, options):
        return options[int(self.rng.integers(len(options)))]

    def activation(self) -> str:
        return self.choice(_ACTIVATIONS)


def _conv(dag: _Dag, x: Tensor) -> List[Tensor]:
    kernel = dag.choice((1, 3))
    small = min(x.shape[1:3]) < 3
    padding = "SAME" if small or dag.rng.random() < 0.7 else "VALID"
    stride = 2 if min(x.shape[1:3]) >= 6 and dag.rng.random() < 0.3 else 1
    filters = int(dag.rng.integers(1, _MAX_CHANNELS // 2 + 1))
    return [dag.mb.conv2d(x, filters, kernel, stride, padding, activation=dag.activation())]


def _depthwise(dag: _Dag, x: Tensor) -> List[Tensor]:
    multiplier = 2 if x.shape[3] * 2 <= _MAX_CHANNELS and dag.rng.random() < 0.3 else 1
    stride = 2 if min(x.shape[1:3]) >= 6 and dag.rng.random() < 0.3 else 1
    dilation = 2 if min(x.shape[1:3]) >= 5 and dag.rng.random() < 0.2 else 1
    return [dag.mb.depthwise_conv2d(x, 3, stride, "SAME", multiplier, dilation, dag.activation())]


def _pool(dag: _Dag, x: Tensor) -> List[Tensor]:
    pool = dag.mb.max_pool2d if dag.rng.random() < 0.5 else dag.mb.average_pool2d
    if min(x.shape[1:3]) >= 4:
        return [pool(x, 2)]
    return [pool(x, 2, stride=1, padding="SAME")]


def _elementwise(dag: _Dag, x: Tensor) -> List[Tensor]:
    mb = dag.mb
    op = dag.choice((mb.relu, mb.relu6, mb.logistic, mb.tanh, mb.hard_swish))
    return [op(x)]


def _reshape_like(dag: _Dag, x: Tensor) -> List[Tensor]:
    """A layout op that keeps rank 4: PAD, RESIZE, STRIDED_SLICE or a TRANSPOSE of H and W."""
    mb, (_, h, w, _) = dag.mb, x.shape
    kind = dag.rng.integers(4)
    if kind == 0 and max(h, w) < _MAX_SIDE - 2:
        before, after = (int(v) for v in dag.rng.integers(0, 2, size=2))
        return [mb.pad(x, [[0, 0], [before, after], [after, before], [0, 0]])]
    if kind == 1 and max(h, w) <= _MAX_SIDE // 2:
        return [mb.resize_nearest_neighbor(x, (2 * h, 2 * w), half_pixel_centers=bool(dag.rng.random() < 0.5))]
    if kind == 2 and min(h, w) >= 3:
        return [mb.strided_slice(x, [0, 1, 0, 0], [1, h, w - 1, x.shape[3]], [1, 1, dag.choice((1, 2)), 1])]
    return [mb.transpose(x, [0, 2, 1, 3])]


def _split(dag: _Dag, x: Tensor) -> List[Tensor]:
    if x.shape[3] % 2 == 0:
        return dag.mb.split(x, 2, axis=3)
    if x.shape[1] % 2 == 0:
        return dag.mb.split(x, 2, axis=1)
    return _conv(dag, x)


def _squeeze_excite(dag: _Dag, x: Tensor) -> List[Tensor]:
    """x * logistic(mean(x)): a MUL with a [1, 1, 1, C] broadcast operand."""
    mb = dag.mb
    gate = mb.logistic(mb.mean(x, axes=(1, 2), keep_dims=True))
    return [mb.mul(x, gate)]


def _partner(dag: _Dag, x: Tensor, same_channels: bool) -> List[Tensor]:
    """Other tensors of the same height/width (and channels if asked), unread ones first."""

    def fits(t: Tensor) -> bool:
        return (
            t.index != x.index
            and t.rank == 4
            and t.shape[:3] == x.shape[:3]
            and (not same_channels or t.shape == x.shape)
        )

    leaves = [t for t in dag.leaves.values() if fits(t)]
    return leaves or [t for t in dag.tensors if fits(t)]


def _add_or_mul(dag: _Dag, x: Tensor) -> List[Tensor]:
    partners = _partner(dag, x, same_channels=True)
    if not partners:
        partners = _partner(dag, x, same_channels=False)
        if not partners:
            return _conv(dag, x)
        source = dag.choice(partners)
        dag.consume(source)
        partners = [dag.mb.conv2d(source, x.shape[3], kernel=1)]
    other = dag.choice(partners)
    dag.consume(other)
    op = dag.mb.add if dag.rng.random() < 0.75 else dag.mb.mul
    return [op(x, other, activation=dag.choice(("NONE", "RELU", "RELU6")))]


def _concat(dag: _Dag, x: Tensor) -> List[Tensor]:
    partners = [t for t in _partner(dag, x, same_channels=False) if t.shape[3] + x.shape[3] <= _MAX_CHANNELS]
    if not partners:
        return _split(dag, x)
    others = [dag.choice(partners)]
    rest = [
        t
        for t in partners
        if t.index != others[0].index and t.shape[3] + others[0].shape[3] + x.shape[3] <= _MAX_CHANNELS
    ]
    if rest and dag.rng.random() < 0.3:
        others.append(dag.choice(rest))
    dag.consume(*others)
    return [dag.mb.concatenation([x] + others, axis=3)]


_GROWTH_STEPS = (
    (_conv, 4),
    (_depthwise, 3),
    (_pool, 1),
    (_elementwise, 2),
    (_reshape_like, 2),
    (_split, 1),
    (_squeeze_excite, 1),
    (_add_or_mul, 3),
    (_concat, 2),
)


def _grow(dag: _Dag, step: Callable[[_Dag, Tensor], List[Tensor]]) -> None:
    x = dag.pick()
    outs = step(dag, x)
    dag.consume(x)
    dag.produce(*outs)


def _inputs(dag: _Dag) -> None:
    """One or two inputs (sometimes float32 + QUANTIZE), each read by a first conv."""
    mb, rng = dag.mb, dag.rng
    h, w = (int(v) for v in rng.integers(3, 13, size=2))
    for i in range(1 if rng.random() < 0.75 else 2):
        channels = int(rng.integers(1, 9))
        if rng.random() < 0.15:
            x = mb.quantize(mb.input([1, h, w, channels], dtype="float32", name=f"input_{i}"))
        else:
            x = mb.input(
                [1, h, w, channels],
                scale=float(rng.uniform(0.005, 0.05)),
                zero_point=int(rng.integers(-20, 21)),
                name=f"input_{i}",
            )
        dag.produce(*_conv(dag, x))


def _heads(dag: _Dag) -> List[Tensor]:
    """The unread tensors, some finished with an FC + SOFTMAX or a DEQUANTIZE."""
    mb, outputs = dag.mb, []
    for t in list(dag.leaves.values()):
        roll = dag.rng.random()
        if roll < 0.2 and mb.num_operators + _TAIL_COST <= dag.max_ops:
            t = mb.softmax(mb.fully_connected(t, int(dag.rng.integers(2, 11))))
        elif roll < 0.3 and mb.num_operators + 1 <= dag.max_ops:
            t = mb.dequantize(t)
        outputs.append(t)
    return outputs


def random_dag(seed: int, max_ops: int = 40) -> bytes:
    """A random valid int8 model of at most ``max_ops`` ops (at least a few), as ``.tflite`` bytes."""
    max_ops = positive_int(max_ops, "max_ops")
    if max_ops < _MIN_OPS:
        raise ValueError(f"max_ops must be at least {_MIN_OPS}, got {max_ops}")
    rng = np.random.default_rng([seed, 0x7A11])
    dag = _Dag(ModelBuilder(f"random_dag_{seed}", seed), rng, max_ops)
    _inputs(dag)
    target = int(rng.integers(min(max_ops, 2 * _MIN_OPS), max_ops + 1)) - _TAIL_COST
    steps, weights = zip(*_GROWTH_STEPS)
    probabilities = np.array(weights, float) / sum(weights)
    while dag.mb.num_operators + _STEP_COST <= target:
        _grow(dag, steps[int(rng.choice(len(steps), p=probabilities))])
    dag.mb.output(*_heads(dag))
    return dag.mb.build()
