"""The plan as text, JSON and a line of the run summary CSV."""

import csv
import json
import os

from .sizes import format_bytes

_COLUMNS = ("op", "type", "output shape", "live B", "scratch B", "flash B", "MACs", "instr (pred.)")


def _shape(shape):
    return "x".join(str(d) for d in shape) if shape else "-"


def _layout_note(plan, index):
    """` [packed_int16]`: a layer's weight layout, shown when the plan was made under a flash budget."""
    op = plan.graph.ops[index]
    if not plan.flash_limit or op.type not in _LAYOUT_TYPES or op.elided:
        return ""
    return f" [{plan.weight_layout(index)}]"


def _rows(plan):
    ops = plan.graph.ops
    for r in plan.ops:
        yield (
            str(r.index),
            r.type + (" (no copy)" if ops[r.index].elided else "") + _layout_note(plan, r.index),
            _shape(r.output_shape),
            f"{r.live_bytes:,}",
            f"{r.scratch_bytes:,}",
            f"{r.flash_bytes:,}",
            f"{r.macs:,}",
            f"{r.predicted_instructions:,}",
        )


def summary_lines(plan):
    gap = plan.peak_bytes - plan.lower_bound_bytes
    over = f" (+{gap / plan.lower_bound_bytes:.1%} above the lower bound)" if gap and plan.lower_bound_bytes else ""
    lines = [
        f"peak SRAM     {plan.peak_bytes:,} B ({format_bytes(plan.peak_bytes)}) at op {plan.peak_op}{over}",
        f"lower bound   {plan.lower_bound_bytes:,} B",
        *flash_lines(plan),
        f"MACs          {plan.macs:,}",
        f"instructions  {plan.predicted_instructions:,} predicted for {plan.target} (cost model"
        + (f"; {plan.latency_overhead:.3f}x the untiled schedule's)" if getattr(plan, "segments", None) else ")"),
        f"allocator     {plan.allocator} (placement by {plan.allocation_method}, "
        f"{'proven optimal' if plan.proven_optimal else 'not proven optimal'}), alignment {plan.alignment} B, "
        f"{len(plan.buffers)} buffers",
    ]
    if plan.sram_limit:
        verdict = "fits" if plan.fits else f"DOES NOT FIT: needs {plan.peak_bytes:,} B, limit {plan.sram_limit:,} B"
        lines.append(f"SRAM limit    {plan.sram_limit:,} B: {verdict}")
    if getattr(plan, "flash_limit", None):
        verdict = (f"fits ({len(plan.weight_layouts)} layers off their default weight layout; most compact "
                   f"build: {plan.compact_flash_bytes:,} B)" if plan.flash_fits else
                   f"DOES NOT FIT: needs {plan.compact_flash_bytes:,} B in its most compact layouts, "
                   f"limit {plan.flash_limit:,} B")
        lines.append(f"flash limit   {plan.flash_limit:,} B: {verdict}")
    return lines


def flash_lines(plan):
    """Flash of the plan's target build: total, then constant data and estimated kernel code."""
    f = plan.flash
    return [
        f"flash         {f.total:,} B for {plan.target}: {f.constants:,} B constant data + {f.code:,} B kernel code "
        "(estimated)",
        f"              constant data: weights {f.weights:,} B, biases {f.biases:,} B, "
        f"requantization {f.requant:,} B, tables {f.tables:,} B",
    ]


_FLASH_COLUMNS = ("op", "type", "weight layout", "weights B", "biases B", "requant B", "tables B", "code B", "flash B")


def flash_table(plan):
    """Flash per op of the plan's target build (ops with any), then the totals and the budget."""
    rows = [(str(r.index), r.type, plan.weight_layout(r.index) if r.type in _LAYOUT_TYPES else "-",
             *(f"{v:,}" for v in (r.flash.weights, r.flash.biases, r.flash.requant, r.flash.tables, r.flash.code,
                                  r.flash.total)))
            for r in plan.ops if r.flash.total]
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(_FLASH_COLUMNS)]

    def fmt(cells):
        return "  ".join(c.ljust(w) if i in (1, 2) else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    lines = [fmt(_FLASH_COLUMNS), fmt(["-" * w for w in widths]), *(fmt(r) for r in rows), "", *flash_lines(plan)]
    return "\n".join(lines + [line for line in summary_lines(plan) if line.startswith("flash limit")])


_LAYOUT_TYPES = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


def _flash_dict(f):
    return {"weights": f.weights, "biases": f.biases, "requant": f.requant, "tables": f.tables,
            "constants": f.constants, "code": f.code, "total": f.total}


def transform_lines(plan):
    """One line per transform tried: lower bound and peak before -> after, kept or not."""
    if not plan.transforms:
        return []
    lines = ["", "transform    lower bound before -> after       peak before -> after            changes"]
    for r in plan.transforms:
        verdict = "applied" if r.applied else ("no effect" if not r.changes else "not kept: the final peak would grow")
        lines.append(f"{r.name:11s}  {r.lower_bound_before:>12,} -> {r.lower_bound_after:<12,}  "
                     f"{r.peak_before:>12,} -> {r.peak_after:<12,}  {len(r.changes)} ({verdict})")
    return lines


def table(plan):
    rows = list(_rows(plan))
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(_COLUMNS)]
    left_aligned = {1, 2}

    def fmt(cells):
        return "  ".join(c.ljust(w) if i in left_aligned else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    lines = [fmt(_COLUMNS), fmt(["-" * w for w in widths])]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines + [""] + summary_lines(plan) + transform_lines(plan))


