"""``tinyarena plan MODEL --train SPEC``: the options and the run of a training-step plan
(``tinyarena.training``), kept beside ``cli.py``."""

import sys

EXIT_DOES_NOT_FIT = 2


def add_training_options(p, limit_type):
    """--train and --no-reorder-updates on the plan command's parser (--flash is a plan option)."""
    p.add_argument("--train", metavar="SPEC", help="plan one training step instead of inference, updating SPEC: "
                   "bias, last:K, layers:I[,J...][@FRACTION] (op indices of weight layers) or auto (the most "
                   "parameters that fit --sram/--flash); the table gains activation, scratch, trainable and "
                   "gradient columns (file order, no transforms)")
    p.add_argument("--no-reorder-updates", dest="reorder_updates", action="store_false",
                   help="with --train: apply every update after the backward pass (default: each right after "
                   "its gradient)")


def check_training_options(args):
    """ValueError for options that mean nothing with (or without) --train: refused, not ignored."""
    if args.train is None:
        if not args.reorder_updates:
            raise ValueError("--no-reorder-updates goes with --train")
        return
    given = [flag for flag, on in (("--tiling", args.tiling != "none"), ("--write-offline-plan", args.write_offline_plan),
                                   ("--transforms/--no-transforms", args.transforms is not None),
                                   ("--io", args.io != "model"), ("--input-layout", args.input_layout != "model"))
             if on]
    if given:
        raise ValueError(f"--train plans the file's graph in file order: drop {', '.join(given)}")


def run_training_plan(args, run, write_outputs):
    """Plans, prints the table, writes --chart/--json; exit status 2 over --sram or --flash."""
    from .training import plan_training

    with run.stage("training plan"):
        plan = run.plan = plan_training(args.model, args.train, sram=args.sram, flash=args.flash,
                                        reorder_updates=args.reorder_updates, alignment=args.alignment,
                                        allocator=args.allocator, seconds=args.seconds, inplace=args.inplace,
                                        scratch=not args.no_scratch, target=args.target)
    print(plan.table())
    with run.stage("outputs"):
        write_outputs(plan, args.chart, args.json)
    if plan.fits:
        return 0
    if plan.sram_limit and plan.peak_bytes > plan.sram_limit:
        what = f" (spec {plan.spec}, the smallest auto tried)" if args.train.strip() == "auto" else ""
        print(f"error: the training step needs {plan.peak_bytes:,} bytes of SRAM{what} but the limit is "
              f"{plan.sram_limit:,} bytes", file=sys.stderr)
    if plan.flash_limit and plan.flash_bytes > plan.flash_limit:
        print(f"error: the training step needs {plan.flash_bytes:,} bytes of flash but the limit is "
              f"{plan.flash_limit:,} bytes", file=sys.stderr)
    return EXIT_DOES_NOT_FIT
