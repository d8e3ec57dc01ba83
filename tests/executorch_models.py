"""Small PyTorch networks for the ExecuTorch memory-planning tests and benchmark (built here, no
downloads): MobileNetV2-, ResNet-18- and U-Net-style nets, DS-CNN and a transformer encoder block.
Weights come from a seeded generator, so every export is the same program.
``exported(name)`` is the ``torch.export`` program and example input of one of them."""

import torch
from torch import nn


def _conv_bn_relu(cin, cout, kernel=3, stride=1, groups=1, relu=True):
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU6() if relu else nn.Identity())


class InvertedResidual(nn.Module):
    """MobileNetV2's block: 1x1 expand, 3x3 depthwise, 1x1 project; a skip when shapes agree."""

    def __init__(self, cin, cout, stride, expand=6):
        super().__init__()
        hidden = cin * expand
        self.skip = stride == 1 and cin == cout
        self.body = nn.Sequential(_conv_bn_relu(cin, hidden, 1), _conv_bn_relu(hidden, hidden, 3, stride, hidden),
                                  _conv_bn_relu(hidden, cout, 1, relu=False))

    def forward(self, x):
        return x + self.body(x) if self.skip else self.body(x)


class MobileNetV2Style(nn.Module):
    def __init__(self):
        super().__init__()
        blocks = [(16, 16, 1), (16, 24, 2), (24, 24, 1), (24, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1)]
        self.features = nn.Sequential(_conv_bn_relu(3, 16, 3, 2), *[InvertedResidual(*b) for b in blocks])
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(_conv_bn_relu(cin, cout, 3, stride), _conv_bn_relu(cout, cout, 3, relu=False))
        self.down = None if stride == 1 and cin == cout else _conv_bn_relu(cin, cout, 1, stride, relu=False)

    def forward(self, x):
        return torch.relu(self.body(x) + (x if self.down is None else self.down(x)))


class ResNet18Style(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        stages, cin = [], width
        for i, cout in enumerate([width, 2 * width, 4 * width, 8 * width]):
            stages += [BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout, 1)]
            cin = cout
        self.stem = nn.Sequential(_conv_bn_relu(3, width, 3, 2), nn.MaxPool2d(3, 2, 1))
        self.stages = nn.Sequential(*stages)
        self.head = nn.Linear(cin, 10)

    def forward(self, x):
        return self.head(self.stages(self.stem(x)).mean(dim=(2, 3)))


class DSCNN(nn.Module):
    """The keyword-spotting DS-CNN (S): a 10x4 stride-2 conv, four depthwise-separable blocks."""

    def __init__(self, width=64, classes=12):
        super().__init__()
        blocks = [nn.Sequential(_conv_bn_relu(width, width, 3, 1, width), _conv_bn_relu(width, width, 1))
                  for _ in range(4)]
        self.stem = nn.Sequential(nn.Conv2d(1, width, (10, 4), 2, (5, 1)), nn.BatchNorm2d(width), nn.ReLU())
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))


