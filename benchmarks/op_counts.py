"""Instructions of each op of one Cortex-M inference, counted exactly under QEMU.

The generated program is built with ``TRACE=1`` (``-DTINYARENA_TRACE``), so ``invoke`` calls
``tinyarena_trace(op, ...)`` after each op's kernel call; the harness's trace function (which
writes the output to a file) is replaced by an empty one. The instruction-count plugin
(tools/qemu_insn_count.c) records the running count at ``invoke``'s entry and at each entry of
``tinyarena_trace`` (``mark=ADDR``): the instructions between two marks are one op's (its
kernel call, its argument set-up and the trace call's few instructions; the first op's also
include copying the inputs into the arena). An op the generated code runs as no call (an
elided, zero-copy op) has no trace and counts 0. ``op_counts`` takes untiled plans only (one call
per op); ``tiled_op_counts`` any plan (segment loops replay their calls: each call is marked with
its op, see ``mark_op_calls``).

``op_counts(...)`` is shared by tools/calibrate_cost_model.py and benchmarks/cost_model_bench.py.
"""

import re

import numpy as np

from codegen_bench import count, qemu, run, symbol_range

from tinyarena.codegen import compile as compile_model

# The core each cost-model build is counted on (op_params::Build: the portable kernels on the
# Cortex-M3, the SIMD ones on the M4, Helium on the M55):
BUILD_TARGETS = {"simd": "cortex-m4", "portable": "cortex-m3", "helium": "cortex-m55"}

_TRACE_BODY = re.compile(r"(void tinyarena_trace\(int op_index, const void \*data, size_t bytes\) )\{.*?\n\}", re.S)


def silence_trace(out_dir):
    """Replaces the harness's tinyarena_trace body with an empty one (so it runs a few instructions)."""
    main_c = out_dir / "main.c"
    text, n = _TRACE_BODY.subn(r"\1{ (void)op_index; (void)data; (void)bytes; }", main_c.read_text())
    if n != 1:
        raise RuntimeError(f"{main_c}: the harness's tinyarena_trace definition was not found")
    main_c.write_text(text)


def trace_order(out_dir):
    """The op index of each TA_TRACE in ``invoke``, in the order they run (untiled code: straight-line)."""
    text = (out_dir / "model.c").read_text()
    body = text[text.index("_invoke("):]
    return [int(m.group(1)) for m in re.finditer(r"TA_TRACE\((\d+),", body)]


def marks(elf, plugin, addresses, target):
    """[(address, count before it)] of each execution of the instructions at ``addresses``."""
    args = f"{plugin}," + ",".join(f"mark={a:#x}" for a in addresses)
    result = run([*qemu(target), "-plugin", args, "-d", "plugin", "-kernel", str(elf)], elf.parent)
    text = result.stdout + result.stderr
    found = [(int(a, 16), int(n)) for a, n in re.findall(r"mark (0x[0-9a-f]+): (\d+)", text)]
    if len(found) != int(re.search(r"marks: (\d+)", text).group(1)):
        raise RuntimeError(f"{elf}: the plugin kept fewer marks than ran")
    return found


def write_inputs(plan, out_dir):
    """Random inputs (seed 0) for the harness: int8, or float32 in [-1, 1) for a float input."""
    rng = np.random.default_rng(0)
    for i, index in enumerate(plan.graph.inputs):
        tensor = plan.graph.tensors[index]
        values = (rng.uniform(-1, 1, tensor.shape).astype(np.float32) if str(tensor.dtype) == "float32"
                  else rng.integers(-128, 128, tensor.shape, dtype=np.int8))
        (out_dir / f"input{i}.bin").write_bytes(values.tobytes())


def compile_for_counts(plan, out_dir, build):
    """The plan's generated program in ``out_dir``, for the build's target, inputs written."""
    compile_model(plan, out_dir, target=BUILD_TARGETS[build], name="model")
    write_inputs(plan, out_dir)


def op_counts(plan, out_dir, plugin, build):
    """{op index: instructions} of one inference of ``plan`` in ``build`` ("simd", "portable" or
    "helium"), from the program compiled into ``out_dir`` (compile_for_counts)."""
    target = BUILD_TARGETS[build]
    silence_trace(out_dir)
    run(["make", "-s", "clean"], out_dir)
    run(["make", "-s", f"TARGET={target}", "TRACE=1", "EXTRA_CFLAGS=-DTINYARENA_RUNS=1"], out_dir)
    elf = out_dir / f"model_{target}.elf"
    invoke = symbol_range(elf, "tinyarena_model_invoke")[0]
    trace = symbol_range(elf, "tinyarena_trace")[0]
    found = marks(elf, plugin, (invoke, trace), target)
    start = [i for i, (a, _) in enumerate(found) if a == invoke]
    if len(start) != 1:
        raise RuntimeError(f"{elf}: invoke ran {len(start)} times")
    traces = [n for a, n in found[start[0] + 1:] if a == trace]
    order = trace_order(out_dir)
    if len(traces) != len(order):
        raise RuntimeError(f"{elf}: {len(traces)} traces ran, model.c has {len(order)}")
    counts = {op.index: 0 for op in plan.ops}
    previous = found[start[0]][1]
    for op_index, n in zip(order, traces):
        counts[op_index] += n - previous
        previous = n
    return counts


