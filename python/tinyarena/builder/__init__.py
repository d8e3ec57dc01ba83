"""tinyarena.builder: writes valid int8 TFLite models with random weights and realistic quantization.

Used for tests, benchmarks and the bundled demo; needs only numpy and flatbuffers.

Offers:

- ``ModelBuilder(name, seed)``: a layer API returning ``Tensor`` handles -- ``input``,
  ``conv2d``, ``depthwise_conv2d``, ``fully_connected``, ``add``, ``sub``, ``mul``,
  ``squared_difference``, ``average_pool2d``, ``max_pool2d``, ``mean``, ``pad``, ``reshape``,
  ``squeeze``, ``expand_dims``, ``transpose``, ``strided_slice``, ``split``, ``split_v``,
  ``gather``, ``unpack``, ``concatenation``, ``pack``, ``resize_nearest_neighbor``, ``shape``,
  ``fill``, ``relu``, ``relu6``, ``leaky_relu``, ``logistic``, ``tanh``, ``hard_swish``,
  ``softmax``, ``log_softmax``, ``quantize``, ``dequantize``, ``lstm`` (a fused
  UNIDIRECTIONAL_SEQUENCE_LSTM as the converter quantizes it); then ``output``, ``build``
  (bytes) and ``save`` (file);
- ready architectures returning ``.tflite`` bytes: ``mobilenet_v1``, ``mobilenet_v2``,
  ``ds_cnn``, ``resnet8`` (the MLPerf Tiny structures), ``chain`` (long single path for
  benchmarks), ``demo_model`` (what ``tinyarena demo`` plans) and ``training_demo_cnn`` (the small
  CNN of the on-device training tests); ``mobilenet_v1`` and
  ``mobilenet_v2`` take ``float_io=True`` (float32 I/O: QUANTIZE first, DEQUANTIZE last, as
  TensorFlow's converter) and ``nchw_input=True`` (an NCHW input transposed to NHWC, as a PyTorch
  export), built by ``boundary.model_input`` / ``model_output``;
- ``random_dag(seed, max_ops)``: random valid int8 DAGs with branches and joins, for property tests.

Example::

    from tinyarena.builder import ModelBuilder

    mb = ModelBuilder("tiny", seed=1)
    x = mb.input([1, 32, 32, 3])
    y = mb.conv2d(x, 8, kernel=3, stride=2, activation="RELU6")
    mb.output(mb.softmax(mb.fully_connected(mb.mean(y, axes=(1, 2)), 10)))
    mb.save("tiny.tflite")

Quantization follows the TFLite int8 spec: per-tensor asymmetric activations calibrated on a
float pass, per-channel symmetric int8 weights, int32 biases with scale input x weight scale,
and the fixed output parameters SOFTMAX/LOGISTIC/TANH/LOG_SOFTMAX need. The same arguments and
seed give byte-identical files. Modules: ``model_builder`` (the API) with one ``layers_*``
mixin per family, ``builder_core`` (calibration, inputs/outputs), ``quantize``, ``weights``,
``float_ops``, ``graph``/``schema``/``flatbuffer_writer``/``options`` (serialization),
``architectures``, ``boundary`` and ``random_dag``.
"""

from .architectures import (
    chain,
    demo_model,
    ds_cnn,
    mobilenet_v1,
    mobilenet_v2,
    resnet8,
    training_demo_cnn,
)
from .model_builder import ModelBuilder
from .random_dag import random_dag
from .tensor import Tensor

__all__ = [
    "ModelBuilder",
    "Tensor",
    "chain",
    "demo_model",
    "ds_cnn",
    "mobilenet_v1",
    "mobilenet_v2",
    "random_dag",
    "resnet8",
    "training_demo_cnn",
]
