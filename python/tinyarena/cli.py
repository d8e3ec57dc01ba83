"""The ``tinyarena`` command.

    tinyarena plan MODEL [--sram SIZE] [--align N] [--allocator NAME] [--no-inplace]
                         [--transforms LIST | --no-transforms]
                         [--tiling none|auto|rows|patches] [--max-mac-overhead X] [--no-stream-input]
                         [--io model|int8] [--input-layout model|nhwc]
                         [--no-scratch] [--chart PATH] [--json PATH] [--write-offline-plan OUT]
    tinyarena compile MODEL -o DIR [--target cortex-m4|cortex-m7|host] [--no-inplace] [--sram SIZE]
                         [--tiling rows ...] [--memory NAME:SIZE[:ALIGN[:BASE]] ...]
                         [--pin BUFFER=MEMORY[:OFFSET] ...] [--block BUFFER=MEMORY[,MEMORY...] ...] ...
    tinyarena verify MODEL [--target host|cortex-m4|cortex-m7] [--inplace|--no-inplace] [--seed N]
                           [--transforms LIST | --no-transforms]
                           [--tiling none|auto|rows|patches] [--max-mac-overhead X]
                           [--io model|int8] [--input-layout model|nhwc]
                           [--memory NAME:SIZE[:ALIGN[:BASE]] ...] [--pin ...] [--block ...]
    tinyarena alloc PROBLEM.csv [--capacity N] [--timeout S] [--allocator NAME] [-o SOLUTION.csv]
    tinyarena demo [-o DIR]

Exit status: 0 on success, 1 for a bad or unsupported model (or a failed build or
verification), 2 for bad arguments or when the plan needs more SRAM than ``--sram``
(or ``--capacity``) allows.
"""

import argparse
import sys

from . import __version__, _core
from .allocation import allocator_names
from .codegen import TARGETS
from .memories import BLOCK_SYNTAX, MEMORY_SYNTAX, PIN_SYNTAX, parse_block, parse_memory, parse_pin
from .sizes import check_alignment, parse_size

EXIT_BAD_MODEL = 1
EXIT_DOES_NOT_FIT = 2
EXIT_USAGE = 2


def _argument(parse):
    """``parse`` as an argparse type: its ValueError becomes a usage error (exit 2)."""
    def convert(text):
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return convert


def _add_memory_option(p):
    p.add_argument("--memory", type=_argument(parse_memory), action="append", metavar=MEMORY_SYNTAX,
                   help="a memory of the hierarchy, fastest first (repeat; e.g. --memory dtcm:16K --memory "
                   "sram:256K --memory sdram:8M:32:0x60000000): SIZE with K/M suffix, ALIGN bytes, a power of two (default 16), "
                   "BASE its address for tinyarena_memory.ld; one arena per used memory, each in linker section "
                   ".tinyarena.NAME (replaces --sram)")
    p.add_argument("--pin", type=_argument(parse_pin), action="append", metavar=PIN_SYNTAX,
                   help="with --memory: keep a buffer in a memory, at OFFSET bytes from its start if given (repeat; "
                   "BUFFER is an index or name of the plan's buffers as `tinyarena plan --json` lists them; "
                   "OFFSET decimal, 0x hex or K suffix, on the memory's alignment)")
    p.add_argument("--block", type=_argument(parse_block), action="append", metavar=BLOCK_SYNTAX,
                   help="with --memory: memories a buffer may not use (repeat)")