class EncoderBlock(nn.Module):
    """Pre-norm transformer encoder block: multi-head self-attention and a feed-forward net."""

    def __init__(self, dim=64, heads=4, hidden=256):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.ff = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(batch, seq, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        attention = torch.softmax(q @ k.transpose(-2, -1) / (dim // self.heads) ** 0.5, dim=-1)
        x = x + self.out((attention @ v).transpose(1, 2).reshape(batch, seq, dim))
        return x + self.ff(self.norm2(x))


class UNetStyle(nn.Module):
    """Three encoder levels, a bottleneck, and a decoder that upsamples and concatenates the skips."""

    def __init__(self, width=16):
        super().__init__()
        w = [width, 2 * width, 4 * width]
        self.enc = nn.ModuleList([_conv_bn_relu(3, w[0]), _conv_bn_relu(w[0], w[1]), _conv_bn_relu(w[1], w[2])])
        self.bottom = _conv_bn_relu(w[2], w[2])
        self.dec = nn.ModuleList([_conv_bn_relu(2 * w[2], w[1]), _conv_bn_relu(2 * w[1], w[0]),
                                  _conv_bn_relu(2 * w[0], w[0])])
        self.out = nn.Conv2d(w[0], 2, 1)

    def forward(self, x):
        skips = []
        for enc in self.enc:
            x = enc(x)
            skips.append(x)
            x = nn.functional.max_pool2d(x, 2)
        x = self.bottom(x)
        for dec, skip in zip(self.dec, reversed(skips)):
            x = dec(torch.cat([nn.functional.interpolate(x, scale_factor=2.0, mode="nearest"), skip], dim=1))
        return self.out(x)


MODELS = {
    "mobilenetv2": (MobileNetV2Style, (1, 3, 96, 96)),
    "resnet18": (ResNet18Style, (1, 3, 64, 64)),
    "ds-cnn": (DSCNN, (1, 1, 49, 10)),
    "transformer": (EncoderBlock, (1, 32, 64)),
    "unet": (UNetStyle, (1, 3, 64, 64)),
}


def exported(name, quantized=False):
    """(``torch.export.ExportedProgram``, example input) of model ``name`` in eval mode; ``quantized``:
    int8 by PT2E quantization (XNNPACK's symmetric configuration, calibrated on the example), as
    quantize/dequantize ops around float ops, which ExecuTorch's portable runtime runs."""
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make().eval().requires_grad_(False)
    example = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        program = torch.export.export(model, (example,))
        if quantized:
            program = torch.export.export(_quantize(program.module(), example), (example,))
    return program, example


def _quantize(module, example):
    import executorch.kernels.quantized  # noqa: F401  (the out variants of quantize/dequantize)
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    prepared = prepare_pt2e(module, XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))
    prepared(example)
    return convert_pt2e(prepared)


# --- Lowering with each memory planner and running the .pte in ExecuTorch's portable runtime ---

PLANNERS = ("default", "cadence-position", "cadence-greedy", "tinyarena")
CADENCE_OPT_LEVEL = 1  # higher levels turn cat/slice into no-ops that only Cadence's runtime runs


def memory_config(sizes, alignment=16):
    """Cadence's ``MemoryConfig`` of ``sizes`` (bytes, fastest first), each memory ``alignment``-aligned."""
    import executorch.backends.cadence.aot.ops_registrations  # noqa: F401  (Cadence's constraint pass needs them)
    from executorch.backends.cadence.aot.utils import MemoryConfig

    return MemoryConfig(memory_sizes=list(sizes), memory_alignments=[alignment] * len(sizes))


def planning_pass(planner, sizes, alignment=16, allocator="auto", opt_level=CADENCE_OPT_LEVEL):
    """``(MemoryPlanningPass, tinyarena MemoryPlanning or None)`` for ``planner`` (one of PLANNERS) over
    memories of ``sizes``, Cadence's constraints at ``opt_level`` for Cadence and tinyarena; the
    default planner has one memory of unlimited size."""
    from executorch.exir.passes import MemoryPlanningPass
    from tinyarena.executorch import MemoryPlanning, cadence_constraints

    if planner == "default":
        return MemoryPlanningPass(), None
    if planner == "tinyarena":
        ours = MemoryPlanning(sizes, [alignment] * len(sizes), allocator=allocator,
                              constraints=cadence_constraints(opt_level))
        return MemoryPlanningPass(memory_planning_algo=ours), ours
    from executorch.backends.cadence.aot.memory_planning import CadenceMemoryPlanning

    algo = CadenceMemoryPlanning(memory_config(sizes, alignment), opt_level,
                                 PLANNERS.index(planner) - 1).algo
    return MemoryPlanningPass(memory_planning_algo=algo), None


def edge_program(name, quantized=False):
    """(``EdgeProgramManager``, example input) of model ``name``: to_edge once, copied per lowering."""
    from executorch.exir import to_edge

    program, example = exported(name, quantized)
    return to_edge(program), example


def lower(edge, planner, sizes, alignment=16, opt_level=CADENCE_OPT_LEVEL):
    """(``ExecutorchProgramManager``, tinyarena's ``MemoryPlanning`` or None) of a copy of ``edge``."""
    import copy

    from executorch.exir import ExecutorchBackendConfig

    memory_pass, ours = planning_pass(planner, sizes, alignment, opt_level=opt_level)
    program = copy.deepcopy(edge).to_executorch(ExecutorchBackendConfig(memory_planning_pass=memory_pass))
    return program, ours


def buffer_sizes(program):
    """Planned bytes of each memory (ExecuTorch's ``non_const_buffer_sizes`` without the constants' slot)."""
    return list(program.executorch_program.execution_plan[0].non_const_buffer_sizes[1:])


def run(program, example):
    """The outputs of ``program``'s ``.pte`` run by ExecuTorch's portable runtime."""
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(program.buffer).load_method("forward")
    return list(method.execute([example]))


def copy_lower(edge, algorithm):
    """``to_executorch`` of a copy of ``edge`` with ``algorithm`` as the memory-planning algorithm."""
    import copy

    from executorch.exir import ExecutorchBackendConfig
    from executorch.exir.passes import MemoryPlanningPass

    config = ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(memory_planning_algo=algorithm))
    return copy.deepcopy(edge).to_executorch(config)


class Chain(nn.Module):
    """``ops`` elementwise ops, each reading the previous value and one a few steps back (long lifetimes)."""

    def __init__(self, ops):
        super().__init__()
        self.ops = ops

    def forward(self, x):
        values = [x]
        for i in range(self.ops):
            earlier = values[max(0, len(values) - 1 - (i * 7) % 13)]
            values.append(torch.relu(values[-1] + earlier) if i % 2 else values[-1] * 0.5 + earlier)
        return values[-1]


def chain_edge_program(ops=500, shape=(1, 8, 16, 16)):
    """(edge program, example input) of a ``Chain`` of ``ops`` ops (about 2 graph nodes each once planned)."""
    from executorch.exir import to_edge

    example = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        return to_edge(torch.export.export(Chain(ops).eval(), (example,))), example
