"""The ``tinyarena`` command.

    tinyarena plan MODEL [--sram SIZE] [--align N] [--allocator NAME] [--no-inplace]
                         [--no-scratch] [--chart PATH] [--json PATH] [--write-offline-plan OUT]
    tinyarena demo [-o DIR]

Exit status: 0 on success, 1 for a bad model, 2 for bad arguments or when the
plan needs more SRAM than ``--sram`` allows.
"""

import argparse
import sys

from . import __version__, _core
from .allocation import allocator_names
from .sizes import parse_size

EXIT_BAD_MODEL = 1
EXIT_DOES_NOT_FIT = 2
EXIT_USAGE = 2


def _size(text):
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _alignment(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"alignment must be a positive whole number of bytes, got {text!r}")
    return value


def _parser():
    parser = argparse.ArgumentParser(prog="tinyarena", description="Plan SRAM for int8 TFLite models on MCUs.")
    parser.add_argument("--version", action="version", version=f"tinyarena {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("plan", help="plan a model's SRAM and print the per-op report")
    p.add_argument("model", help="path to a .tflite model")
    p.add_argument("--sram", type=_size, help="SRAM limit: bytes or K/M suffix (64K); exit 2 if the plan exceeds it")
    p.add_argument("--align", type=_alignment, default=16, help="buffer alignment in bytes (default 16, as TFLM)")
    p.add_argument("--allocator", choices=allocator_names(), default="greedy_size_first_fit",
                   help="placement algorithm (default greedy_size_first_fit, TFLite Micro's rule)")
    p.add_argument("--no-inplace", action="store_true", help="no in-place depthwise or elementwise ops")
    p.add_argument("--no-scratch", action="store_true", help="plan activations only, no kernel scratch buffers")
    p.add_argument("--chart", metavar="PATH", help="write the allocation chart (PNG) here")
    p.add_argument("--json", metavar="PATH", help="write the plan as JSON here")
    p.add_argument("--write-offline-plan", metavar="OUT", help="write a copy of the model carrying the plan as "
                   "TFLite Micro OfflineMemoryAllocation metadata (needs --no-inplace)")

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


def _run_plan(args):
    from .planner import plan as make_plan

    plan = make_plan(args.model, sram=args.sram, align=args.align, allocator=args.allocator,
                     inplace=not args.no_inplace, scratch=not args.no_scratch)
    print(plan.table())
    _write_outputs(plan, args.chart, args.json, args.write_offline_plan)
    if not plan.fits:
        print(f"error: the plan needs {plan.peak_bytes:,} bytes of SRAM but the limit is {plan.sram_limit:,} bytes",
              file=sys.stderr)
        return EXIT_DOES_NOT_FIT
    return 0


def _run_demo(args):
    from .demo import run_demo

    run_demo(args.output)
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        return {"plan": _run_plan, "demo": _run_demo}[args.command](args)
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