def to_dict(plan):
    return {
        "model": plan.model_name,
        "peak_bytes": plan.peak_bytes,
        "peak_op": plan.peak_op,
        "lower_bound_bytes": plan.lower_bound_bytes,
        "target": plan.target,
        "flash_bytes": plan.flash_bytes,
        "flash": _flash_dict(plan.flash),
        "macs": plan.macs,
        "predicted_instructions": plan.predicted_instructions,
        "allocator": plan.allocator,
        "allocation_method": plan.allocation_method,
        "proven_optimal": plan.proven_optimal,
        "alignment": plan.alignment,
        "sram_limit": plan.sram_limit,
        "fits": plan.fits,
        "flash_limit": plan.flash_limit,
        "flash_fits": plan.flash_fits,
        "compact_flash_bytes": plan.compact_flash_bytes,
        "compilable": not plan.compile_issues,
        "not_compilable_reasons": list(plan.compile_issues),
        "transforms": [r.to_dict() for r in plan.transforms],
        "ops": [
            {
                "index": r.index,
                "step": r.step,
                "type": r.type,
                "output_shape": list(r.output_shape),
                "live_bytes": r.live_bytes,
                "scratch_bytes": r.scratch_bytes,
                "arena_top": r.arena_top,
                "flash_bytes": r.flash_bytes,
                "flash": _flash_dict(r.flash),
                "weight_layout": plan.weight_layout(r.index),
                "macs": r.macs,
                "predicted_instructions": r.predicted_instructions,
            }
            for r in plan.ops
        ],
        "buffers": [
            {
                "index": index,  # what the chart labels and --pin INDEX=MEMORY takes
                "name": b.name,
                "kind": b.kind,
                "first": b.first,
                "last": b.last,
                "size": b.size,
                "offset": b.offset,
                "tensors": list(b.tensors),
                "tensor_offsets": [int(plan.liveness.tensor_offset[t]) for t in b.tensors],
            }
            for index, b in enumerate(plan.buffers)
        ],
    }


def to_json(plan, path=None, indent=2):
    text = json.dumps(to_dict(plan), indent=indent)
    if path is not None:
        with open(path, "w") as f:
            f.write(text + "\n")
    return text


SUMMARY_COLUMNS = ("command", "model", "options", "peak_bytes", "lower_bound_bytes", "flash_bytes", "macs",
                   "tiling", "exit_status", "seconds")
"""Columns of the ``--summary`` CSV: one line per run of plan, compile or verify."""


def summary_row(plan, command, model, options, tiling, exit_status, seconds):
    """A line of the summary CSV (values in ``SUMMARY_COLUMNS`` order); ``options`` the flags as a list."""
    return (command, str(model), " ".join(options), plan.peak_bytes, plan.lower_bound_bytes, plan.flash_bytes,
            plan.macs, tiling, exit_status, f"{seconds:.3f}")


def _header(path):
    with open(path, newline="") as f:
        return next(csv.reader(f), None)


def check_summary(path):
    """``ValueError`` unless ``path`` is new, empty or a summary CSV with these columns."""
    if os.path.isfile(path) and os.path.getsize(path) and _header(path) != list(SUMMARY_COLUMNS):
        raise ValueError(f"--summary {path!r} is a CSV with other columns: give a new file or a tinyarena summary")


def append_summary(path, row):
    """Appends ``row`` to the summary CSV at ``path``, after the header when the file is new or empty."""
    new = not os.path.isfile(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        writer = csv.writer(f)
        if new:
            writer.writerow(SUMMARY_COLUMNS)
        writer.writerow(row)
