"""Well-known tinyML networks (random weights) and synthetic benchmark graphs, as ``.tflite`` bytes.

Layer structures follow the reference exports: ``mobilenet_v1`` and ``ds_cnn`` and ``resnet8``
match the MLPerf Tiny int8 models op for op; ``mobilenet_v2`` follows Keras' MobileNetV2.
"""

from typing import Sequence, Tuple

from .args import positive_int
from .boundary import model_input, model_output
from .model_builder import ModelBuilder
from .tensor import Tensor

_MOBILENET_V1_BLOCKS = (
    ((1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512)) + ((1, 512),) * 5 + ((2, 1024), (1, 1024))
)
"""(depthwise stride, pointwise filters) of MobileNetV1's 13 separable blocks."""

_MOBILENET_V2_STAGES = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)
"""(expansion, filters, repeats, first stride) of MobileNetV2's inverted-residual stages."""


def _check_alpha(alpha) -> float:
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not alpha > 0:
        raise ValueError(f"alpha must be a positive number, got {alpha!r}")
    return float(alpha)


def _classifier_head(mb: ModelBuilder, x: Tensor, num_classes: int) -> Tensor:
    """Global AVERAGE_POOL_2D, RESHAPE to [1, C], FULLY_CONNECTED and SOFTMAX (MLPerf Tiny style)."""
    x = mb.average_pool2d(x, pool=x.shape[1:3])
    x = mb.reshape(x, [x.shape[0], -1])
    return mb.softmax(mb.fully_connected(x, num_classes))


def mobilenet_v1(
    alpha: float = 0.25, resolution: int = 96, channels: int = 3, num_classes: int = 2, seed: int = 0,
    float_io: bool = False, nchw_input: bool = False,
) -> bytes:
    """MobileNetV1 (the MLPerf Tiny visual-wake-words network at the defaults): 31 ops.

    ``float_io``: float32 input and output around the int8 network (QUANTIZE first, DEQUANTIZE
    last), as TensorFlow's converter keeps them; ``nchw_input``: an NCHW input transposed to NHWC
    first, as a PyTorch export has it (see ``tinyarena.builder.boundary``)."""
    alpha = _check_alpha(alpha)
    resolution = positive_int(resolution, "resolution")
    num_classes = positive_int(num_classes, "num_classes")
    mb = ModelBuilder(f"mobilenet_v1_{alpha}_{resolution}", seed)
    x = model_input(mb, [1, resolution, resolution, positive_int(channels, "channels")], float_io, nchw_input)
    x = mb.conv2d(x, max(1, int(32 * alpha)), kernel=3, stride=2, activation="RELU6")
    for stride, filters in _MOBILENET_V1_BLOCKS:
        x = mb.depthwise_conv2d(x, kernel=3, stride=stride, activation="RELU6")
        x = mb.conv2d(x, max(1, int(filters * alpha)), kernel=1, activation="RELU6")
    model_output(mb, _classifier_head(mb, x, num_classes), float_io)
    return mb.build()


