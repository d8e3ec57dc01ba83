"""The ``tinyarena`` command.

    tinyarena plan MODEL [--sram SIZE] [--flash SIZE] [--alignment N] [--allocator NAME] [--seconds S] [--inplace|--no-inplace]
                         [--transforms LIST | --no-transforms]
                         [--tiling none|auto|rows|patches] [--max-mac-overhead X] [--max-latency-overhead X]
                         [--objective size|speed]
                         [--no-stream-input] [--stripe-rows LIST] [--patch-grids LIST] [--column-strips LIST]
                         [--io model|int8] [--input-layout model|nhwc]
                         [--no-scratch] [--target TARGET]
                         [--chart PATH] [--json PATH] [--write-offline-plan OUT]
    tinyarena plan MODEL --train SPEC [--sram SIZE] [--flash SIZE] [--no-reorder-updates] [--alignment N]
                         [--allocator NAME] [--seconds S] [--inplace|--no-inplace] [--no-scratch]
                         [--target TARGET] [--chart PATH] [--json PATH]
    tinyarena compile MODEL -o DIR [--target TARGET] [--inplace|--no-inplace] [--sram SIZE] [--flash SIZE]
                         [--tiling rows ...] [--memory NAME:SIZE[:ALIGN[:BASE]] ...]
                         [--pin BUFFER=MEMORY[:OFFSET] ...] [--block BUFFER=MEMORY[,MEMORY...] ...] ...
    tinyarena compile MODEL -o DIR --train SPEC [--no-reorder-updates] [--target TARGET] [--sram SIZE] [--name NAME]
    tinyarena verify MODEL [--target TARGET] [--inplace|--no-inplace] [--seed N]
                           [--transforms LIST | --no-transforms]
                           [--tiling none|auto|rows|patches] [--max-mac-overhead X] [--stripe-rows LIST] ...
                           [--io model|int8] [--input-layout model|nhwc]
                           [--memory NAME:SIZE[:ALIGN[:BASE]] ...] [--pin ...] [--block ...]
    tinyarena verify MODEL --train SPEC [--no-reorder-updates] [--target TARGET] [--seed N] [--learning-rate LR]
    tinyarena alloc PROBLEM.csv [--capacity N] [--seconds S] [--wall-seconds S] [--allocator NAME] [-o SOLUTION.csv]
    tinyarena demo [-o DIR]

TARGET is ``host``, ``cortex-m3`` (portable kernels), ``cortex-m4``, ``cortex-m7``, ``cortex-m33`` or
``cortex-m55`` (DSP kernels; the M55's conv, depthwise and fully connected in Helium); plan and compile default
to ``cortex-m4``, verify to ``host``.

Every command takes ``-q`` (print errors only) and ``-v`` (also the seconds each stage took);
plan, compile and verify take ``--summary PATH`` (append one CSV line per run). ``plan`` warns
(and its JSON says) when ``compile`` would reject the model, naming each op and why.

Exit status: 0 on success, 1 for a bad or unsupported model (or a failed build or
verification), 2 for bad arguments (one line on stderr: values out of range, input files
that do not exist, output paths that cannot be written) or when the plan needs more SRAM
than ``--sram`` (or ``--capacity``) allows, or more flash than ``--flash`` even with every
layer's weights in its smallest layout (with ``--train``: the training step's flash).

``plan`` and ``compile`` take ``--flash SIZE``: each conv, depthwise and fully connected layer of
the ``--target`` build gets the weight layout that minimizes predicted instructions within it.

``plan --train SPEC`` plans one training step (``tinyarena.training``): SPEC is ``bias``,
``last:K``, ``layers:I[,J...][@FRACTION]`` or ``auto`` (the most parameters that fit ``--sram``
/ ``--flash``). ``compile --train SPEC`` also emits the on-device training step
(``tinyarena.training_codegen``); ``verify --train SPEC`` checks one step's gradients and updated
parameters against a float64 numpy reference (exit 1 when one is out of tolerance).
"""

import argparse
import contextlib
import os
import pathlib
import sys
import time

from . import __version__, _core, cli_training, report
from .allocation import allocator_names
from .cli_arguments import argument, existing_file, nonempty, number, positive_ints
from .codegen import TARGETS
from .memories import (
    BLOCK_SYNTAX,
    MEMORY_SYNTAX,
    PIN_SYNTAX,
    parse_block,
    parse_memory,
    parse_pin,
)
from .sizes import check_alignment, parse_limit
from .tiling import COLUMN_STRIPS, MAX_MAC_OVERHEAD, OBJECTIVES, PATCH_GRIDS, STRIPE_ROWS

