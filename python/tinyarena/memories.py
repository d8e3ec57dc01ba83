"""A plan's buffers placed across a memory hierarchy, as the code generator takes them.

``place_plan(plan, memories, pins=..., blocked=...)`` places every buffer of a plan in one of
``memories`` (``Memory`` entries, fastest first) with ``place_in_hierarchy``: the most accessed
bytes stay in the fastest memories. Pins and blocklists name buffers (index or name, as in
``plan.buffers``) and memories by name. The result, a validated :class:`MemoryPlacement`, goes to
``tinyarena.codegen.compile(plan, out_dir, memories=placement)``: one arena per used memory, each in its
own linker section. ``parse_memory`` reads the CLI's ``--memory NAME:SIZE[:ALIGN[:BASE]]``.
"""

import dataclasses

from .allocation import (Buffer, BufferRules, HierarchyProblem, Memory, Problem, hierarchy_from_plan,
                         place_in_hierarchy, validate_hierarchy)
from .sizes import parse_size

__all__ = ["MemoryPlacement", "parse_memory", "place_plan"]

MEMORY_SYNTAX = "NAME:SIZE[:ALIGN[:BASE]]"


@dataclasses.dataclass(frozen=True)
class MemoryPlacement:
    """Where each buffer of a plan lives: ``solution.memory[b]`` (an index into ``memories``) at
    ``solution.offsets[b]``; ``solution.heights`` are the per-memory peaks. ``problem`` is the
    ``HierarchyProblem`` it solves (``validate_hierarchy(problem, solution)`` checks it)."""

    problem: object  # tinyarena.allocation.HierarchyProblem
    solution: object  # tinyarena.allocation.HierarchySolution

    @property
    def memories(self):
        """The ``Memory`` entries, fastest first."""
        return tuple(self.problem.memories)

    @property
    def heights(self):
        """{memory name: planned peak in bytes} of every memory."""
        return {m.name: int(h) for m, h in zip(self.memories, self.solution.heights)}

    def describe(self):
        """One line: each used memory's peak and base address, e.g. ``fast 9,728 B at 0x01000000``."""
        used = set(self.solution.memory)
        return ", ".join(f"{m.name} {int(self.solution.heights[i]):,} B at 0x{m.base_address:08x}"
                         for i, m in enumerate(self.memories) if i in used)

    def memory_of(self, buffer):
        """The name of the memory buffer index ``buffer`` lives in."""
        return self.memories[self.solution.memory[buffer]].name


def parse_memory(text):
    """``Memory`` from ``NAME:SIZE[:ALIGN[:BASE]]``, e.g. ``dtcm:64K``, ``sram:256K:16:0x20000000``.

    SIZE takes a K/M suffix; ALIGN is in bytes (default 16); BASE is the memory's address (decimal
    or 0x hex, default 0). Raises ``ValueError`` naming the expected syntax.
    """
    parts = str(text).split(":")
    if not 2 <= len(parts) <= 4 or not parts[0].isidentifier() or not parts[0].isascii():
        raise ValueError(f"invalid memory {text!r}: expected {MEMORY_SYNTAX} with NAME a C identifier, e.g. dtcm:64K")
    try:
        size = parse_size(parts[1])
        alignment = int(parts[2]) if len(parts) > 2 and parts[2] else 16
        base = int(parts[3], 0) if len(parts) > 3 else 0
    except ValueError as e:
        raise ValueError(f"invalid memory {text!r}: expected {MEMORY_SYNTAX} ({e})") from None
    if alignment < 1 or base < 0:
        raise ValueError(f"invalid memory {text!r}: ALIGN must be >= 1 and BASE >= 0")
    return Memory(parts[0], size, alignment=alignment, base_address=base)


def _memory_index(memories, name, what):
    names = [m.name for m in memories]
    if name not in names:
        raise ValueError(f"{what}: no memory named {name!r} (memories: {', '.join(names)})")
    return names.index(name)


def _buffer_index(plan, buffer):
    if isinstance(buffer, int):
        if not 0 <= buffer < len(plan.buffers):
            raise ValueError(f"no buffer {buffer}: the plan has {len(plan.buffers)}")
        return buffer
    matches = [i for i, b in enumerate(plan.buffers) if b.name == buffer]
    if len(matches) != 1:
        raise ValueError(f"{'no' if not matches else 'more than one'} buffer named {buffer!r} in the plan")
    return matches[0]


def _pinned_offsets(problem, offsets):
    """``problem`` with buffer ``i`` pinned at ``offsets[i]`` (inside its memory)."""
    buffers = [Buffer(b.size, b.first, b.last, alignment=b.alignment,
                      fixed_offset=offsets.get(i, b.fixed_offset), name=b.name)
               for i, b in enumerate(problem.buffers)]
    return Problem(buffers, problem.capacity)


def place_plan(plan, memories, pins=None, blocked=None):
    """Place ``plan``'s buffers in ``memories`` (fastest first); returns a :class:`MemoryPlacement`.

    ``pins`` maps a buffer (index or name) to a memory name or ``(memory name, offset)``;
    ``blocked`` maps a buffer to the memory names it may not use. Raises ``ValueError`` for an
    unknown buffer or memory name, contradicting rules, or memories too small (naming the
    bytes needed and the bytes the memory has).
    """
    memories = list(memories)
    if not memories:
        raise ValueError("give at least one memory")
    rules, offsets = {}, {}
    for buffer, pin in (pins or {}).items():
        index = _buffer_index(plan, buffer)
        name, offset = (pin, None) if isinstance(pin, str) else pin
        rules[index] = BufferRules(memory=_memory_index(memories, name, f"pin of buffer {buffer!r}"))
        if offset is not None:
            offsets[index] = int(offset)
    for buffer, names in (blocked or {}).items():
        index = _buffer_index(plan, buffer)
        memory = rules[index].memory if index in rules else -1
        rules[index] = BufferRules(memory=memory, blocked=[
            _memory_index(memories, name, f"blocklist of buffer {buffer!r}") for name in names])
    problem = hierarchy_from_plan(plan, memories, rules)
    if offsets:
        problem = HierarchyProblem(problem.memories, _pinned_offsets(problem.problem, offsets), problem.rules)
    solution = place_in_hierarchy(problem)
    errors = validate_hierarchy(problem, solution)
    if errors:
        raise RuntimeError("the hierarchy placement is invalid: " + "; ".join(errors[:5]))
    return MemoryPlacement(problem, solution)