def _make_divisible(value: float, divisor: int = 8) -> int:
    """Keras' channel rounding: nearest multiple of ``divisor``, never below 90% of ``value``."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _same_pad_for_stride2(shape: Sequence[int], kernel: int = 3) -> Tuple[Tuple[int, int], ...]:
    """Keras ``correct_pad``: explicit padding that makes a stride-2 VALID conv act like SAME."""
    half = kernel // 2
    rows, cols = ((half - (1 - size % 2), half) for size in shape[1:3])
    return ((0, 0), rows, cols, (0, 0))


def _inverted_residual(
    mb: ModelBuilder, x: Tensor, expansion: int, filters: int, stride: int, explicit_pad: bool
) -> Tensor:
    """MobileNetV2 block: 1x1 expand (RELU6), 3x3 depthwise (RELU6), 1x1 project, ADD if shapes allow."""
    y = x
    if expansion != 1:
        y = mb.conv2d(y, expansion * x.shape[3], kernel=1, activation="RELU6")
    if stride == 2 and explicit_pad:
        y = mb.pad(y, _same_pad_for_stride2(y.shape))
        y = mb.depthwise_conv2d(y, kernel=3, stride=2, padding="VALID", activation="RELU6")
    else:
        y = mb.depthwise_conv2d(y, kernel=3, stride=stride, activation="RELU6")
    y = mb.conv2d(y, filters, kernel=1)
    return mb.add(x, y) if stride == 1 and x.shape == y.shape else y


def mobilenet_v2(
    alpha: float = 1.0, resolution: int = 224, num_classes: int = 1000, explicit_pad: bool = False, seed: int = 0,
    float_io: bool = False, nchw_input: bool = False,
) -> bytes:
    """MobileNetV2 as Keras builds it: 65 ops (69 with ``explicit_pad``) at any alpha/resolution.

    With ``explicit_pad=True`` every stride-2 depthwise conv is preceded by a PAD op and uses
    VALID padding, as TensorFlow exports it. The head is MEAN, FULLY_CONNECTED, SOFTMAX.
    ``float_io`` and ``nchw_input`` add the converters' I/O boundary ops as in ``mobilenet_v1``.
    Calibration runs the float network on one full-size sample: 1.0@224 builds in about 0.3 s
    on an idle 2-core machine (up to ~3 s when the cores are busy).
    """
    alpha = _check_alpha(alpha)
    resolution = positive_int(resolution, "resolution")
    num_classes = positive_int(num_classes, "num_classes")
    mb = ModelBuilder(f"mobilenet_v2_{alpha}_{resolution}", seed)
    x = model_input(mb, [1, resolution, resolution, 3], float_io, nchw_input)
    x = mb.conv2d(x, _make_divisible(32 * alpha), kernel=3, stride=2, activation="RELU6")
    for expansion, filters, repeats, first_stride in _MOBILENET_V2_STAGES:
        for i in range(repeats):
            stride = first_stride if i == 0 else 1
            x = _inverted_residual(mb, x, expansion, _make_divisible(filters * alpha), stride, explicit_pad)
    last_filters = _make_divisible(1280 * alpha) if alpha > 1.0 else 1280
    x = mb.conv2d(x, last_filters, kernel=1, activation="RELU6")
    x = mb.mean(x, axes=(1, 2))
    model_output(mb, mb.softmax(mb.fully_connected(x, num_classes)), float_io)
    return mb.build()


def ds_cnn(
    input_shape: Sequence[int] = (1, 49, 10, 1),
    filters: int = 64,
    num_blocks: int = 4,
    num_classes: int = 12,
    seed: int = 0,
) -> bytes:
    """DS-CNN keyword spotting (MLPerf Tiny KWS at the defaults): 13 ops.

    A 10x4 stride-2 conv, ``num_blocks`` depthwise-separable blocks, average pool, FC, softmax.
    """
    filters = positive_int(filters, "filters")
    num_blocks = positive_int(num_blocks, "num_blocks")
    num_classes = positive_int(num_classes, "num_classes")
    mb = ModelBuilder("ds_cnn", seed)
    x = mb.conv2d(mb.input(input_shape), filters, kernel=(10, 4), stride=2, activation="RELU")
    for _ in range(num_blocks):
        x = mb.depthwise_conv2d(x, kernel=3, activation="RELU")
        x = mb.conv2d(x, filters, kernel=1, activation="RELU")
    mb.output(_classifier_head(mb, x, num_classes))
    return mb.build()


def resnet8(resolution: int = 32, num_classes: int = 10, base_filters: int = 16, seed: int = 0) -> bytes:
    """ResNet-8 for CIFAR-10 (MLPerf Tiny image classification at the defaults): 16 ops.

    Three residual stacks (filters x1, x2, x4; the last two downsample with a 1x1 stride-2
    shortcut conv), joined by ADD with fused RELU.
    """
    resolution = positive_int(resolution, "resolution")
    filters = positive_int(base_filters, "base_filters")
    num_classes = positive_int(num_classes, "num_classes")
    mb = ModelBuilder("resnet8", seed)
    x = mb.conv2d(mb.input([1, resolution, resolution, 3]), filters, kernel=3, activation="RELU")
    for stage, stage_filters in enumerate((filters, 2 * filters, 4 * filters)):
        stride = 1 if stage == 0 else 2
        y = mb.conv2d(x, stage_filters, kernel=3, stride=stride, activation="RELU")
        y = mb.conv2d(y, stage_filters, kernel=3)
        shortcut = x if stage == 0 else mb.conv2d(x, stage_filters, kernel=1, stride=stride)
        x = mb.add(shortcut, y, activation="RELU")
    mb.output(_classifier_head(mb, x, num_classes))
    return mb.build()


def chain(num_ops: int = 1000, shape: Sequence[int] = (1, 8, 8, 8), seed: int = 0) -> bytes:
    """A single path of exactly ``num_ops`` small ops, for planner speed benchmarks.

    The ops cycle through 1x1 expand conv (2x channels, RELU6), 3x3 depthwise (RELU6), 1x1
    project conv, so tensor sizes alternate. Calibration is the ordinary float pass: the tensors
    are tiny, so 1,000 ops build in about 0.6 s (mostly Python overhead per layer).
    """
    num_ops = positive_int(num_ops, "num_ops")
    if len(shape) != 4:
        raise ValueError(f"chain: shape must be NHWC (rank 4), got {tuple(shape)}")
    mb = ModelBuilder(f"chain_{num_ops}", seed)
    x = mb.input(shape)
    channels = x.shape[-1]
    steps = (
        lambda t: mb.conv2d(t, 2 * channels, kernel=1, activation="RELU6"),
        lambda t: mb.depthwise_conv2d(t, kernel=3, activation="RELU6"),
        lambda t: mb.conv2d(t, channels, kernel=1),
    )
    for i in range(num_ops):
        x = steps[i % len(steps)](x)
    mb.output(x)
    return mb.build()


def training_demo_cnn(seed: int = 0) -> bytes:
    """The small CNN the on-device training tests and figures use (8x8x1 input, 2 classes):
    CONV_2D 3x3 (4 channels, RELU), CONV_2D 3x3 stride 2 (4, RELU), AVERAGE_POOL_2D 2x2, RESHAPE,
    FULLY_CONNECTED to 2, SOFTMAX; per-channel conv and fully connected weights."""
    mb = ModelBuilder("training_demo_cnn", seed)
    x = mb.input([1, 8, 8, 1])
    x = mb.conv2d(x, 4, kernel=3, activation="RELU")
    x = mb.conv2d(x, 4, kernel=3, stride=2, activation="RELU")
    x = mb.reshape(mb.average_pool2d(x, pool=2), [1, -1])
    mb.output(mb.softmax(mb.fully_connected(x, 2)))
    return mb.build()


def demo_model(seed: int = 0) -> bytes:
    """The network ``tinyarena demo`` plans: 48x48x3 input, 20 ops at the default seed.

    Mixes a strided stem conv, a residual depthwise-separable block (ADD), max pooling, a
    two-branch block joined by CONCATENATION (plus the requantizing QUANTIZE a converter
    inserts when the branches' ranges differ), a second residual block, average pooling and a
    two-layer FC head with SOFTMAX, so tensor lifetimes overlap in interesting ways.
    """
    mb = ModelBuilder("demo", seed)
    x = mb.input([1, 48, 48, 3])
    stem = mb.conv2d(x, 16, kernel=3, stride=2, activation="RELU6")
    y = mb.depthwise_conv2d(stem, kernel=3, activation="RELU6")
    y = mb.add(stem, mb.conv2d(y, 16, kernel=1))
    y = mb.max_pool2d(y, pool=2)
    left = mb.conv2d(y, 16, kernel=1, activation="RELU")
    right = mb.conv2d(mb.depthwise_conv2d(y, kernel=3, activation="RELU"), 16, kernel=1, activation="RELU")
    y = mb.concatenation([left, right], axis=3)
    y = mb.depthwise_conv2d(y, kernel=3, stride=2, activation="RELU6")
    y = mb.conv2d(y, 48, kernel=1, activation="RELU6")
    z = mb.conv2d(mb.depthwise_conv2d(y, kernel=3, activation="RELU6"), 48, kernel=1)
    y = mb.add(y, z)
    y = mb.average_pool2d(y, pool=y.shape[1:3])
    y = mb.reshape(y, [1, -1])
    y = mb.fully_connected(y, 32, activation="RELU")
    mb.output(mb.softmax(mb.fully_connected(y, 10)))
    return mb.build()
