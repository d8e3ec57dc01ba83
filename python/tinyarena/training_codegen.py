"""On-device training code: compile a training step, run it, check it against a float64 reference.

``compile_training(model, out_dir, spec)`` plans one training step (``tinyarena.training``) and
writes C whose ``model.c`` holds, beside ``tinyarena_<name>_invoke``,

- ``void tinyarena_<name>_train_init(void)``: the trainable tensors (weights and biases ``spec``
  updates) copied from flash into their SRAM buffers in the arena (invoke and train_step do it on
  their first call; calling it again undoes every update);
- ``float tinyarena_<name>_train_step(const int8_t *input, int32_t label, float learning_rate)``:
  the int8 forward ops, the softmax cross-entropy gradient, int8 backward kernels with int32
  accumulation and a run-time per-tensor gradient scale, the SGD update of the trainable tensors
  (QAS scaling); returns the loss. Formats: ``cpp/kernels/include/tinyarena_training.h``.

``layers:I@FRACTION`` updates the weights of the first ceil(FRACTION * C_out) output channels of
CONV_2D / FULLY_CONNECTED layers (their SRAM copy holds those channels only; the forward call runs
over the two channel ranges, the backward reads the other channels from flash) and every bias.
With ``reorder_updates=False`` each whole int32 weight gradient is computed first and every update
applied after the backward pass, with the same arithmetic as the default order (each weight
gradient computed and applied one output channel at a time): the updated parameters are the same.

Its ``main.c`` trains on a data set read from files (:func:`run_training`). The build uses the
portable kernels (``-DTA_NO_SIMD``), which read the trainable SRAM copies.

:func:`verify_training` runs one step built with tracing and compares every gradient and updated
parameter with ``tinyarena.training_reference`` (float64): for each tensor the relative error
``max |generated - reference| / max |reference|``. A gradient passes within
``gradient_tolerance(k) = min(GRADIENT_TOLERANCE + k * REQUANTIZATION_TOLERANCE, MAX_GRADIENT_TOLERANCE)``
(2% + 1.5% per int8 requantization of an input gradient between the loss and it, at most 40%: int8
gradients lose precision with depth); an updated parameter when its error beyond half a unit (the rounding of the step), in real
units, relative to the largest reference change, is within its gradient's tolerance.
"""

import pathlib
import tempfile
from dataclasses import dataclass, field

import numpy as np

from .codegen import TARGETS, compile
from .reader import load_model
from .training import plan_training, training_graph
from .training_reference import reference_step
from .verify import build, reference_interpreter, run_program

__all__ = [
    "GRADIENT_TOLERANCE",
    "MAX_GRADIENT_TOLERANCE",
    "REQUANTIZATION_TOLERANCE",
    "TrainingCheck",
    "TrainingRun",
    "compile_training",
    "gradient_tolerance",
    "left_right_task",
    "run_training",
    "verify_training",
]

# A gradient's tolerance (max |error| / max |reference|): GRADIENT_TOLERANCE, plus
# REQUANTIZATION_TOLERANCE per int8 requantization of an input gradient between the loss and it, at
# most MAX_GRADIENT_TOLERANCE. Each requantization rounds by at most half a step (a step is at most
# 1/64 of the tensor's largest value), and the next layers carry that error on, relative to their
# own largest values: over seeds 0-5 under `bias` and `last:2`, at most 2.5% on a 3-layer CNN,
# 28% on MobileNetV1 (vww_96_int8, 27 requantizations) and 33% on MobileNetV2 (benchmarks/README.md);
# an indexing or scale error shows as 50% and more.
GRADIENT_TOLERANCE = 0.02
REQUANTIZATION_TOLERANCE = 0.015
MAX_GRADIENT_TOLERANCE = 0.4
_WEIGHT_LAYERS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


def left_right_task(samples=64, seed=0):
    """A linearly separable synthetic task on 8x8x1 int8 images: label 1 when the left half is
    bright (+60) and the right dark (-60), 0 for the mirror image, plus Gaussian noise (sigma 25),
    clipped to int8. Returns (images [samples, 8, 8] int8, labels [samples]), alternating labels."""
    rng = np.random.default_rng(seed)
    labels = np.arange(samples) % 2
    sign = np.where(labels == 1, 60.0, -60.0)[:, None, None]
    images = np.zeros((samples, 8, 8))
    images[:, :, :4] += sign
    images[:, :, 4:] -= sign
    return np.clip(images + rng.normal(0, 25, images.shape), -128, 127).astype(np.int8), labels


def compile_training(model, out_dir, spec, target="cortex-m4", name="model", **plan_options):
    """Plan one training step of ``model`` updating ``spec`` and write its C into ``out_dir``
    (``plan_options`` as for ``tinyarena.training.plan_training``); returns the ``CompiledModel``."""
    plan = plan_training(model, spec, **plan_options)
    return compile(plan, out_dir, target=target, name=name)