def _alignment(text):
    try:
        return check_alignment(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_plan_options(p):
    p.add_argument("model", help="path to a .tflite model")
    p.add_argument("--sram", type=_argument(parse_size),
                   help="SRAM limit: bytes or K/M suffix (64K); exit 2 if the plan exceeds it")
    p.add_argument("--align", type=_alignment, default=16,
                   help="buffer alignment in bytes, a power of two (default 16, as TFLM)")
    p.add_argument("--allocator", choices=allocator_names(), default="auto",
                   help="placement algorithm (default auto: greedy; if it misses the lower bound, exact, nested-cut, "
                   "time-sweep, pin-repair and skyline search; greedy_size_first_fit is TFLite Micro's rule)")
    p.add_argument("--no-inplace", action="store_true", help="no in-place depthwise or elementwise ops")
    p.add_argument("--tiling", choices=("none", "auto", "rows", "patches"), default="none",
                   help="run runs of spatial ops on row stripes (rows, 1.00x MACs) or patches (recomputed halos: "
                        "give --max-mac-overhead above 1); auto searches both")
    p.add_argument("--max-mac-overhead", type=float, default=1.0, metavar="X",
                   help="with --tiling: MACs at most X times the untiled model's (default 1.0)")
    p.add_argument("--no-stream-input", action="store_true",
                   help="with --tiling: keep the model input whole in SRAM (default: pulled row by row)")
    _add_transform_options(p)
    _add_interface_options(p)


def _add_interface_options(p):
    p.add_argument("--io", choices=("model", "int8"), default="model",
                   help="model: keep the model's inputs and outputs (default); int8: drop the input QUANTIZE and "
                   "output DEQUANTIZE, so the code takes and gives int8 (scale and zero point in model.h)")
    p.add_argument("--input-layout", choices=("model", "nhwc"), default="model",
                   help="nhwc: drop the TRANSPOSE of an NCHW input to NHWC, so the code takes NHWC (default: model)")


def _add_transform_options(p):
    group = p.add_mutually_exclusive_group()
    group.add_argument("--transforms", metavar="LIST", default=None,
                       help="comma-separated transforms to try: fold_pads, zero_copy, reorder (default: all; "
                       "each kept only if the peak does not grow; --tiling applies the graph rewrites first)")
    group.add_argument("--no-transforms", dest="transforms", action="store_const", const="none",
                       help="plan the file's graph in the file's order")


def _parser():
    parser = argparse.ArgumentParser(prog="tinyarena", description="Plan SRAM for int8 TFLite models on MCUs.")
    parser.add_argument("--version", action="version", version=f"tinyarena {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("plan", help="plan a model's SRAM and print the per-op report")
    _add_plan_options(p)
    p.add_argument("--no-scratch", action="store_true", help="plan activations only, no kernel scratch buffers")
    p.add_argument("--chart", metavar="PATH", help="write the allocation chart (PNG) here")
    p.add_argument("--json", metavar="PATH", help="write the plan as JSON here")
    p.add_argument("--write-offline-plan", metavar="OUT", help="write a copy of the model carrying the plan as "
                   "TFLite Micro OfflineMemoryAllocation metadata (needs --no-inplace; transforms off unless "
                   "--transforms is given)")

    c = commands.add_parser("compile", help="write C sources that run the planned model (model.h, model.c, ...)")
    _add_plan_options(c)
    c.add_argument("-o", "--output", required=True, help="output directory")
    c.add_argument("--target", choices=TARGETS, default="cortex-m4", help="default target of the Makefile")
    c.add_argument("--name", help="C name of the model (default: from the file name)")
    _add_memory_option(c)

    v = commands.add_parser("verify", help="build the generated C, run it and compare every byte with TFLite")
    v.add_argument("model", help="path to a .tflite model")
    v.add_argument("--target", choices=TARGETS, default="host", help="host, or Cortex-M4/M7 under QEMU")
    v.add_argument("--inplace", dest="inplace", action="store_true", default=True, help="in-place ops on (default)")
    v.add_argument("--no-inplace", dest="inplace", action="store_false", help="in-place ops off")
    v.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    v.add_argument("--tiling", choices=("none", "auto", "rows", "patches"), default="none",
                   help="verify the tiled schedule the search chooses (input streamed)")
    v.add_argument("--max-mac-overhead", type=float, default=1.0, metavar="X", help="with --tiling: the MAC budget")
    _add_memory_option(v)
    _add_transform_options(v)
    _add_interface_options(v)

    a = commands.add_parser("alloc", help="solve an allocation problem given as MiniMalloc CSV")
    a.add_argument("problem", help="CSV with id,lower,upper,size[,alignment][,offset] (half-open lifetimes; offset pins)")
    a.add_argument("--capacity", type=_argument(parse_size), default=0,
                   help="bytes available: exit 2 if no plan fits (K/M suffix ok)")
    a.add_argument("--timeout", type=float, default=10.0,
                   help="search budget in seconds of work (default 10): deterministic, about that long here")
    a.add_argument("--wall-timeout", type=float, default=0.0, metavar="S",
                   help="also stop after S wall-clock seconds (default 0: never); the plan then depends on load")
    a.add_argument("--allocator", choices=allocator_names(), default="exact", help="placement algorithm (default exact)")
    a.add_argument("-o", "--output", metavar="SOLUTION.csv", help="write the problem with every offset here")

    d = commands.add_parser("demo", help="plan the bundled example network; write the chart and report")
    d.add_argument("-o", "--output", default="tinyarena_demo", help="output directory (default ./tinyarena_demo)")
    return parser


def _write_outputs(plan, chart=None, json_path=None, offline_plan=None):
    if offline_plan:
        plan.write_offline_plan(offline_plan)
        print(f"wrote {offline_plan}")
    if json_path:
        plan.to_json(json_path)
        print(f"wrote {json_path}")
    if chart:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ax = plan.plot(chart)
        plt.close(ax.figure)
        print(f"wrote {chart}")


def _make_plan(args, scratch=True):
    """The plan the arguments ask for, and a line on what the tiling search reached (or None)."""
    from .planner import plan as make_plan

    # An offline plan describes the file's graph in the file's order: no transforms unless asked.
    offline = getattr(args, "write_offline_plan", None) and args.transforms is None
    common = dict(sram=args.sram, align=args.align, allocator=args.allocator, inplace=not args.no_inplace,
                  scratch=scratch, transforms="none" if offline else args.transforms, io=args.io,
                  input_layout=args.input_layout)
    if args.tiling == "none":
        return make_plan(args.model, **common), None
    from .tiling import search

    found = search(args.model, tiling=args.tiling, max_mac_overhead=args.max_mac_overhead,
                   stream_input=not args.no_stream_input, **common)
    best = found.best
    summary = (f"tiling {args.tiling}: peak {best.peak_bytes:,} B at {best.mac_overhead:.3f}x MACs "
               f"(untiled {found.untiled_peak_bytes:,} B); Pareto front: "
               + ", ".join(f"{p.peak_bytes:,} B @ {p.mac_overhead:.3f}x" for p in found.front)
               + f"; searched {found.candidates} segments in {found.seconds:.2f} s\n" + best.describe())
    return best, summary


def _does_not_fit(plan, searched):
    reached = " (the smallest peak the tiling search reached)" if searched else ""
    print(f"error: the plan needs {plan.peak_bytes:,} bytes of SRAM{reached} but the limit is "
          f"{plan.sram_limit:,} bytes", file=sys.stderr)
    return EXIT_DOES_NOT_FIT


def _run_plan(args):
    if args.write_offline_plan and args.tiling != "none":
        raise ValueError("--write-offline-plan describes untiled schedules: drop --tiling")
    plan, tiling_summary = _make_plan(args, scratch=not args.no_scratch)
    print(plan.table())
    if tiling_summary:
        print(tiling_summary)
    _write_outputs(plan, args.chart, args.json, args.write_offline_plan)
    if not plan.fits:
        return _does_not_fit(plan, tiling_summary is not None)
    return 0


def _check_rules_have_memories(args):
    if (args.pin or args.block) and not args.memory:
        raise ValueError("--pin and --block place buffers in the memories of --memory: give --memory")


def _run_compile(args):
    from .codegen import compile as compile_model
    from .memories import place_plan

    if args.memory and args.sram:
        raise ValueError("--memory gives each memory's size: drop --sram")
    _check_rules_have_memories(args)
    plan, tiling_summary = _make_plan(args)
    if tiling_summary:
        print(tiling_summary)
    if not plan.fits:
        return _does_not_fit(plan, tiling_summary is not None)
    placement = place_plan(plan, args.memory, pins=args.pin, blocked=args.block) if args.memory else None
    compiled = compile_model(plan, args.output, target=args.target, name=args.name or args.model, memories=placement)
    arenas = f"arenas {placement.describe()}" if placement else f"arena {compiled.arena_bytes:,} B"
    fragments = ", tinyarena_memory.ld, tinyarena_sections.ld" if placement else ""
    print(f"wrote {compiled.out_dir}/: model.h, model.c ({arenas}, "
          f"{len(compiled.program.calls)} kernel calls), main.c, Makefile{fragments}, kernels/, target/")
    flash = compiled.const_bytes
    print(f"const data (flash): {flash['dsp']:,} B in DSP builds (Cortex-M4/M7), {flash['portable']:,} B portable")
    applied = [f"{r.name} ({r.peak_before:,} -> {r.peak_after:,} B)" for r in plan.transforms if r.applied]
    print(f"transforms: {', '.join(applied) or 'none applied'}")
    print(f"build: make -C {compiled.out_dir} TARGET={args.target}")
    return 0


def _run_verify(args):
    from .verify import VerifyError, verify

    _check_rules_have_memories(args)
    plan = None
    if args.tiling != "none":
        from .tiling import search

        plan = search(args.model, tiling=args.tiling, max_mac_overhead=args.max_mac_overhead, inplace=args.inplace,
                      transforms=args.transforms, io=args.io, input_layout=args.input_layout).best
        print(plan.describe())
    try:
        result = verify(args.model, target=args.target, inplace=args.inplace, seed=args.seed,
                        transforms=args.transforms, plan=plan, memories=args.memory, pins=args.pin,
                        blocked=args.block, io=args.io, input_layout=args.input_layout)
    except VerifyError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_MODEL
    print(result.summary())
    return 0 if result.bit_exact else EXIT_BAD_MODEL


def _run_alloc(args):
    from .allocation import AllocationProblem

    if args.timeout <= 0:
        raise ValueError(f"--timeout must be positive, got {args.timeout}")
    if args.wall_timeout < 0:
        raise ValueError(f"--wall-timeout must not be negative, got {args.wall_timeout}")
    problem = AllocationProblem.from_csv(args.problem, capacity=args.capacity)
    result = problem.solve(args.allocator, seconds=args.timeout, wall_seconds=args.wall_timeout)
    print(f"buffers       {len(problem):,}")
    print(f"height        {result.height:,} B")
    print(f"lower bound   {result.lower_bound:,} B")
    print(f"method        {result.method} ({'proven optimal' if result.proven_optimal else 'not proven optimal'})")
    if args.output:
        problem.to_csv(result, path=args.output)
        print(f"wrote {args.output}")
    if args.capacity and result.height > args.capacity:
        if result.lower_bound > args.capacity:
            need = f"needs at least {result.lower_bound:,} bytes (proven)"
        else:
            need = f"best plan found needs {result.height:,} bytes (not refuted within the budget)"
        print(f"error: does not fit: {need}, allowed {args.capacity:,}", file=sys.stderr)
        return EXIT_DOES_NOT_FIT
    return 0


def _run_demo(args):
    from .demo import run_demo

    run_demo(args.output)
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        commands = {"plan": _run_plan, "compile": _run_compile, "verify": _run_verify, "alloc": _run_alloc,
                    "demo": _run_demo}
        return commands[args.command](args)
    except (_core.ModelError, _core.UnsupportedError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_MODEL
    except ValueError as e:  # valid arguments that do not go together (e.g. an in-place offline plan)
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_MODEL


if __name__ == "__main__":
    sys.exit(main())
