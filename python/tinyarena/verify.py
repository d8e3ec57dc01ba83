"""``verify``: build the generated C, run it, compare every output byte with TFLite.

The reference is the TFLite interpreter with its reference kernels
(``OpResolverType.BUILTIN_REF``; PyPI ``ai-edge-litert``, the ``verify`` extra:
``pip install 'tinyarena[verify]'``, or ``tflite-runtime``), run on the
same random inputs. The generated program is built with per-op tracing, so a mismatch names
the first op (in execution order) whose output differs. Targets: ``host`` (the machine's C
compiler), ``cortex-m3`` (QEMU ``mps2-an385``, portable kernels), ``cortex-m4`` (``mps2-an386``),
``cortex-m7`` (``mps2-an500``), ``cortex-m33`` (``mps2-an505``) and ``cortex-m55`` (``mps3-an547``)
(DSP kernels), built with Debian's ``gcc-arm-none-eabi`` and run under ``qemu-system-arm`` with
semihosting.

With ``memories`` (a memory hierarchy) the Cortex-M image puts each memory's arena in its own
free RAM of the board (``tinyarena.boards``), where QEMU really has memory.

With ``io="int8"`` (or ``input_layout="nhwc"``) the program takes the int8 (NHWC) tensors the
boundary ops made: the reference still runs the file's model, fed the float (NCHW) input those
ops turn into exactly the program's input (dequantized, transposed back); the reference's own
copy of that tensor must equal the program's input, and the expected outputs are the int8
tensors the output DEQUANTIZEs read (every intermediate is kept).
"""

import dataclasses
import pathlib
import re
import subprocess
import tempfile

import numpy as np

from . import _core
from .boards import QEMU_MACHINES
from .codegen import TARGETS, compile
from .memories import MemoryPlacement, place_plan
from .planner import plan as make_plan
from .reader import load_model

__all__ = ["ReferenceInputError", "VerifyError", "VerifyResult", "file_inputs", "verify"]

RUN_TIMEOUT_S = 600
INTERPRETER_MISSING = ("verify needs the TFLite interpreter: pip install 'tinyarena[verify]' "
                       "(from a checkout: pip install '.[verify]')")


class VerifyError(RuntimeError):
    """The generated program could not be built or run (compiler or emulator output attached)."""


@dataclasses.dataclass(frozen=True)
class Mismatch:
    op_index: int
    op_type: str
    tensor: int
    differing_bytes: int
    max_abs_diff: int


class ReferenceInputError(VerifyError):
    """The reference model, fed the file input made from the program's input, does not reach it."""


@dataclasses.dataclass(frozen=True)
class VerifyResult:
    target: str
    bit_exact: bool
    outputs: list  # the generated program's outputs (numpy arrays)
    first_mismatch: Mismatch = None  # the first op whose output differs, if any
    arena_bytes: int = 0
    stack_bytes: int = None  # stack high-water mark on Cortex-M targets
    arenas: dict = None  # with memories: {memory: arena bytes}
    plan: object = None  # the plan compiled (a tinyarena.Plan)

    def summary(self):
        """One line: ``bit-exact on TARGET (arena N B[, per-memory arenas][, stack N B])``, or
        ``MISMATCH on TARGET: first difference at op I (TYPE): N bytes differ, max |diff| D``."""
        if self.bit_exact:
            stack = f", stack {self.stack_bytes} B" if self.stack_bytes is not None else ""
            arenas = "".join(f", {memory} {size:,} B" for memory, size in (self.arenas or {}).items())
            return f"bit-exact on {self.target} (arena {self.arena_bytes} B{arenas}{stack})"
        m = self.first_mismatch
        where = f"op {m.op_index} ({m.op_type})" if m else "an output"
        detail = f": {m.differing_bytes} bytes differ, max |diff| {m.max_abs_diff}" if m else ""
        return f"MISMATCH on {self.target}: first difference at {where}{detail}"


