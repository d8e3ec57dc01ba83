"""Stage 5: C code generation -- a plan becomes portable C for Cortex-M.

``compile(plan, out_dir)`` (also ``tinyarena.compile``) writes ``model.h`` (the API), ``model.c`` (one static arena of
exactly the planned size, weights and parameters as ``const`` data in flash, one kernel call
per op at the planned offsets), ``main.c`` (a test harness), a ``Makefile`` and copies of the
kernel library sources the model uses (``kernels/``) and the Cortex-M start-up files
(``target/``). ``make TARGET=host|cortex-m3|cortex-m4|cortex-m7|cortex-m33|cortex-m55`` builds it.

``compile(training_plan, out_dir)`` with a ``tinyarena.training.TrainingPlan`` also emits the
on-device training step, ``tinyarena_<name>_train_step`` (see ``tinyarena.training_codegen``).

``compile(plan, out_dir, memories=[Memory(...), ...])`` (or a ``MemoryPlacement`` from
``tinyarena.memories.place_plan``, with pins and blocklists) places the buffers across a memory
hierarchy instead: model.c then holds one arena per used memory, ``tinyarena_<name>_arena_<memory>``
in linker section ``.tinyarena.<memory>``, and the linker script fragments
``tinyarena_memory.ld`` (a MEMORY region per memory at its base address) and
``tinyarena_sections.ld`` (an output section per arena in its memory's region) are written
beside it. Tiled plans (``tinyarena.tiling``) place the same way: their rings, patch buffers,
whole tensors and scratch are the buffers of ``plan.buffers``. The Makefile's Cortex-M build
links the sections into free RAMs of the QEMU board
(``target/memory_<target>.ld``, see ``tinyarena.boards``) instead of the device's regions.
"""

import dataclasses
import pathlib
import re
import shutil

from . import _core
from .boards import QEMU_MACHINES, harness_memory_script
from .memories import MemoryPlacement, place_plan

__all__ = ["TARGETS", "CompiledModel", "compile", "kernel_library_dir", "lower", "supported_op_types",
           "unsupported_ops"]

# The code generation targets, host first (the target table of the C++ core, op_params/targets.h):
# cortex-m3 builds the portable kernels, cortex-m4/m7/m33/m55 the DSP ones.
TARGETS = tuple(t.name for t in _core.targets())
_DATA_DIR = pathlib.Path(_core.__file__).resolve().parent


def kernel_library_dir():
    """The installed kernel library: ``include/`` (headers) and ``src/`` (C99 sources)."""
    return _DATA_DIR / "kernels"


@dataclasses.dataclass(frozen=True)
class CompiledModel:
    """What ``compile`` wrote: the directory, the API name and the lowered program."""

    out_dir: pathlib.Path
    name: str
    program: object  # tinyarena._core.Program

    @property
    def arena_bytes(self):
        """All arenas together."""
        return self.program.arena_bytes

    @property
    def const_bytes(self):
        """Bytes of constant arrays (flash data) per build: ``{"dsp": ..., "helium": ..., "portable": ...}``.
        The DSP build (Cortex-M4/M7/M33) holds int8 conv (TA_PACKED_S8) and fully connected weights,
        packed int16 depthwise weights and conv's per-channel requantization records; the Helium build
        (Cortex-M55) int8 weights throughout (conv's in TA_PACKED_MVE with records of its own); the
        portable build (host, Cortex-M3) int8 weights."""
        builds = {"dsp": "cortex-m4", "helium": "cortex-m55", "portable": "host"}
        return {build: self.program.const_array_bytes(target) for build, target in builds.items()}

    @property
    def arenas(self):
        """{memory name: arena bytes} of a hierarchy compile (empty for the single arena)."""
        return {a.memory: a.bytes for a in self.program.arenas}


def supported_op_types():
    """Names of the op types the kernel library runs (its one op table; views included)."""
    return list(_core.supported_op_types())


def unsupported_ops(model):
    """``{op index: reason}`` of the ops of ``model`` (path, bytes or ``Graph``) that cannot be
    compiled: no kernel for the type, or options/quantization/shapes the kernel does not take.
    Empty when every op compiles (what depends on the plan, e.g. scratch, is checked by ``lower``)."""
    from .reader import load_model

    return dict(_core.unsupported_ops(load_model(model)))