EXIT_BAD_MODEL = 1
EXIT_DOES_NOT_FIT = 2
EXIT_USAGE = 2
MAX_SECONDS = 1e6
"""Search budgets above it would overflow the core's work units (1e9 a second, int64)."""


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (``tinyarena plan: error: ...``), exit 2."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_memory_option(p):
    p.add_argument("--memory", type=argument(parse_memory), action="append", metavar=MEMORY_SYNTAX,
                   help="a memory of the hierarchy, fastest first (repeat; e.g. --memory dtcm:16K --memory "
                   "sram:256K --memory sdram:8M:32:0x60000000): SIZE with K/M/G suffix, ALIGN bytes, a power of "
                   "two (default 16), BASE its address for tinyarena_memory.ld; one arena per used memory, each in "
                   "linker section .tinyarena.NAME (replaces --sram)")
    p.add_argument("--pin", type=argument(parse_pin), action="append", metavar=PIN_SYNTAX,
                   help="with --memory: keep a buffer in a memory, at OFFSET bytes from its start if given (repeat; "
                   "BUFFER is an index or name of the plan's buffers as `tinyarena plan --json` lists them; "
                   "OFFSET decimal, 0x hex or K suffix, on the memory's alignment)")
    p.add_argument("--block", type=argument(parse_block), action="append", metavar=BLOCK_SYNTAX,
                   help="with --memory: memories a buffer may not use (repeat)")


def _add_output_options(p, summary=True):
    loudness = p.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    loudness.add_argument("-v", "--verbose", action="store_true",
                          help="print also the seconds each stage took")
    if summary:
        p.add_argument("--summary", metavar="PATH",
                       help="append one CSV line for this run (header written when the file is new): "
                       + ", ".join(report.SUMMARY_COLUMNS))


def _add_model_argument(p):
    p.add_argument("model", type=argument(existing_file), help="path to a .tflite model")


def _add_inplace_option(p):
    p.add_argument("--inplace", dest="inplace", action="store_true", default=True,
                   help="in-place depthwise and elementwise ops (default)")
    p.add_argument("--no-inplace", dest="inplace", action="store_false", help="no in-place ops")


def _add_tiling_options(p):
    p.add_argument("--tiling", choices=("none", "auto", "rows", "patches"), default="none",
                   help="run runs of spatial ops on row stripes (rows, 1.00x MACs) or patches (recomputed halos: "
                        "give --max-mac-overhead above 1); auto searches both")
    p.add_argument("--max-mac-overhead", type=number(1.0), metavar="X",
                   help=f"with --tiling: MACs at most X times the untiled model's, X >= 1 (default {MAX_MAC_OVERHEAD})")
    p.add_argument("--max-latency-overhead", type=number(1.0), metavar="X",
                   help="with --tiling: instructions predicted by the cost model at most X times the untiled "
                        "model's, X >= 1 (default: no limit)")
    p.add_argument("--objective", choices=OBJECTIVES,
                   help="with --tiling: what the search minimizes within the budgets: size (default) the peak "
                        "SRAM (with --sram: the fewest MACs that fit), speed the instructions predicted by the "
                        "cost model among plans that fit --sram")
    p.add_argument("--no-stream-input", action="store_true",
                   help="with --tiling: keep the model input whole in SRAM (default: pulled row by row)")
    p.add_argument("--stripe-rows", type=positive_ints, metavar="LIST",
                   help="with --tiling: stripe heights (output rows per round) to try, e.g. 1,2,4 (default "
                   f"{','.join(map(str, STRIPE_ROWS))})")
    p.add_argument("--patch-grids", type=positive_ints, metavar="LIST",
                   help="with --tiling patches or auto: n x n patch grids to try (default "
                   f"{','.join(map(str, PATCH_GRIDS))})")
    p.add_argument("--column-strips", type=positive_ints, metavar="LIST",
                   help="with --tiling patches or auto: column strips to try on row segments, each replaying the "
                   f"rows (rings as narrow as one strip, shared columns recomputed; default "
                   f"{','.join(map(str, COLUMN_STRIPS))})")


def _tiling_keywords(args):
    return dict(tiling=args.tiling, max_mac_overhead=args.max_mac_overhead,
                max_latency_overhead=args.max_latency_overhead, objective=args.objective,
                stream_input=not args.no_stream_input,
                stripe_rows=args.stripe_rows, patch_grids=args.patch_grids, column_strips=args.column_strips)


