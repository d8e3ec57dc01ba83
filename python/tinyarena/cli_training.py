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
    add_reorder_option(p)


def add_reorder_option(p):
    """--no-reorder-updates (plan, compile and verify parsers)."""
    p.add_argument("--no-reorder-updates", dest="reorder_updates", action="store_false",
                   help="with --train: compute every whole weight gradient, then apply every update after the "
                   "backward pass (default: each update right after its gradient, a weight gradient one output "
                   "channel at a time)")


def check_reorder_option(args):
    """ValueError for --no-reorder-updates without --train (refused, not ignored)."""
    if args.train is None and not args.reorder_updates:
        raise ValueError("--no-reorder-updates goes with --train")


def check_training_options(args):
    """ValueError for options that mean nothing with (or without) --train: refused, not ignored."""
    check_reorder_option(args)
    if args.train is None:
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


SPEC_HELP = ("emit the on-device training step too, updating SPEC (bias, last:K or layers:I[,J...][@FRACTION]; "
             "@FRACTION: the weights of the first FRACTION of the output channels, not for DEPTHWISE_CONV_2D): "
             "tinyarena_<name>_train_step(input, label, learning_rate) beside invoke; the file's graph in file "
             "order, one arena, portable kernels")


def add_compile_training_option(p):
    """--train and --no-reorder-updates on the compile parser."""
    p.add_argument("--train", metavar="SPEC", help=SPEC_HELP)
    add_reorder_option(p)


def add_verify_training_options(p):
    """--train, --no-reorder-updates and --learning-rate on the verify parser."""
    p.add_argument("--train", metavar="SPEC", help="check one training step updating SPEC instead of inference: "
                   "every gradient and updated parameter against a float64 numpy reference of the quantized graph")
    add_reorder_option(p)
    p.add_argument("--learning-rate", type=float, default=0.01, metavar="LR",
                   help="with --train: the step's learning rate (default 0.01)")


def _refuse_with_train(args):
    """ValueError naming the options a training build does not take (refused, not ignored)."""
    defaults = {"tiling": "none", "transforms": None, "io": "model", "input_layout": "model", "memory": None,
                "pin": None, "block": None}
    given = [f"--{name.replace('_', '-')}" for name, default in defaults.items()
             if getattr(args, name, default) not in (default, [], ())]
    if given:
        raise ValueError(f"--train compiles the file's graph in file order into one arena: drop {', '.join(given)}")


def run_training_compile(args, run, output_dir):
    """``compile --train``: plan the step, write its C, print what was written."""
    from .codegen import compile as compile_model
    from .training import plan_training

    _refuse_with_train(args)
    output_dir(args.output, "-o")
    with run.stage("training plan"):
        plan = run.plan = plan_training(args.model, args.train, sram=args.sram, alignment=args.alignment,
                                        allocator=args.allocator, seconds=args.seconds, inplace=args.inplace,
                                        reorder_updates=args.reorder_updates, target=args.target)
    if not plan.fits:
        print(f"error: the training step needs {plan.peak_bytes:,} bytes of SRAM but the limit is "
              f"{plan.sram_limit:,} bytes", file=sys.stderr)
        return EXIT_DOES_NOT_FIT
    with run.stage("compile"):
        compiled = compile_model(plan, args.output, target=args.target, name=args.name or args.model)
    print(f"wrote {compiled.out_dir}/: model.h, model.c (arena {compiled.arena_bytes:,} B with "
          f"{plan.trainable_bytes:,} B of trainable tensors; tinyarena_{compiled.name}_invoke, _train_init, "
          f"_train_step), main.c (training harness), Makefile, kernels/, target/")
    print(f"training spec {plan.spec}: {plan.updated_parameters:,} parameters in {len(plan.updates)} weight layers")
    print(f"build: make -C {compiled.out_dir} TARGET={args.target}  (portable kernels: -DTA_NO_SIMD)")
    return 0


def run_training_verify(args, run, exit_failed):
    """``verify --train``: one step against the float64 reference; the table of errors per tensor."""
    from .training_codegen import verify_training
    from .verify import VerifyError

    _refuse_with_train(args)
    try:
        with run.stage("verify training step"):
            check = verify_training(args.model, args.train, target=args.target, learning_rate=args.learning_rate,
                                    seed=args.seed, reorder_updates=args.reorder_updates)
    except VerifyError as e:
        print(f"error: {e}", file=sys.stderr)
        return exit_failed
    print(check.table())
    return 0 if check.ok else exit_failed