def interpreter_module():
    """The installed TFLite interpreter module (``ai_edge_litert`` or ``tflite_runtime``);
    :class:`VerifyError` naming the ``verify`` extra when neither is installed."""
    import importlib

    for name in ("ai_edge_litert.interpreter", "tflite_runtime.interpreter"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise VerifyError(INTERPRETER_MISSING)


def reference_interpreter(model_bytes):
    """TFLite's interpreter with reference kernels, keeping every intermediate tensor.

    It is given a copy of the model with stale ``quantized_dimension`` fields zeroed (the
    interpreter refuses them; ``person_detect.tflite`` has them on its 1-D biases) and with op
    versions the reference resolver lacks lowered where it runs the same kernel (TILE 3 -> 2).
    """
    module = interpreter_module()
    Interpreter, OpResolverType = module.Interpreter, module.OpResolverType
    model_bytes = _core.with_reference_op_versions(_core.with_valid_quantized_dimensions(bytes(model_bytes)))
    interpreter = Interpreter(model_content=model_bytes, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                              experimental_preserve_all_tensors=True)
    interpreter.allocate_tensors()
    return interpreter


def random_inputs(graph, seed):
    rng = np.random.default_rng(seed)
    inputs = []
    for index in graph.inputs:
        t = graph.tensors[index]
        if t.dtype == "float32":
            inputs.append(rng.uniform(-1.0, 1.0, t.shape).astype(np.float32))
        else:
            inputs.append(rng.integers(-128, 128, t.shape, dtype=np.int8))
    return inputs


def _boundary_chain(file_graph, start, end):
    """The ops from file input tensor ``start`` to tensor ``end`` (each the only reader of the last)."""
    chain, t = [], start
    while t != end:
        readers = file_graph.tensors[t].consumers
        if len(readers) != 1:
            raise VerifyError(f"tensor {t} is not the start of a chain of boundary ops to tensor {end}")
        chain.append(file_graph.ops[readers[0]])
        t = chain[-1].outputs[0]
    return chain


def _undo(op, file_graph, value):
    """The input of boundary op ``op`` (QUANTIZE or TRANSPOSE) that gives its output ``value``."""
    if op.type == "QUANTIZE":
        q = file_graph.tensors[op.outputs[0]]
        return ((value.astype(np.float32) - np.float32(q.zero_point[0])) * np.float32(q.scale[0])).astype(np.float32)
    if op.type == "TRANSPOSE":
        perm = np.asarray(file_graph.tensors[op.inputs[1]].data).reshape(-1)
        return np.ascontiguousarray(np.transpose(value, np.argsort(perm))).astype(value.dtype)
    raise VerifyError(f"op {op.index} ({op.type}) is no boundary op verify can undo")


def file_inputs(file_graph, graph, inputs):
    """The file model's inputs that its boundary ops turn into ``inputs`` of ``graph`` (the same
    graph with ``io``/``input_layout`` applied; tensor indices are the file's)."""
    values = []
    for start, end, value in zip(file_graph.inputs, graph.inputs, inputs):
        for op in reversed(_boundary_chain(file_graph, start, end)):
            value = _undo(op, file_graph, value)
        values.append(value)
    return values


def _run(command, cwd, what):
    try:
        result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except FileNotFoundError as e:
        raise VerifyError(f"{what}: {e.filename} is not installed") from e
    except subprocess.TimeoutExpired as e:
        raise VerifyError(f"{what} did not finish in {RUN_TIMEOUT_S} s") from e
    if result.returncode != 0:
        raise VerifyError(f"{what} failed (exit {result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return result.stdout


def build(out_dir, target, trace=True, cflags="", opt=None):
    """``make`` the generated program; ``cflags`` are added (e.g. ``-DTA_NO_SIMD``), ``opt``
    replaces the optimisation level (default ``-O2``)."""
    options = (["TRACE=1"] if trace else []) + ([f"EXTRA_CFLAGS={cflags}"] if cflags else [])
    options += [f"OPT={opt}"] if opt else []
    _run(["make", "-s", f"TARGET={target}"] + options, out_dir, f"building for {target}")
    return out_dir / ("model_host" if target == "host" else f"model_{target}.elf")


def run_program(executable, target):
    """Runs the built harness in its directory; returns its stdout."""
    if target == "host":
        return _run([str(executable)], executable.parent, "running the host program")
    command = ["qemu-system-arm", "-M", QEMU_MACHINES[target], "-nographic", "-monitor", "none",
               "-semihosting-config", "enable=on,target=native", "-kernel", str(executable)]
    return _run(command, executable.parent, f"running under QEMU {QEMU_MACHINES[target]}")


def read_trace(path):
    """{op index: bytes} from the harness's trace.bin (int32 op, int32 size, data)."""
    data, traces, pos = path.read_bytes(), {}, 0
    while pos + 8 <= len(data):
        op, size = np.frombuffer(data[pos:pos + 8], dtype=np.int32)
        traces.setdefault(int(op), []).append(data[pos + 8:pos + 8 + int(size)])
        pos += 8 + int(size)
    return traces


def first_mismatch(graph, order, traces, interpreter):
    for op_index in order:
        op = graph.ops[op_index]
        for position, tensor in enumerate(t for t in op.outputs if t >= 0):
            if op_index not in traces:
                break  # views emit no call
            ours = np.frombuffer(traces[op_index][position], dtype=np.uint8)
            theirs = np.ascontiguousarray(interpreter.get_tensor(tensor)).view(np.uint8).reshape(-1)
            if ours.shape != theirs.shape or not np.array_equal(ours, theirs):
                diff = np.abs(ours.astype(np.int16) - theirs.astype(np.int16)) if ours.shape == theirs.shape else None
                return Mismatch(op_index, op.type, tensor, int(np.count_nonzero(diff)) if diff is not None else -1,
                                int(diff.max()) if diff is not None else -1)
    return None


def verify(model, target="host", inplace=True, seed=0, work_dir=None, allocator="auto", cflags="",
           opt=None, transforms=None, plan=None, memories=None, pins=None, blocked=None, io="model",
           input_layout="model"):
    """Compile ``model`` for ``target``, run it on random inputs and compare with TFLite.

    ``cflags``/``opt`` go to the generated Makefile (``EXTRA_CFLAGS``/``OPT``): e.g.
    ``-DTA_NO_SIMD`` runs the portable kernels on a DSP core, ``-DTA_SIMD_EMULATE`` the SIMD
    paths (packed weights) in plain C on the host.

    ``transforms`` and ``allocator`` are those of ``tinyarena.plan`` (defaults: all transforms
    that help, ``"auto"``), so ``verify(model)`` runs the plan ``tinyarena.plan(model)`` makes.

    ``plan``: compile this plan of ``model`` (e.g. a ``tinyarena.tiling.TiledPlan``) instead of
    planning it here (``inplace``, ``allocator``, ``transforms``, ``io`` and ``input_layout`` are then
    unused; ``model`` may be None).

    ``io``/``input_layout``: the model's interface, as in ``tinyarena.plan``: with ``io="int8"`` the
    program is fed random int8 inputs and its int8 outputs are compared.

    ``memories``: as in ``tinyarena.compile`` (a list of ``Memory`` or a ``MemoryPlacement``);
    with a list, ``pins`` and ``blocked`` (as in ``tinyarena.memories.place_plan``) constrain the placement.

    Returns a :class:`VerifyResult`; ``bit_exact`` is True when every output byte matches.
    Raises :class:`VerifyError` when the program cannot be built or run, or when the TFLite
    interpreter is not installed (``pip install 'tinyarena[verify]'``).
    """
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}: use one of {', '.join(TARGETS)}")
    interpreter_module()  # before building anything: the reference must be there
    # The reference runs the file's graph; a transformed graph keeps its tensors and bytes.
    file_graph = load_model(model if model is not None else plan.graph.model_bytes)
    plan = plan or make_plan(file_graph, inplace=inplace, allocator=allocator, transforms=transforms, io=io,
                             input_layout=input_layout)
    graph = plan.graph  # the program's inputs and outputs
    if pins or blocked:
        if memories is None or isinstance(memories, MemoryPlacement):
            raise ValueError("pins and blocked go with a list of memories (a MemoryPlacement has its own)")
        memories = place_plan(plan, memories, pins=pins, blocked=blocked)
    with tempfile.TemporaryDirectory(prefix="tinyarena-verify-") as tmp:
        out_dir = pathlib.Path(work_dir or tmp)
        compiled = compile(plan, out_dir, target=target, name="model", memories=memories)
        inputs = random_inputs(graph, seed)
        for i, value in enumerate(inputs):
            (out_dir / f"input{i}.bin").write_bytes(value.tobytes())
        stdout = run_program(build(out_dir, target, cflags=cflags, opt=opt), target)
        outputs = [np.frombuffer((out_dir / f"output{i}.bin").read_bytes(), dtype=np.uint8)
                   for i in range(len(graph.outputs))]
        traces = read_trace(out_dir / "trace.bin")
    interpreter = reference_interpreter(file_graph.model_bytes)
    for detail, value in zip(interpreter.get_input_details(), file_inputs(file_graph, graph, inputs)):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    for i, (t, value) in enumerate(zip(graph.inputs, inputs)):
        if not np.array_equal(interpreter.get_tensor(t), value):
            raise ReferenceInputError(f"input {i}: the reference's tensor {t} '{graph.tensors[t].name}' differs from "
                                      "the program's input it was made from")
    expected = [np.ascontiguousarray(interpreter.get_tensor(t)).view(np.uint8).reshape(-1) for t in graph.outputs]
    exact = all(np.array_equal(a, b) for a, b in zip(outputs, expected))
    mismatch = None if exact else first_mismatch(plan.graph, list(plan.liveness.order), traces, interpreter)
    stack = re.search(r"stack_bytes: (\d+)", stdout)
    typed = [o.view(np.asarray(e).dtype) for o, e in zip(outputs, (interpreter.get_tensor(t) for t in graph.outputs))]
    return VerifyResult(target, exact, typed, mismatch, compiled.arena_bytes, int(stack.group(1)) if stack else None,
                        compiled.arenas or None, plan)