def _add_plan_options(p):
    _add_model_argument(p)
    p.add_argument("--sram", type=argument(parse_limit),
                   help="SRAM limit: bytes or K/M/G suffix (64K); exit 2 if the plan exceeds it (no limit: leave out)")
    p.add_argument("--flash", type=argument(parse_limit), metavar="SIZE",
                   help="flash budget of the --target build (SIZE as for --sram): each conv, depthwise and fully "
                   "connected layer gets the weight layout (plain int8, packed int8, packed int16) that minimizes "
                   "predicted instructions within it; exit 2 with the bytes needed if even the compact build is "
                   "above it (with --train: the training step's flash limit)")
    p.add_argument("--alignment", type=argument(check_alignment), default=16,
                   help="buffer alignment in bytes, a power of two (default 16, as TFLM)")
    p.add_argument("--allocator", choices=allocator_names(), default="auto",
                   help="placement algorithm (default auto: greedy; if it misses the lower bound, exact, nested-cut, "
                   "time-sweep, pin-repair and skyline search; greedy_size_first_fit is TFLite Micro's rule)")
    p.add_argument("--seconds", type=number(0.0, MAX_SECONDS, above=True), default=0.3, metavar="S",
                   help="budget of the searching allocators in seconds of work (default 0.3): deterministic")
    _add_inplace_option(p)
    _add_tiling_options(p)
    _add_transform_options(p)
    _add_interface_options(p)
    _add_output_options(p)


def _add_interface_options(p):
    p.add_argument("--io", choices=("model", "int8"), default="model",
                   help="model: keep the model's inputs and outputs (default); int8: drop the input QUANTIZE and "
                   "output DEQUANTIZE, so the code takes and gives int8 (scale and zero point in model.h)")
    p.add_argument("--input-layout", choices=("model", "nhwc"), default="model",
                   help="nhwc: drop the TRANSPOSE of an NCHW input to NHWC, so the code takes NHWC (default: model)")


def _add_transform_options(p):
    group = p.add_mutually_exclusive_group()
    group.add_argument("--transforms", metavar="LIST", default=None,
                       type=nonempty("transform names (or --no-transforms)"),
                       help="comma-separated transforms to try: fold_pads, zero_copy, reorder (default: all; "
                       "each kept only if the peak does not grow; --tiling applies the graph rewrites first)")
    group.add_argument("--no-transforms", dest="transforms", action="store_const", const="none",
                       help="plan the file's graph in the file's order")


def _parser():
    parser = _Parser(prog="tinyarena", description="Plan SRAM for int8 TFLite models on MCUs.")
    parser.add_argument("--version", action="version", version=f"tinyarena {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("plan", help="plan a model's SRAM and print the per-op report (and what compile "
                            "would reject)")
    _add_plan_options(p)
    p.add_argument("--no-scratch", action="store_true", help="plan activations only, no kernel scratch buffers")
    p.add_argument("--target", choices=TARGETS, default="cortex-m4",
                   help="the build whose flash the plan reports (default cortex-m4, as compile's)")
    p.add_argument("--chart", metavar="PATH", help="write the allocation chart (PNG) here (folders created)")
    p.add_argument("--json", metavar="PATH", help="write the plan as JSON here (folders created)")
    p.add_argument("--write-offline-plan", metavar="OUT", help="write a copy of the model carrying the plan as "
                   "TFLite Micro OfflineMemoryAllocation metadata (needs --no-inplace; transforms off unless "
                   "--transforms is given)")
    cli_training.add_training_options(p, argument(parse_limit))

    c = commands.add_parser("compile", help="write C sources that run the planned model (model.h, model.c, ...)")
    _add_plan_options(c)
    c.add_argument("-o", "--output", required=True, help="output directory (created)")
    c.add_argument("--target", choices=TARGETS, default="cortex-m4",
                   help="default target of the Makefile, and the build whose flash is reported")
    c.add_argument("--name", type=nonempty("a name"), help="C name of the model (default: from the file name)")
    _add_memory_option(c)
    cli_training.add_compile_training_option(c)

    v = commands.add_parser("verify", help="build the generated C, run it and compare every byte with TFLite")
    _add_model_argument(v)
    v.add_argument("--target", choices=TARGETS, default="host",
                   help="host, or a Cortex-M core under QEMU: cortex-m3 (mps2-an385), cortex-m4 (mps2-an386), "
                   "cortex-m7 (mps2-an500), cortex-m33 (mps2-an505), cortex-m55 (mps3-an547)")
    _add_inplace_option(v)
    v.add_argument("--seed", type=number(0, kind=int), default=0, help="seed of the random inputs (>= 0)")
    _add_tiling_options(v)
    _add_memory_option(v)
    _add_transform_options(v)
    _add_interface_options(v)
    cli_training.add_verify_training_options(v)
    _add_output_options(v)

    a = commands.add_parser("alloc", help="solve an allocation problem given as MiniMalloc CSV")
    a.add_argument("problem", type=argument(existing_file),
                   help="CSV with id,lower,upper,size[,alignment][,offset] (half-open lifetimes; offset pins)")
    a.add_argument("--capacity", type=argument(parse_limit),
                   help="bytes available: auto and exact stop at the first plan within it; exit 2 if none "
                        "fits (K/M/G suffix ok; default: no limit, the lowest plan)")
    a.add_argument("--seconds", type=number(0.0, MAX_SECONDS, above=True), default=10.0, metavar="S",
                   help="search budget in seconds of work (default 10): deterministic, about that long here")
    a.add_argument("--wall-seconds", type=number(0.0, MAX_SECONDS), default=0.0, metavar="S",
                   help="also stop after S wall-clock seconds (default 0: never); the plan then depends on load")
    a.add_argument("--allocator", choices=allocator_names(), default="auto",
                   help="placement algorithm (default auto, as for plan)")
    a.add_argument("-o", "--output", metavar="SOLUTION.csv", help="write the problem with every offset here")
    _add_output_options(a, summary=False)

    d = commands.add_parser("demo", help="plan the bundled example network; write the chart and report")
    d.add_argument("-o", "--output", default="tinyarena_demo", help="output directory (default ./tinyarena_demo)")
    _add_output_options(d, summary=False)
    return parser