def c_identifier(text):
    """A lower-case C identifier from a file or model name (``vww_96_int8.tflite`` -> ``vww_96_int8``)."""
    stem = pathlib.PurePath(str(text)).name.split(".")[0] if text else "model"
    name = re.sub(r"[^0-9a-zA-Z_]", "_", stem).lower() or "model"
    return name if not name[0].isdigit() else "m_" + name


def lower(plan, name=None, memories=None):
    """The plan's ops as kernel calls (a ``Program``); raises ``UnsupportedError`` naming any op the
    kernel library lacks (its type and index). ``memories``: as in :func:`compile`."""
    from .training import TrainingPlan

    name = c_identifier(name or plan.model_name)
    if isinstance(plan, TrainingPlan):  # a training step beside invoke (tinyarena.training_codegen)
        if memories is not None:
            raise ValueError("a training plan compiles to one arena: memories are not supported with it")
        return _core.lower_training_program(plan.core, name)
    tiled = getattr(plan, "tiled", None)  # a tinyarena.tiling.TiledPlan: segments become stripe loops
    lower_planned, planned = ((_core.lower_tiled_program, tiled) if tiled is not None
                              else (_core.lower_program, plan.core))
    if memories is None:
        return lower_planned(plan.graph, planned, name)
    placement = memories if isinstance(memories, MemoryPlacement) else place_plan(plan, memories)
    return lower_planned(plan.graph, planned, name, list(placement.memories), placement.solution)


def _copy_library(program, out_dir):
    library = kernel_library_dir()
    shutil.copytree(library / "include", out_dir / "kernels" / "include", dirs_exist_ok=True)
    (out_dir / "kernels" / "src").mkdir(parents=True, exist_ok=True)
    for header in sorted((library / "src").glob("*.h")):
        shutil.copy2(header, out_dir / "kernels" / "src" / header.name)
    for source in program.kernel_sources:
        shutil.copy2(library / "src" / source, out_dir / "kernels" / "src" / source)
    shutil.copytree(_DATA_DIR / "targets", out_dir / "target", dirs_exist_ok=True)
    for target in QEMU_MACHINES if program.arenas else ():
        (out_dir / "target" / f"memory_{target}.ld").write_text(harness_memory_script(program, target))


def _check_limits(plan):
    """ValueError (needed vs allowed bytes) when a plan or training plan is above an SRAM or flash
    limit it was made under: no code for a plan that does not fit."""
    if plan.sram_limit is not None and plan.peak_bytes > plan.sram_limit:
        raise ValueError(f"the plan needs {plan.peak_bytes:,} bytes of SRAM but the limit is {plan.sram_limit:,} bytes")
    if plan.flash_limit is not None and plan.flash_bytes > plan.flash_limit:
        raise ValueError(f"the plan's build needs {plan.flash_bytes:,} bytes of flash "
                         f"but the flash limit is {plan.flash_limit:,} bytes")


def compile(plan, out_dir, target="cortex-m4", name=None, memories=None, flash=None):  # noqa: A001 -- the product's verb
    """Write the C sources of ``plan`` into ``out_dir`` and return a :class:`CompiledModel`.

    ``target`` becomes the Makefile's default (one of :data:`TARGETS`: ``host``, ``cortex-m3``,
    ``cortex-m4``, ``cortex-m7``, ``cortex-m33`` or ``cortex-m55``); the sources themselves are
    portable C99 and build for every target.

    ``memories``: a list of ``tinyarena.allocation.Memory`` (fastest first) or a
    ``tinyarena.memories.MemoryPlacement``: one arena per used memory, each in its own linker
    section, instead of the single arena (``ValueError`` when the buffers do not fit).

    ``flash``: a flash budget (bytes or a size string) for the ``target`` build: the weight layouts
    are chosen again under it (:meth:`Plan.with_flash`; default: the plan's own layouts).
    ``ValueError`` giving the bytes needed and allowed when the plan is above its SRAM limit
    (``plan.fits``) or even its compact build above the flash limit (``plan.flash_fits``).
    """
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}: use one of {', '.join(TARGETS)}")
    if flash is not None:
        plan = plan.with_flash(flash, target)
    _check_limits(plan)
    program = lower(plan, name, memories)
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, contents in _core.emit_sources(program, target):
        (out_dir / path).write_text(contents)
    _copy_library(program, out_dir)
    return CompiledModel(out_dir, program.name, program)
