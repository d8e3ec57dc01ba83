"""Compare allocators and in-place options on every model given (or on builder models).

    python examples/compare_allocators.py [MODEL.tflite ...]
"""

import sys

import tinyarena
from tinyarena import allocation, builder


def models(paths):
    if paths:
        return [(p, p) for p in paths]
    return [("mobilenet_v1(0.25, 96)", builder.mobilenet_v1(0.25, 96)), ("ds_cnn()", builder.ds_cnn()),
            ("resnet8()", builder.resnet8())]


def main(paths):
    print(f"{'model':28s} {'allocator':22s} {'inplace':>7s} {'peak B':>10s} {'lower bound B':>14s}")
    for name, model in models(paths):
        graph = tinyarena.load_model(model)
        for allocator in allocation.allocator_names():
            for inplace in (False, True):
                plan = tinyarena.plan(graph, allocator=allocator, inplace=inplace)
                print(f"{name:28s} {allocator:22s} {inplace!s:>7s} {plan.peak_bytes:10,d} {plan.lower_bound_bytes:14,d}")


if __name__ == "__main__":
    main(sys.argv[1:])