class _Run:
    """One run of a command: its arguments, the seconds of each stage, warnings, and the plan
    it made (for the --summary line)."""

    def __init__(self, args, argv):
        self.args, self.argv = args, argv
        self.started = time.perf_counter()
        self.stages = []  # (name, seconds)
        self.plan = None

    @contextlib.contextmanager
    def stage(self, name):
        start = time.perf_counter()
        yield
        self.stages.append((name, time.perf_counter() - start))

    def warn(self, text):
        if not self.args.quiet:
            print(f"warning: {text}", file=sys.stderr)

    def seconds(self):
        return time.perf_counter() - self.started

    def timing_line(self):
        return ("time: " + ", ".join(f"{name} {s:.2f} s" for name, s in self.stages)
                + f"; total {self.seconds():.2f} s")

    def flags(self):
        """The command line after the command word without the model and --summary (abbreviated too)."""
        flags, skip = [], False
        for token in self.argv[self.argv.index(self.args.command) + 1:]:
            name, value = token.partition("=")[::2]
            summary = len(name) > 3 and "--summary".startswith(name)
            if not (skip or summary or token == self.args.model):
                flags.append(token)
            skip = summary and not value
        return flags

    def summary_row(self, status):
        tiled = getattr(self.plan, "tiled", None)
        tiling = self.args.tiling if tiled is None else (
            f"{self.args.tiling} ({len(self.plan.segments)} segments, {self.plan.mac_overhead:.3f}x MACs)")
        return report.summary_row(self.plan, self.args.command, self.args.model, self.flags(), tiling, status,
                                  self.seconds())


def _make_folder(folder, what):
    try:
        pathlib.Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"{what}: cannot create folder {str(folder)!r} ({e.strerror})") from None


def _output_file(path, what):
    """Checks that ``path`` can be a file and creates its folders (ValueError naming ``what`` if not)."""
    if path is None:
        return
    if os.path.isdir(path):
        raise ValueError(f"{what} {path!r} is a directory: give a file path")
    _make_folder(os.path.dirname(path) or ".", what)


def _output_dir(path, what):
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{what} {path!r} exists and is not a directory")
    _make_folder(path, what)


