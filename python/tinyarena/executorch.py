"""tinyarena as ExecuTorch's memory-planning algorithm (the ``[executorch]`` extra).

``MemoryPlanning(memory_sizes, ...)`` is a callable for
``MemoryPlanningPass(memory_planning_algo=...)``: it takes the program's tensor specs and their
lifetimes, places them with tinyarena's C++ allocators across one or more memories (fastest
first, as ExecuTorch's Cadence backend numbers them: ``mem_id`` 1..N), writes ``mem_id`` and
``mem_offset`` back onto the specs and returns the buffer sizes (index 0 is ExecuTorch's constant
buffer, always 0 here). With several memories, two assignments of tensors to memories are tried:
the most accessed bytes in the fastest memory (``place_in_hierarchy``) and the largest tensors
first into the fastest memory where they fit (``place_fastest_first``); each memory's tensors are
placed by ``allocator`` ("auto": greedy, and the exact search when greedy misses the lower bound),
and the plan with the fewest bytes over all memories is kept, of equal sums the one with more
accesses in the faster memories (``objective="bytes"``, ``place_fewest_bytes``);
``objective="accesses"`` keeps the most-accessed-first plan whatever its size.

    planner = tinyarena.executorch.MemoryPlanning([64 * 1024, 512 * 1024, 8 << 20])
    program = to_edge(torch.export.export(model, (x,))).to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(memory_planning_algo=planner)))
    print(planner.plan.table())
    planner.plan.plot("plan.png")

``ExecuTorchPlan.from_graph_module(gm)`` reads the plan of any planner (the default one,
Cadence's) off a planned graph, for the same report and chart. This module imports torch only
through ExecuTorch's objects it is given; the rest of tinyarena never imports torch.
"""

import dataclasses

import numpy as np

from .allocation import (
    Buffer,
    BufferRules,
    HierarchyProblem,
    Memory,
    Problem,
    live_bytes_per_step,
    place_fewest_bytes,
    place_in_hierarchy,
    validate_hierarchy,
)

OBJECTIVES = {"bytes": place_fewest_bytes, "accesses": place_in_hierarchy}

__all__ = ["ExecuTorchPlan", "MemoryPlanning", "cadence_constraints"]


@dataclasses.dataclass(frozen=True)
class PlannedTensor:
    """One planned tensor spec: where it lives (``memory`` 0-based, fastest first) and when."""

    name: str
    size: int
    first: int
    last: int
    memory: int
    offset: int
    accessed: int