def invoke_count(out_dir, plugin, build):
    """Instructions of one whole inference (2 invokes minus 1; no trace): what the model costs."""
    target = BUILD_TARGETS[build]
    totals = []
    for runs in (1, 2):
        run(["make", "-s", "clean"], out_dir)
        run(["make", "-s", f"TARGET={target}", f"EXTRA_CFLAGS=-DTINYARENA_RUNS={runs}"], out_dir)
        totals.append(count(out_dir / f"model_{target}.elf", plugin, None, target)[0])
    return totals[1] - totals[0]


# Tiled plans: a segment replays its kernel calls in a loop, so TA_TRACE's straight-line order no
# longer names the op. Each op call (and each TA_TRACE) calls ta_mark(op) instead, whose own
# instructions encode the op: 2 op + 4 from its entry to ta_mark_done's (both marked, so the
# plugin needs 3 addresses with invoke's). ta_mark's instructions are no op's.
_MARK_FUNCTIONS = """
__attribute__((naked, noinline)) void ta_mark_done(void) { __asm__ volatile("bx lr"); }
__attribute__((naked, noinline)) void ta_mark(int op) {
  __asm__ volatile("adds r0, r0, #1\\n1:\\n\\tsubs r0, r0, #1\\n\\tbne 1b\\n\\tb ta_mark_done");
}
"""
_TRACE_DEFINE = re.compile(r"#define TA_TRACE\(op, (offset|address), bytes\) tinyarena_trace\(.*\)")
_CASE = re.compile(r"^\s*case \d+: /\* op (\d+) ")  # a row segment's op call: up to its `break;`
_BLOCK = re.compile(r"^(\s*)/\* op (\d+) [A-Z0-9_]+ \*/$")  # a patch segment's op call: the block after it


def mark_op_calls(out_dir):
    """Rewrites model.c so every op call of a segment's loop and every TA_TRACE calls ta_mark(op);
    a loop's ring shifts and input loads count to the op call that follows them."""
    model_c = out_dir / "model.c"
    text, n = _TRACE_DEFINE.subn("#define TA_TRACE(op, location, bytes) ta_mark(op)", model_c.read_text())
    if n == 0:
        raise RuntimeError(f"{model_c}: no TA_TRACE definition")
    lines, op, block = [], None, None
    for line in text.splitlines():
        case, opened = _CASE.match(line), _BLOCK.match(line)
        if case:
            op = int(case.group(1))
        elif opened:
            block = (opened.group(1) + "}", int(opened.group(2)))
        elif op is not None and line.strip() == "break;":
            lines.append(line.replace("break;", f"ta_mark({op});"))
            op = None
        elif line.lstrip().startswith("case "):
            op = None
        lines.append(line)
        if block and line == block[0]:
            lines.append(line.replace("}", f"ta_mark({block[1]});"))
            block = None
    text = "\n".join(lines) + "\n"
    anchor = '#include "tinyarena_kernels.h"\n'
    end = text.index(anchor) + len(anchor)
    model_c.write_text(text[:end] + _MARK_FUNCTIONS + text[end:])


def tiled_op_counts(plan, out_dir, plugin, build):
    """{op index: instructions} of one inference of a plan, tiled or not (compile_for_counts first):
    a segment op's count holds all its calls, the loop's dispatch and the ring shifts and input
    loads before them."""
    target = BUILD_TARGETS[build]
    silence_trace(out_dir)
    mark_op_calls(out_dir)
    run(["make", "-s", "clean"], out_dir)
    run(["make", "-s", f"TARGET={target}", "TRACE=1", "EXTRA_CFLAGS=-DTINYARENA_RUNS=1"], out_dir)
    elf = out_dir / f"model_{target}.elf"
    invoke, mark, done = (symbol_range(elf, name)[0] for name in ("tinyarena_model_invoke", "ta_mark", "ta_mark_done"))
    found = marks(elf, plugin, (invoke, mark, done), target)
    start = [i for i, (a, _) in enumerate(found) if a == invoke]
    if len(start) != 1:
        raise RuntimeError(f"{elf}: invoke ran {len(start)} times")
    counts = {op.index: 0 for op in plan.ops}
    previous, entry = found[start[0]][1], None
    for address, n in found[start[0] + 1:]:
        if address == mark:
            entry = n
        elif address == done and entry is not None:
            op = (n - entry - 4) // 2
            if op not in counts or n - entry - 4 != 2 * op:
                raise RuntimeError(f"{elf}: a mark names op {op}")
            counts[op] += entry - previous
            previous, entry = n, None
    return counts