def _check_tiling_options(args):
    """Tiling options without --tiling are errors (they would be ignored); fills the defaults."""
    if args.tiling == "none":
        given = [flag for flag, value in (("--max-mac-overhead", args.max_mac_overhead),
                                          ("--max-latency-overhead", args.max_latency_overhead),
                                          ("--objective", args.objective),
                                          ("--no-stream-input", args.no_stream_input),
                                          ("--stripe-rows", args.stripe_rows),
                                          ("--patch-grids", args.patch_grids),
                                          ("--column-strips", args.column_strips)) if value]
        if given:
            verb = "apply" if len(given) > 1 else "applies"
            raise ValueError(f"{' and '.join(given)} {verb} to tiled schedules only: give --tiling or drop it")
    args.max_mac_overhead = MAX_MAC_OVERHEAD if args.max_mac_overhead is None else args.max_mac_overhead
    args.objective = args.objective or "size"
    args.stripe_rows = args.stripe_rows or STRIPE_ROWS
    args.patch_grids = args.patch_grids or PATCH_GRIDS
    args.column_strips = args.column_strips or COLUMN_STRIPS


def _check_outputs(args):
    summary = getattr(args, "summary", None)
    _output_file(summary, "--summary")
    if summary:
        report.check_summary(summary)
    for path, what in ((getattr(args, "chart", None), "--chart"), (getattr(args, "json", None), "--json"),
                       (getattr(args, "write_offline_plan", None), "--write-offline-plan")):
        _output_file(path, what)


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


def _make_plan(args, run, scratch=True):
    """The plan the arguments ask for, and a line on what the tiling search reached (or None)."""
    from .planner import plan as make_plan

    # An offline plan describes the file's graph in the file's order: no transforms unless asked.
    offline = getattr(args, "write_offline_plan", None) and args.transforms is None
    common = dict(sram=args.sram, alignment=args.alignment, allocator=args.allocator, inplace=args.inplace,
                  scratch=scratch, transforms="none" if offline else args.transforms, seconds=args.seconds,
                  target=args.target, io=args.io, input_layout=args.input_layout)
    if args.flash is not None and args.tiling != "none":
        raise ValueError("--flash chooses weight layouts of untiled plans: drop --tiling")
    if args.tiling == "none":
        common["flash"] = args.flash
        with run.stage("plan"):  # TFLite Micro's offline plan places the float I/O in its arena too
            run.plan = make_plan(args.model, **common, caller_float_io=not getattr(args, "write_offline_plan", None))
        return run.plan, None
    from .tiling import search

    with run.stage("tiling search"):
        found = search(args.model, **_tiling_keywords(args), **common)
    best = run.plan = found.best
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


def _flash_does_not_fit(plan):
    print(f"error: the {plan.target} build needs {plan.compact_flash_bytes:,} bytes of flash in its most compact "
          f"weight layouts but the flash limit is {plan.flash_limit:,} bytes", file=sys.stderr)
    return EXIT_DOES_NOT_FIT


def _run_plan(args, run):
    cli_training.check_training_options(args)
    if args.train is not None:
        return cli_training.run_training_plan(args, run, _write_outputs)
    if args.write_offline_plan and args.tiling != "none":
        raise ValueError("--write-offline-plan describes untiled schedules: drop --tiling")
    plan, tiling_summary = _make_plan(args, run, scratch=not args.no_scratch)
    with run.stage("compile check"):
        issues = plan.compile_issues
    print(plan.table())
    if tiling_summary:
        print(tiling_summary)
    for issue in issues:
        run.warn(f"not compilable: {issue}")
    with run.stage("outputs"):
        _write_outputs(plan, args.chart, args.json, args.write_offline_plan)
    if not plan.fits:
        return _does_not_fit(plan, tiling_summary is not None)
    if not plan.flash_fits:
        return _flash_does_not_fit(plan)
    return 0


def _check_rules_have_memories(args):
    if (args.pin or args.block) and not args.memory:
        raise ValueError("--pin and --block place buffers in the memories of --memory: give --memory")