@dataclasses.dataclass(frozen=True)
class ExecuTorchPlan:
    """A memory plan of an ExecuTorch program: its tensors, the memories and their planned sizes."""

    memory_names: tuple
    memory_sizes: tuple  # capacity of each memory (0: unknown)
    heights: tuple  # planned bytes of each memory
    tensors: tuple  # PlannedTensor
    node_names: tuple  # node name of each step of the lifetimes
    proven_optimal: tuple = ()  # per memory, when tinyarena planned it
    lower_bounds: tuple = ()

    @classmethod
    def from_graph_module(cls, graph_module, memory_names=None, memory_sizes=None):
        """The plan another planner wrote onto ``graph_module``'s specs (``mem_id``/``mem_offset``),
        e.g. ``program.exported_program().graph_module`` after ``to_executorch``."""
        specs = _planned_specs(graph_module)
        count = max([s.mem_id for s in specs] + [1])
        names = tuple(memory_names or [f"mem{i}" for i in range(1, count + 1)])
        tensors = tuple(PlannedTensor(_spec_name(graph_module, s), int(s.allocated_memory), int(s.lifetime[0]),
                                      int(s.lifetime[1]), int(s.mem_id) - 1, int(s.mem_offset),
                                      _accessed_bytes(graph_module, s)) for s in specs)
        sizes = list(graph_module.meta.get("non_const_buffer_sizes", [0]))[1:]
        heights = tuple(int(sizes[i]) if i < len(sizes) else 0 for i in range(len(names)))
        return cls(names, tuple(memory_sizes or [0] * len(names)), heights, tensors, _node_names(graph_module))

    @property
    def accessed_bytes(self):
        """Estimated bytes accessed in each memory (each tensor: size x (1 write + its reads))."""
        totals = [0] * len(self.memory_names)
        for t in self.tensors:
            totals[t.memory] += t.accessed
        return tuple(totals)

    @property
    def fast_share(self):
        """The fastest memory's share of all accessed bytes (1.0 with one memory)."""
        total = sum(self.accessed_bytes)
        return self.accessed_bytes[0] / total if total else 1.0

    def live_bytes(self, memory):
        """Bytes live at each step in ``memory`` (0-based)."""
        mine = [t for t in self.tensors if t.memory == memory]
        steps = len(self.node_names)
        if not mine:
            return np.zeros(steps, dtype=np.int64)
        live = np.asarray(live_bytes_per_step(_problem(mine)), dtype=np.int64)
        return np.pad(live, (0, max(0, steps - len(live))))[:max(steps, len(live))]

    def table(self):
        """Per node (step; not ExecuTorch's allocation nodes): the bytes live in each memory; then
        each memory's planned size, tensors, accessed bytes and whether its peak is proven optimal."""
        lives = [self.live_bytes(m) for m in range(len(self.memory_names))]
        steps = max([len(x) for x in lives] + [0])
        header = ["step", "node"] + [f"{n} live B" for n in self.memory_names]
        rows = [[str(i), self.node_names[i] if i < len(self.node_names) else "-"]
                + [f"{int(x[i]) if i < len(x) else 0:,}" for x in lives]
                for i in range(steps) if (i >= len(self.node_names) or self.node_names[i])
                and any(i < len(x) and x[i] for x in lives)]
        widths = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(header)]
        fmt = lambda cells: "  ".join(c.ljust(w) if k == 1 else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths)))
        return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows] + [""]
                         + self.summary_lines())

    def summary_lines(self):
        lines = []
        for m, name in enumerate(self.memory_names):
            count = sum(t.memory == m for t in self.tensors)
            capacity = f" of {self.memory_sizes[m]:,} B" if self.memory_sizes[m] else ""
            proof = ""
            if self.proven_optimal:
                proof = (", proven optimal" if self.proven_optimal[m]
                         else f", lower bound {self.lower_bounds[m]:,} B")
            lines.append(f"{name:<8} {self.heights[m]:>12,} B{capacity}: {count} tensors, "
                         f"{self.accessed_bytes[m]:,} B accessed{proof}")
        lines.append(f"fastest memory's share of accessed bytes: {self.fast_share:.1%}")
        return lines

    def plot(self, path=None, title=None):
        """The allocation rectangles of each memory that holds tensors, one panel each; the figure."""
        import matplotlib.pyplot as plt

        from .plotting import plot_allocation

        used = [m for m in range(len(self.memory_names)) if any(t.memory == m for t in self.tensors)] or [0]
        fig, axes = plt.subplots(len(used), 1, figsize=(10, 4 * len(used)), layout="constrained", squeeze=False)
        for ax, m in zip(axes[:, 0], used):
            mine = [t for t in self.tensors if t.memory == m]
            plot_allocation([t.size for t in mine], [t.first for t in mine], [t.last for t in mine],
                            [t.offset for t in mine], labels=[t.name for t in mine],
                            sram_limit=self.memory_sizes[m] or None, ax=ax, label_note="box labels: node and size",
                            title=f"{title + ': ' if title else ''}{self.memory_names[m]}")
        if path is not None:
            fig.savefig(path, dpi=120, bbox_inches="tight")
        return fig