@dataclass
class TrainingRun:
    """What the training harness wrote."""

    losses: np.ndarray         # one float per step
    scores_before: np.ndarray  # [samples, classes] int8, invoke before training
    scores_after: np.ndarray
    trace: list = field(default_factory=list)  # (kind, value, channel, scale, bytes) per record (trace builds)

    def accuracy(self, labels, after=True):
        scores = self.scores_after if after else self.scores_before
        return float(np.mean(np.argmax(scores, axis=1) == np.asarray(labels)))


def _read_trace(path):
    data, records, pos = path.read_bytes(), [], 0
    while pos + 20 <= len(data):
        kind, value, channel, size = (int(v) for v in np.frombuffer(data[pos:pos + 16], np.int32))
        scale = float(np.frombuffer(data[pos + 16:pos + 20], np.float32)[0])
        records.append((kind, value, channel, scale, data[pos + 20:pos + 20 + size]))
        pos += 20 + size
    return records


def run_training(out_dir, target, inputs, labels, steps, learning_rate, trace=False):
    """Build the compiled training program in ``out_dir`` for ``target`` (``host`` or a Cortex-M
    under QEMU), train ``steps`` steps on ``inputs`` (int8, one row per sample; step i uses sample
    i % samples) and return a :class:`TrainingRun`."""
    out_dir = pathlib.Path(out_dir).resolve()  # the harness runs in it
    inputs = np.ascontiguousarray(inputs, dtype=np.int8).reshape(len(labels), -1)
    config = np.array([len(labels), steps], np.int32).tobytes() + np.float32(learning_rate).tobytes()
    (out_dir / "train_config.bin").write_bytes(config)
    (out_dir / "train_inputs.bin").write_bytes(inputs.tobytes())
    (out_dir / "train_labels.bin").write_bytes(np.asarray(labels, np.int32).tobytes())
    run_program(build(out_dir, target, trace=trace), target)
    scores = [np.frombuffer((out_dir / f"scores_{w}.bin").read_bytes(), np.int8).reshape(len(labels), -1)
              for w in ("before", "after")]
    losses = np.frombuffer((out_dir / "losses.bin").read_bytes(), np.float32)
    return TrainingRun(losses, *scores, _read_trace(out_dir / "train_trace.bin") if trace else [])


@dataclass
class TensorError:
    what: str            # "grad <tensor name>", "grad weights op 3", "updated bias op 3", ...
    relative_error: float
    tolerance: float

    @property
    def ok(self):
        return self.relative_error <= self.tolerance


@dataclass
class TrainingCheck:
    """One step of the generated code against the float64 reference."""

    target: str
    spec: str
    loss: float
    reference_loss: float
    errors: list  # TensorError per gradient and updated parameter

    @property
    def ok(self):
        return all(e.ok for e in self.errors)

    def table(self):
        lines = [(f"training step on {self.target}, spec {self.spec}: loss {self.loss:.6f} "
                  f"(reference {self.reference_loss:.6f})"),
                 f"{'tensor':44s} {'max rel. error':>14s} {'tolerance':>10s}"]
        lines += [f"{_short(e.what):44s} {e.relative_error:14.4%} {e.tolerance:10.2%}{'' if e.ok else '  FAIL'}"
                  for e in self.errors]
        lines.append("all within tolerance" if self.ok else "SOME TENSORS ARE OUT OF TOLERANCE")
        return "\n".join(lines)


def _short(name, width=44):
    """``name`` cut in the middle to ``width`` characters (converter tensor names run long)."""
    return name if len(name) <= width else name[:14] + "..." + name[-(width - 17):]


def _relative_error(generated, reference):
    reference = np.asarray(reference, np.float64).reshape(-1)
    generated = np.asarray(generated, np.float64).reshape(-1)
    return float(np.max(np.abs(generated - reference)) / max(np.max(np.abs(reference)), 1e-30))


def _forward_values(model_bytes, graph, sample):
    interpreter = reference_interpreter(model_bytes)
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], sample.reshape(graph.tensors[graph.inputs[0]].shape))
    interpreter.invoke()
    return {t: interpreter.get_tensor(t) for t in range(len(graph.tensors)) if not graph.tensors[t].is_constant
            and graph.tensors[t].producer >= 0 or t in graph.inputs}


def gradient_tolerance(requantizations):
    """The tolerance of a gradient ``requantizations`` int8 input-gradient requantizations below the loss."""
    return min(GRADIENT_TOLERANCE + REQUANTIZATION_TOLERANCE * requantizations, MAX_GRADIENT_TOLERANCE)


def _update_error(after, before, expected, unit):
    """An updated parameter's error in real units beyond the half-unit rounding of its step, relative
    to the largest reference change (real units: a channel with a tiny weight scale counts as little
    as its real change)."""
    excess = np.maximum(np.abs(after - expected) - 0.5, 0.0) * unit
    return float(np.max(excess) / max(np.max(np.abs(expected - before) * unit), 1e-30))


