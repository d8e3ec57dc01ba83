"""``ModelBuilder``: the public layer API, assembled from one mixin per family of layers."""

from .builder_core import BuilderCore
from .layers_activation import ActivationLayers
from .layers_binary import BinaryLayers
from .layers_conv import ConvLayers
from .layers_pool import PoolLayers
from .layers_quant import QuantLayers
from .layers_recurrent import RecurrentLayers
from .layers_shape import ShapeLayers
from .layers_slice import SliceLayers


class ModelBuilder(
    ConvLayers, PoolLayers, ActivationLayers, BinaryLayers, ShapeLayers, SliceLayers, QuantLayers, RecurrentLayers,
    BuilderCore
):
    """Builds a single-subgraph int8 TFLite model layer by layer.

    Example::

        mb = ModelBuilder("tiny", seed=1)
        x = mb.input([1, 32, 32, 3])
        y = mb.conv2d(x, 8, kernel=3, stride=2, activation="RELU6")
        y = mb.mean(y, axes=(1, 2))
        y = mb.softmax(mb.fully_connected(y, 10))
        mb.output(y)
        tflite_bytes = mb.build()

    Every layer method takes and returns ``Tensor`` handles. Weights are random (seeded by
    ``seed``); activation quantization is calibrated on a random float sample propagated through
    the float version of the network (see ``builder_core``). The same calls with the same seed
    give byte-identical files.
    """