def _run_compile(args, run):
    from .codegen import compile as compile_model
    from .memories import place_plan

    cli_training.check_reorder_option(args)
    if args.train is not None:
        return cli_training.run_training_compile(args, run, _output_dir)
    if args.memory and args.sram:
        raise ValueError("--memory gives each memory's size: drop --sram")
    _check_rules_have_memories(args)
    _output_dir(args.output, "-o")
    plan, tiling_summary = _make_plan(args, run)
    if tiling_summary:
        print(tiling_summary)
    if not plan.fits:
        return _does_not_fit(plan, tiling_summary is not None)
    if not plan.flash_fits:
        return _flash_does_not_fit(plan)
    with run.stage("placement"):
        placement = place_plan(plan, args.memory, pins=args.pin, blocked=args.block) if args.memory else None
    with run.stage("compile"):
        compiled = compile_model(plan, args.output, target=args.target, name=args.name or args.model,
                                 memories=placement)
    arenas = f"arenas {placement.describe()}" if placement else f"arena {compiled.arena_bytes:,} B"
    fragments = ", tinyarena_memory.ld, tinyarena_sections.ld" if placement else ""
    print(f"wrote {compiled.out_dir}/: model.h, model.c ({arenas}, "
          f"{len(compiled.program.calls)} kernel calls), main.c, Makefile{fragments}, kernels/, target/")
    flash = compiled.const_bytes
    print(f"const data (flash): {flash['dsp']:,} B in DSP builds (Cortex-M4/M7/M33/M55), "
          f"{flash['portable']:,} B portable (host, Cortex-M3)")
    if plan.flash_limit:
        print(report.flash_table(plan))
    applied = [f"{r.name} ({r.peak_before:,} -> {r.peak_after:,} B)" for r in plan.transforms if r.applied]
    print(f"transforms: {', '.join(applied) or 'none applied'}")
    print(f"build: make -C {compiled.out_dir} TARGET={args.target}")
    return 0


def _run_verify(args, run):
    from .verify import VerifyError, verify

    cli_training.check_reorder_option(args)
    if args.train is not None:
        return cli_training.run_training_verify(args, run, EXIT_BAD_MODEL)
    _check_rules_have_memories(args)
    plan = None
    if args.tiling != "none":
        from .tiling import search

        with run.stage("tiling search"):
            plan = search(args.model, inplace=args.inplace, transforms=args.transforms, io=args.io,
                          input_layout=args.input_layout, **_tiling_keywords(args)).best
        print(plan.describe())
    try:
        with run.stage("verify"):
            result = verify(args.model, target=args.target, inplace=args.inplace, seed=args.seed,
                            transforms=args.transforms, plan=plan, memories=args.memory, pins=args.pin,
                            blocked=args.block, io=args.io, input_layout=args.input_layout)
    except VerifyError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_MODEL
    run.plan = result.plan
    print(result.summary())
    return 0 if result.bit_exact else EXIT_BAD_MODEL


def _run_alloc(args, run):
    from .allocation import Problem

    _output_file(args.output, "-o")
    problem = Problem.from_csv(args.problem, capacity=args.capacity or 0)
    with run.stage("allocation"):
        result = problem.solve(args.allocator, seconds=args.seconds, wall_seconds=args.wall_seconds)
    print(f"buffers       {len(problem):,}")
    print(f"height        {result.height:,} B")
    print(f"lower bound   {result.lower_bound:,} B")
    print(f"method        {result.method} ({'proven optimal' if result.proven_optimal else 'not proven optimal'})")
    if args.output:
        problem.to_csv(args.output, offsets=result)
        print(f"wrote {args.output}")
    if args.capacity and result.height > args.capacity:
        if result.lower_bound > args.capacity:
            need = f"needs at least {result.lower_bound:,} bytes (proven)"
        else:
            need = f"best plan found needs {result.height:,} bytes (not refuted within the budget)"
        print(f"error: does not fit: {need}, allowed {args.capacity:,}", file=sys.stderr)
        return EXIT_DOES_NOT_FIT
    return 0


def _run_demo(args, run):
    from .demo import run_demo

    _output_dir(args.output, "-o")
    with run.stage("demo"):
        run_demo(args.output)
    return 0


_COMMANDS = {"plan": _run_plan, "compile": _run_compile, "verify": _run_verify, "alloc": _run_alloc,
             "demo": _run_demo}


def _error(text, status):
    print(f"error: {text}", file=sys.stderr)
    return status


def _run_command(args, run):
    """The command's exit status; its errors as one line on stderr."""
    try:
        if hasattr(args, "tiling"):
            _check_tiling_options(args)
        _check_outputs(args)
        return _COMMANDS[args.command](args, run)
    except (_core.ModelError, _core.UnsupportedError) as e:
        return _error(e, EXIT_BAD_MODEL)
    except ValueError as e:  # valid arguments that do not go together (e.g. an in-place offline plan)
        return _error(e, EXIT_USAGE)
    except OSError as e:
        return _error(f"{e.strerror}: {e.filename}" if e.filename else e, EXIT_BAD_MODEL)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    run = _Run(args, argv)
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink if args.quiet else sys.stdout):
        status = _run_command(args, run)
        if getattr(args, "summary", None) and run.plan is not None:
            report.append_summary(args.summary, run.summary_row(status))
        if args.verbose:
            print(run.timing_line())
    return status


if __name__ == "__main__":
    sys.exit(main())
