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

Its ``main.c`` trains on a data set read from files (:func:`run_training`). The build uses the
portable kernels (``-DTA_NO_SIMD``), which read the trainable SRAM copies.

:func:`verify_training` runs one step built with tracing and compares every gradient and updated
parameter with ``tinyarena.training_reference`` (float64): for each tensor the relative error
``max |generated - reference| / max |reference|`` (gradients, and the change of each updated
parameter in its int8/int32 units); it passes when every gradient is within ``GRADIENT_TOLERANCE``
and every updated parameter within ``UPDATE_TOLERANCE`` of the reference change plus half a unit
(the rounding of the step).
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
    "UPDATE_TOLERANCE",
    "TrainingCheck",
    "TrainingRun",
    "compile_training",
    "left_right_task",
    "run_training",
    "verify_training",
]

GRADIENT_TOLERANCE = 0.05  # max |error| / max |reference| of every gradient tensor
UPDATE_TOLERANCE = 0.05    # of every updated parameter's change (beyond the half-unit rounding)


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
    out_dir = pathlib.Path(out_dir)
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
        lines += [f"{e.what:44s} {e.relative_error:14.4%} {e.tolerance:10.2%}{'' if e.ok else '  FAIL'}"
                  for e in self.errors]
        lines.append("all within tolerance" if self.ok else "SOME TENSORS ARE OUT OF TOLERANCE")
        return "\n".join(lines)


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


def _compare(graph, core, records, ref):
    """TensorErrors of the traced gradients and updated trainables against the reference."""
    values, errors = core.values, []
    weight_grads = {}
    for kind, v, channel, scale, data in records:
        value = values[v]
        if kind == 0:
            q = np.frombuffer(data, np.int8).astype(np.float64) * scale
            producer = graph.tensors[value.tensor].producer
            expected = ref.pre_activation[producer] if value.name.endswith(" masked") else ref.grads[value.tensor]
            errors.append(TensorError(value.name, _relative_error(q, expected), GRADIENT_TOLERANCE))
        elif kind == 1:
            weight_grads.setdefault(v, {})[channel] = np.frombuffer(data, np.int32).astype(np.float64) * scale
        elif kind == 2:
            g = np.frombuffer(data, np.int32).astype(np.float64) * scale
            errors.append(TensorError(value.name, _relative_error(g, ref.params[value.tensor]), GRADIENT_TOLERANCE))
        else:
            dtype = np.int8 if graph.tensors[value.tensor].dtype == "int8" else np.int32
            after = np.frombuffer(data, dtype).astype(np.float64)
            before = np.asarray(graph.tensors[value.tensor].data, np.float64).reshape(-1)
            expected = ref.updated[value.tensor].reshape(-1)
            change = np.max(np.abs(expected - before))
            error = max(np.max(np.abs(after - expected)) - 0.5, 0.0) / max(change, 1e-30)
            errors.append(TensorError("updated " + value.name.replace("trainable ", ""), float(error),
                                      UPDATE_TOLERANCE))
    for v, channels in weight_grads.items():
        tensor = values[v].tensor
        ref_w = ref.params[tensor]
        depthwise = graph.tensors[tensor].shape[0] == 1 and ref_w.shape[0] == 1 and len(ref_w.shape) == 4
        expected = np.stack([ref_w[..., c] if depthwise else ref_w[c] for c in sorted(channels)])
        generated = np.stack([channels[c] for c in sorted(channels)])
        errors.append(TensorError("grad " + values[v].name.replace("trainable ", ""),
                                  _relative_error(generated, expected.reshape(generated.shape)), GRADIENT_TOLERANCE))
    return errors


def verify_training(model, spec, target="host", learning_rate=0.01, seed=0, work_dir=None):
    """Compile ``model``'s training step for ``spec``, run one step on a random int8 input and label
    (``seed``) on ``target`` and compare every gradient and updated parameter with the float64
    reference. Returns a :class:`TrainingCheck` (``.ok``, ``.table()``)."""
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
        compile_training(graph, out_dir, spec, target=target)
        run = run_training(out_dir, target, sample[None], [label], 1, learning_rate, trace=True)
    updated = [graph.ops[u.op].inputs[1] for u in core.updates if u.weight_channels]
    updated += [graph.ops[u.op].inputs[2] for u in core.updates if u.bias]
    ref = reference_step(graph, _forward_values(graph.model_bytes, graph, sample), label, learning_rate, updated,
                         first_op=min(u.op for u in core.updates))
    return TrainingCheck(target, spec, float(run.losses[0]), ref.loss, _compare(graph, core, run.trace, ref))