class MemoryPlanning:
    """A memory-planning algorithm for ``MemoryPlanningPass(memory_planning_algo=...)``.

    ``memory_sizes`` (bytes, fastest first) and ``memory_alignments`` mean what they mean in
    Cadence's ``MemoryConfig``; a memory's alignment defaults to the pass's ``alignment`` (16).
    ``memory_names`` name them in reports and errors. ``allocator`` is a name of
    ``tinyarena.allocation.allocator_names()`` ("auto", "exact", a greedy...) placing each
    memory's tensors; ``seconds`` its deterministic search budget per memory. ``objective``:
    "bytes" (the fewest bytes over all memories, see the module's docstring) or "accesses" (the
    most accessed bytes in the fastest memories first).
    ``blocked`` maps a node name to the memories (names or 1-based ``mem_id``) its tensor may not
    use; ``relative`` maps a node name to ``(source node name, byte offset)``: its tensor lives
    inside the source's (a view, a slice, an operand of a zero-copy cat). ``constraints``, a
    callable taking the graph module and returning an object with Cadence's ``MemConstraints``
    interface (see ``cadence_constraints``), adds its relative placements, blocklists and pins.
    After a call, ``plan`` is the :class:`ExecuTorchPlan`. A memory too small raises
    ``MemoryError`` naming the bytes needed and the bytes it has.
    """

    def __init__(self, memory_sizes, memory_alignments=None, memory_names=None, allocator="auto", seconds=0.3,
                 objective="bytes", blocked=None, relative=None, constraints=None):
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, not {objective!r}")
        self.objective = objective
        self.memory_sizes = [int(s) for s in memory_sizes]
        if not self.memory_sizes or min(self.memory_sizes) < 0:
            raise ValueError("memory_sizes: give at least one memory, each of >= 0 bytes")
        self.memory_alignments = None if memory_alignments is None else [int(a) for a in memory_alignments]
        self.memory_names = list(memory_names or [f"mem{i}" for i in range(1, len(self.memory_sizes) + 1)])
        for what, values in (("memory_alignments", self.memory_alignments), ("memory_names", self.memory_names)):
            if values is not None and len(values) != len(self.memory_sizes):
                raise ValueError(f"{what} has {len(values)} entries for {len(self.memory_sizes)} memories")
        self.allocator, self.seconds = allocator, float(seconds)
        self.blocked = {k: [self._memory_index(m) for m in v] for k, v in (blocked or {}).items()}
        self.relative = dict(relative or {})
        self.constraints = constraints
        self.plan = None
        self.__name__ = "tinyarena"

    def _memory_index(self, memory):
        if isinstance(memory, str):
            if memory not in self.memory_names:
                raise ValueError(f"no memory named {memory!r} (memories: {', '.join(self.memory_names)})")
            return self.memory_names.index(memory)
        if not 1 <= int(memory) <= len(self.memory_sizes):
            raise ValueError(f"no mem_id {memory}: the memories are 1..{len(self.memory_sizes)}")
        return int(memory) - 1

    def __call__(self, alignment, specs, graph_module, graph_signature=None, extra_padding=0):
        if getattr(graph_module, "input_mem_buffer_sizes", None):
            raise NotImplementedError("tinyarena does not plan programs with control-flow submodules (cond, while, map)")
        specs = [s for s in dict.fromkeys(specs) if s.lifetime[0] is not None]
        nodes = _nodes_by_spec(graph_module)
        rules = self._constraint_rules(graph_module, specs, nodes)
        planned = [s for s in specs if s.allocated_memory + extra_padding > 0]
        for spec in specs:
            if spec not in planned:
                spec.mem_id, spec.mem_offset = 1, 0
        memories = [Memory(name, size, alignment=(self.memory_alignments or [alignment] * len(self.memory_sizes))[i])
                    for i, (name, size) in enumerate(zip(self.memory_names, self.memory_sizes))]
        index = {id(s): i for i, s in enumerate(planned)}
        buffers, buffer_rules = [], []
        for spec in planned:
            rule = rules.get(id(spec), {})
            pin = rule.get("pin") or (None, None)
            buffers.append(Buffer(int(spec.allocated_memory) + int(extra_padding), int(spec.lifetime[0]),
                                  int(spec.lifetime[1]), alignment=int(alignment), fixed_offset=pin[1],
                                  name=_name_of(nodes, spec)))
            inside, inside_offset = rule.get("inside", (None, 0))
            if inside is not None and id(inside) not in index:
                raise ValueError(f"tensor {_name_of(nodes, spec)!r} lives inside {_name_of(nodes, inside)!r}, "
                                 "which memory planning does not place (a constant or an unplanned input/output)")
            buffer_rules.append(BufferRules(
                memory=-1 if pin[0] is None else pin[0], blocked=sorted(rule.get("blocked", ())),
                inside=-1 if inside is None else index[id(inside)], inside_offset=int(inside_offset),
                accessed_bytes=_accessed_bytes(graph_module, spec, nodes)))
        problem = HierarchyProblem(memories, Problem(buffers), buffer_rules)
        solution = self._place(problem)
        for spec, memory, offset in zip(planned, solution.memory, solution.offsets):
            spec.mem_id, spec.mem_offset = int(memory) + 1, int(offset)
        tensors = tuple(PlannedTensor(b.name, b.size, b.first, b.last, int(m), int(o), r.accessed_bytes)
                        for b, m, o, r in zip(buffers, solution.memory, solution.offsets, buffer_rules))
        self.plan = ExecuTorchPlan(tuple(self.memory_names), tuple(self.memory_sizes),
                                   tuple(int(h) for h in solution.heights), tensors, _node_names(graph_module),
                                   tuple(solution.proven_optimal), tuple(int(b) for b in solution.lower_bounds))
        return [0] + [int(h) for h in solution.heights]

    def _place(self, problem):
        try:
            solution = OBJECTIVES[self.objective](problem, self.allocator, seconds=self.seconds)
        except ValueError as e:
            if "need at least" in str(e) or "fits no memory" in str(e):
                memories = ", ".join(f"{m.name} {m.size:,} B" for m in problem.memories)
                raise MemoryError(f"the program's tensors do not fit the memories ({memories}): {e}") from None
            raise
        errors = validate_hierarchy(problem, solution)
        if errors:
            raise RuntimeError("tinyarena's ExecuTorch plan is invalid: " + "; ".join(errors[:5]))
        return solution

    def _constraint_rules(self, graph_module, specs, nodes):
        """{id(spec): {"pin": (memory, offset|None), "blocked": {memory}, "inside": (spec, offset)}}."""
        by_name = {n.name: n for n in graph_module.graph.nodes}
        rules = {}

        def spec_of(name, what):
            if name not in by_name or not _is_spec(by_name[name].meta.get("spec")):
                raise ValueError(f"{what}: no tensor node named {name!r} in the graph")
            return by_name[name].meta["spec"]

        for name, memories in self.blocked.items():
            rules.setdefault(id(spec_of(name, "blocked")), {}).setdefault("blocked", set()).update(memories)
        for name, (source, offset) in self.relative.items():
            rules.setdefault(id(spec_of(name, "relative")), {})["inside"] = (spec_of(source, "relative"), offset)
        if self.constraints is not None:
            self._cadence_rules(self.constraints(graph_module), specs, nodes, rules)
        return rules

    def _cadence_rules(self, constraints, specs, nodes, rules):
        for spec in specs:
            rule = rules.setdefault(id(spec), {})
            for mem_id in range(1, len(self.memory_sizes) + 1):
                if constraints.is_mem_id_in_blocklist(spec, mem_id):
                    rule.setdefault("blocked", set()).add(mem_id - 1)
            pin = constraints.get_absolute_placement_constraint(spec)
            if pin is not None:
                rule["pin"] = (pin.pinned_memory_id - 1, pin.offset)
            for node in nodes.get(id(spec), ()):
                source = constraints.get_relative_placement_source(node)
                if source is not None:
                    rule["inside"] = (source.source.meta["spec"], source.offset)