def _compare(graph, core, records, ref):
    """TensorErrors of the traced gradients (in trace order: from the loss down) and updated
    trainables against the reference."""
    values, errors, weight_grads = core.values, [], {}
    param_depth = {}  # weight/bias tensor -> requantizations above its gradient
    requantized = {s.writes[0] for s in core.backward
                   if s.math == "input_grad" and graph.ops[s.op].type in _WEIGHT_LAYERS}
    summed = {v for s in core.backward if s.math == "grad_sum" for v in s.reads}  # checked as their sum
    # the activation gradient a parameter gradient reads: bias gradient value / trainable weights -> gy
    reads_gradient = {s.writes[0]: s.reads[0] for s in core.backward if s.math == "bias_grad"}
    reads_gradient.update({s.reads[1]: s.reads[0] for s in core.channel_updates})
    depth, value_depth = 0, {}  # input-gradient requantizations traced so far; at each activation gradient
    for kind, v, channel, scale, data in records:
        value = values[v]
        if kind == 0:
            depth += v in requantized
            value_depth[v] = depth
        else:
            depth_here = value_depth.get(reads_gradient.get(v), depth)
        if kind == 0 and v in summed:
            continue
        if kind == 0:
            q = np.frombuffer(data, np.int8).astype(np.float64) * scale
            producer = graph.tensors[value.tensor].producer
            expected = ref.pre_activation[producer] if value.name.endswith(" masked") else ref.grads[value.tensor]
            errors.append(TensorError(value.name, _relative_error(q, expected), gradient_tolerance(depth)))
        elif kind == 1:
            param_depth[value.tensor] = depth_here
            grads = weight_grads.setdefault(v, [depth_here, {}])[1]
            grads[channel] = np.frombuffer(data, np.int32).astype(np.float64) * scale
        elif kind == 2:
            g = np.frombuffer(data, np.int32).astype(np.float64) * scale
            param_depth[value.tensor] = depth_here
            errors.append(TensorError(value.name, _relative_error(g, ref.params[value.tensor]),
                                      gradient_tolerance(depth_here)))
        else:
            tensor = value.tensor
            after = np.frombuffer(data, np.int8 if graph.tensors[tensor].dtype == "int8" else np.int32)
            expected = ref.updated[tensor]  # the updated output channels: all, or the first C
            before = np.asarray(graph.tensors[tensor].data, np.float64)[:expected.shape[0]].reshape(-1)
            error = _update_error(after.astype(np.float64), before, expected.reshape(-1),
                                  ref.units[tensor].reshape(-1))
            errors.append(TensorError("updated " + value.name.replace("trainable ", ""), error,
                                      gradient_tolerance(param_depth[tensor])))
    for v, (at_depth, channels) in weight_grads.items():
        ref_w = ref.params[values[v].tensor]
        depthwise = ref_w.shape[0] == 1 and ref_w.ndim == 4  # [1][kh][kw][out_c]: channel last
        expected = np.stack([ref_w[..., c] if depthwise else ref_w[c] for c in sorted(channels)])
        generated = np.stack([channels[c] for c in sorted(channels)])
        errors.append(TensorError("grad " + values[v].name.replace("trainable ", ""),
                                  _relative_error(generated, expected.reshape(generated.shape)),
                                  gradient_tolerance(at_depth)))
    return errors


def verify_training(model, spec, target="host", learning_rate=0.01, seed=0, work_dir=None, **plan_options):
    """Compile ``model``'s training step for ``spec`` (``plan_options`` as for
    ``tinyarena.training.plan_training``, e.g. ``reorder_updates=False``), run one step on a random
    int8 input and label (``seed``) on ``target`` and compare every gradient and updated parameter
    with the float64 reference. Returns a :class:`TrainingCheck` (``.ok``, ``.table()``)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}: use one of {', '.join(TARGETS)}")
    graph = load_model(model)
    core = training_graph(graph, spec)
    rng = np.random.default_rng(seed)
    input_tensor = graph.tensors[graph.inputs[0]]
    sample = rng.integers(-128, 128, input_tensor.element_count, dtype=np.int8)
    label = int(rng.integers(0, graph.tensors[core.loss_tensor].shape[-1]))
    with tempfile.TemporaryDirectory(prefix="tinyarena-train-") as tmp:
        out_dir = pathlib.Path(work_dir or tmp)
        compile_training(graph, out_dir, spec, target=target, **plan_options)
        run = run_training(out_dir, target, sample[None], [label], 1, learning_rate, trace=True)
    updated = {graph.ops[u.op].inputs[1]: u.weight_channels if u.weight_channels < u.out_channels else None
               for u in core.updates if u.weight_channels}
    updated.update({graph.ops[u.op].inputs[2]: None for u in core.updates if u.bias})
    ref = reference_step(graph, _forward_values(graph.model_bytes, graph, sample), label, learning_rate, updated,
                         first_op=min(u.op for u in core.updates))
    return TrainingCheck(target, spec, float(run.losses[0]), ref.loss, _compare(graph, core, run.trace, ref))
