"""Stage 1b: schedule -- an op order that lowers peak SRAM on branchy graphs.

``find_schedule(model)`` searches op orders for the lowest allocation lower bound
(the most bytes live at one op), as the liveness stage measures it: views share
their base's buffer, in-place ops write over an input that dies there, kernel
scratch lives during its op. Graphs of up to ``exact_max_ops`` ops get an exact
dynamic program over the sets of ops already run (optimal unless it runs out of
``max_states`` or ``seconds``, a deterministic work budget worth about that many
seconds, so the order is the same on every run); larger ones, or when it runs out, a beam
search (the same program keeping ``beam_width`` states per step; graphs of up to 400 ops),
then local improvement: each op moved just before its first consumer, or just after its
last producer, when that shrinks the bytes live over the ops it passes without raising the
peak (an op with a smaller output than input runs early, one with a larger output late),
and exact search in windows of 12 consecutive ops around the peak, kept when the peak drops.
All start from the best of the file order, two greedy orders and a demand-driven order (each
op as late as its consumers allow, the longest chain first); the result is never
worse than the file's order (it keeps the file order on ties).
``tinyarena.plan(model, reorder=True)`` plans with the order found.
"""

from . import _core
from .reader import load_model
from .sizes import check_alignment

ScheduleOptions = _core.ScheduleOptions
ScheduleResult = _core.ScheduleResult

__all__ = ["METHODS", "ScheduleOptions", "ScheduleResult", "find_schedule", "order_peak_bytes", "schedule_options"]

METHODS = ("auto", "exact", "beam", "local", "greedy", "file")


def _liveness(inplace, scratch):
    return _core.LivenessOptions(inplace_depthwise=inplace, inplace_elementwise=inplace, scratch=scratch)


def schedule_options(alignment=16, inplace=True, scratch=True, method="auto", exact_max_ops=None, max_states=None,
                     seconds=None, beam_width=None):
    """``ScheduleOptions`` from the planner's keywords (``None`` keeps a default)."""
    check_alignment(alignment)
    limits = {"exact_max_ops": exact_max_ops, "max_states": max_states, "time_limit_seconds": seconds,
              "beam_width": beam_width}
    return _core.ScheduleOptions(
        liveness=_liveness(inplace, scratch),
        alignment=int(alignment),
        method=method,
        **{key: value for key, value in limits.items() if value is not None},
    )


def find_schedule(model, alignment=16, inplace=True, scratch=True, method="auto", exact_max_ops=None, max_states=None,
                  seconds=None, beam_width=None):
    """The op order of ``model`` (path, bytes or ``Graph``) with the lowest peak found.

    - ``method``: ``"auto"`` (exact when small enough, else beam up to 400 ops, then local
      improvement), ``"exact"`` (regardless of size, within the budgets), ``"beam"``,
      ``"local"`` (greedy, then local improvement), ``"greedy"`` or ``"file"``.
    - ``exact_max_ops`` (default 100), ``max_states`` (default 1,000,000) and
      ``seconds`` (per search as deterministic work, default 10; 0 = none) bound the exact
      search; past them it falls back to beam search (``beam_width``, default 64). ``seconds``
      bounds the local improvement too.

    Returns a ``ScheduleResult``: ``order``, ``peak_bytes``, ``file_peak_bytes``,
    ``method`` (the last search run; ``"exact"`` when a search covered every order, ``"local"``
    when local improvement lowered the peak),
    ``proven_optimal``, ``states``, ``seconds``.
    """
    options = schedule_options(alignment, inplace, scratch, method, exact_max_ops, max_states, seconds, beam_width)
    return _core.find_schedule(load_model(model), options)


def order_peak_bytes(model, order=(), alignment=16, inplace=True, scratch=True):
    """The allocation lower bound of ``order`` (op indices; empty = file order)."""
    return _core.order_peak_bytes(load_model(model), list(order), _liveness(inplace, scratch), int(alignment))