def cadence_constraints(opt_level=1):
    """A ``constraints`` callable for :class:`MemoryPlanning` that builds Cadence's placement
    constraints (``GenerateMemConstraints`` at ``opt_level``), so tinyarena honours what
    Cadence's planners honour. Levels of 2 and more turn cat and slice into no-ops that only
    Cadence's runtime runs."""

    def generate(graph_module):
        import executorch.backends.cadence.aot.ops_registrations  # noqa: F401  (their constraint pass needs them)
        from executorch.backends.cadence.aot.memory_constraints import (
            GenerateMemConstraints,
            MemConstraints,
        )

        constraints = MemConstraints(opt_level)
        GenerateMemConstraints(mem_constraints=constraints)(graph_module)
        return constraints

    return generate


def _is_spec(value):
    return hasattr(value, "mem_id") and hasattr(value, "allocated_memory")


def _node_specs(node):
    value = node.meta.get("spec")
    values = value if isinstance(value, (list, tuple)) else [value]
    return [v for v in values if _is_spec(v)]


def _nodes_by_spec(graph_module):
    nodes = {}
    for node in graph_module.graph.nodes:
        for spec in _node_specs(node):
            nodes.setdefault(id(spec), []).append(node)
    return nodes


def _compute_nodes(nodes):
    """The nodes that write a spec (not ExecuTorch's ``memory.alloc`` placeholders for ``out=``)."""
    return [n for n in nodes if "alloc" not in str(n.target)] or nodes


def _name_of(nodes, spec):
    found = _compute_nodes(nodes.get(id(spec), []))
    return found[0].name if found else f"tensor{id(spec) & 0xffff:x}"


def _spec_name(graph_module, spec):
    return _name_of(_nodes_by_spec(graph_module), spec)


def _accessed_bytes(graph_module, spec, nodes=None):
    """The spec's size x (1 write + one read per user of the nodes that produce it)."""
    nodes = _nodes_by_spec(graph_module) if nodes is None else nodes
    readers = sum(len(n.users) for n in _compute_nodes(nodes.get(id(spec), [])))
    return int(spec.allocated_memory) * (1 + max(readers, 1))


def _planned_specs(graph_module):
    seen = {}
    for node in graph_module.graph.nodes:
        for spec in _node_specs(node):
            if spec.mem_id is not None and spec.mem_id >= 1 and spec.lifetime[0] is not None and not spec.const:
                seen.setdefault(id(spec), spec)
    return list(seen.values())


def _node_names(graph_module):
    """The name of the node at each step of the lifetimes; "" for ExecuTorch's ``memory.alloc`` nodes."""
    return tuple("" if "alloc" in str(n.target) and n.op == "call_function" else n.name
                 for n in graph_module.graph.nodes)


def _problem(tensors):
    return Problem([Buffer(t.size, t.first, t.last, alignment=1, fixed_offset=None, name=t.name) for t in tensors])
