"""A plan's buffers placed across a memory hierarchy, as the code generator takes them.

``place_plan(plan, memories, pins=..., blocked=...)`` places every buffer of a plan in one of
``memories`` (``Memory`` entries, fastest first) with ``place_in_hierarchy``: the most accessed
bytes stay in the fastest memories. Pins and blocklists name buffers (index or name, as in
``plan.buffers``) and memories by name. The result, a validated :class:`MemoryPlacement`, goes to
``tinyarena.codegen.compile(plan, out_dir, memories=placement)``: one arena per used memory, each in its
own linker section. ``parse_memory``, ``parse_pin`` and ``parse_block`` read the CLI's
``--memory NAME:SIZE[:ALIGN[:BASE]]``, ``--pin BUFFER=MEMORY[:OFFSET]`` and
``--block BUFFER=MEMORY[,MEMORY...]``.
"""

import dataclasses

from .allocation import (Buffer, BufferRules, HierarchyProblem, Memory, Problem, hierarchy_from_plan,
                         place_in_hierarchy, validate_hierarchy)
from .sizes import check_alignment, parse_limit, parse_size

__all__ = ["MemoryPlacement", "parse_block", "parse_memory", "parse_pin", "place_plan"]

MEMORY_SYNTAX = "NAME:SIZE[:ALIGN[:BASE]]"
PIN_SYNTAX = "BUFFER=MEMORY[:OFFSET]"
BLOCK_SYNTAX = "BUFFER=MEMORY[,MEMORY...]"


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

    SIZE (at least 1 byte) takes a K/M/G suffix; ALIGN is in bytes, a power of two (default 16);
    BASE is the memory's address (decimal or 0x hex, default 0; the memory ends within 2^64).
    Raises ``ValueError`` naming the expected syntax.
    """
    parts = str(text).split(":")
    if not 2 <= len(parts) <= 4 or not parts[0].isidentifier() or not parts[0].isascii():
        raise ValueError(f"invalid memory {text!r}: expected {MEMORY_SYNTAX} with NAME a C identifier, e.g. dtcm:64K")
    try:
        size = parse_limit(parts[1])
        alignment = check_alignment(parts[2], "ALIGN") if len(parts) > 2 and parts[2] else 16
        base = int(parts[3], 0) if len(parts) > 3 else 0
    except ValueError as e:
        raise ValueError(f"invalid memory {text!r}: expected {MEMORY_SYNTAX} ({e})") from None
    if base < 0 or base + size > 2**64:
        raise ValueError(f"invalid memory {text!r}: BASE must be >= 0 and the memory must end within 2^64")
    return Memory(parts[0], size, alignment=alignment, base_address=base)


def _buffer_key(text):
    """A buffer as the command line names it: an index (digits) or a name from ``plan.buffers``."""
    text = text.strip()
    return int(text) if text.isdigit() else text


def _buffer_rule(text, syntax, example):
    """(buffer, right-hand side) of ``BUFFER=...``; buffer names may hold ``=``, memory names do not."""
    buffer, sep, rule = str(text).rpartition("=")
    if not sep or not buffer.strip() or not rule:
        raise ValueError(f"invalid {text!r}: expected {syntax}, e.g. {example}")
    return _buffer_key(buffer), rule


def _memory_name(name, text, syntax):
    if not name.isidentifier() or not name.isascii():
        raise ValueError(f"invalid {text!r}: expected {syntax} with MEMORY the name of a --memory")
    return name


def parse_pin(text):
    """``(buffer, memory name)`` or ``(buffer, (memory name, offset))`` from ``BUFFER=MEMORY[:OFFSET]``,
    e.g. ``3=ext``, ``input=sram:0x1000``: BUFFER is an index or a name of ``plan.buffers``, OFFSET
    bytes from the memory's start (decimal, 0x hex or a K/M/G suffix). Raises ``ValueError`` naming the
    expected syntax; ``place_plan`` resolves the names."""
    buffer, rule = _buffer_rule(text, PIN_SYNTAX, "3=sram:4096")
    name, sep, offset = rule.partition(":")
    name = _memory_name(name, text, PIN_SYNTAX)
    if not sep:
        return buffer, name
    try:
        value = int(offset, 0) if offset.strip().lower().startswith("0x") else parse_size(offset)
    except ValueError:
        raise ValueError(f"invalid {text!r}: expected {PIN_SYNTAX} with OFFSET bytes >= 0 "
                         "(e.g. 4096, 0x1000, 4K)") from None
    return buffer, (name, value)


def parse_block(text):
    """``(buffer, [memory names])`` from ``BUFFER=MEMORY[,MEMORY...]``: the memories the buffer may
    not use. Raises ``ValueError`` naming the expected syntax."""
    buffer, rule = _buffer_rule(text, BLOCK_SYNTAX, "3=dtcm,sram")
    return buffer, [_memory_name(name.strip(), text, BLOCK_SYNTAX) for name in rule.split(",")]


def _memory_index(memories, name, what):
    names = [m.name for m in memories]
    if name not in names:
        raise ValueError(f"{what}: no memory named {name!r} (memories: {', '.join(names)})")
    return names.index(name)


def _buffer_index(plan, buffer):
    if isinstance(buffer, int):
        if not 0 <= buffer < len(plan.buffers):
            raise ValueError(f"no buffer {buffer}: the plan has {len(plan.buffers)} (0 to {len(plan.buffers) - 1})")
        return buffer
    matches = [i for i, b in enumerate(plan.buffers) if b.name == buffer]
    if len(matches) != 1:
        raise ValueError(f"{'no' if not matches else 'more than one'} buffer named {buffer!r} in the plan "
                         "(name it by its index or name in plan.buffers, e.g. from `tinyarena plan --json`)")
    return matches[0]


def _pairs(rules):
    """A mapping's items, or the (buffer, rule) pairs themselves (the CLI's repeated options)."""
    return list(rules.items()) if hasattr(rules, "items") else list(rules or ())


def _pinned_offsets(problem, offsets):
    """``problem`` with buffer ``i`` pinned at ``offsets[i]`` (inside its memory)."""
    buffers = [Buffer(b.size, b.first, b.last, alignment=b.alignment,
                      fixed_offset=offsets.get(i, b.fixed_offset), name=b.name)
               for i, b in enumerate(problem.buffers)]
    return Problem(buffers, problem.capacity)


def _rules(plan, memories, pins, blocked):
    """({buffer index: BufferRules}, {buffer index: pinned offset}) of the user's pins and blocklists."""
    rules, offsets = {}, {}
    for buffer, pin in _pairs(pins):
        index = _buffer_index(plan, buffer)
        if index in rules:
            raise ValueError(f"buffer {buffer!r} (index {index}) is pinned twice")
        name, offset = (pin, None) if isinstance(pin, str) else pin
        memory = _memory_index(memories, name, f"pin of buffer {buffer!r}")
        rules[index] = BufferRules(memory=memory)
        if offset is not None:  # checked by the core (aligned, inside the memory, apart from other pins)
            offsets[index] = int(offset)
    seen = set()
    for buffer, names in _pairs(blocked):
        index = _buffer_index(plan, buffer)
        if index in seen:
            raise ValueError(f"buffer {buffer!r} (index {index}) has two blocklists: give them as one")
        seen.add(index)
        memory = rules[index].memory if index in rules else -1
        blocks = [_memory_index(memories, name, f"blocklist of buffer {buffer!r}") for name in names]
        if memory in blocks:
            raise ValueError(f"buffer {buffer!r} is pinned to memory {memories[memory].name!r} and blocked from it")
        rules[index] = BufferRules(memory=memory, blocked=blocks)
    return rules, offsets


def place_plan(plan, memories, pins=None, blocked=None):
    """Place ``plan``'s buffers in ``memories`` (fastest first); returns a :class:`MemoryPlacement`.

    ``pins`` maps a buffer (index or name) to a memory name or ``(memory name, offset)``;
    ``blocked`` maps a buffer to the memory names it may not use (either may also be a list of
    ``(buffer, rule)`` pairs, as ``parse_pin``/``parse_block`` return them). Raises ``ValueError``
    for an unknown buffer or memory name, a buffer pinned twice, contradicting rules, a pinned
    offset off the alignment or past the memory's end, or memories too small (naming the bytes
    needed and the bytes the memory has).
    """
    memories = list(memories)
    if not memories:
        raise ValueError("give at least one memory")
    rules, offsets = _rules(plan, memories, pins, blocked)
    problem = hierarchy_from_plan(plan, memories, rules)
    if offsets:
        problem = HierarchyProblem(problem.memories, _pinned_offsets(problem.problem, offsets), problem.rules)
    solution = place_in_hierarchy(problem)
    errors = validate_hierarchy(problem, solution)
    if errors:
        raise RuntimeError("the hierarchy placement is invalid: " + "; ".join(errors[:5]))
    return MemoryPlacement(problem, solution)
