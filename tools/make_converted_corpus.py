"""Makes the converter-made corpus in tests/data/converted/ and its SOURCES.md.

Run by hand (never in CI), in a venv of its own that holds the converters; they are no
runtime dependency of tinyarena. The committed corpus was made with Python 3.11.7 and

    pip install tensorflow-cpu==2.21.0 tf_keras==2.21.0     # keras 3.15.1 comes with it
    pip install torch==2.13.0 litert-torch==0.10.0          # CPU torch; torchao 0.18.0

    python tools/make_converted_corpus.py [--out DIR] [--only NAME ...] [--sources-only]

Every model has random weights (fixed seeds) and is full-integer (int8) quantized by its
converter from a representative dataset of random inputs. Each family runs in a child
process of its own (`--part`), since the legacy Keras 2 (tf_keras) has to be chosen before
TensorFlow is imported. The parent then reads every file back with the TFLite interpreter
and writes SOURCES.md: recipe, tool versions, I/O types and shapes, ops, MACs and size.
"""

import argparse
import collections
import importlib.metadata
import math
import os
import pathlib
import platform
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "tests" / "data" / "converted"
SEED = 0
CALIBRATION_SAMPLES = 32

# name: (part, I/O variants, recipe). A TF model yields NAME_floatio.tflite (the converter's
# default float32 I/O: QUANTIZE in, DEQUANTIZE out) and/or NAME_int8io.tflite
# (inference_input_type = inference_output_type = tf.int8); a single I/O variant where two
# would cost too much of the corpus' few MB. The PyTorch model's I/O is what litert-torch gives.
BOTH = ("floatio", "int8io")
MODELS = {
    "mobilenet_v2_035_96": ("keras3", ("int8io",), "keras.applications.MobileNetV2(alpha=0.35, "
                            "96x96x3, weights=None, classes=10)"),
    "mobilenet_v2_035_224": ("keras3", ("floatio",), "keras.applications.MobileNetV2(alpha=0.35, "
                             "224x224x3, weights=None, classes=10)"),
    "mcunet_se_80": ("keras3", ("int8io",), "MCUNet-style: inverted residuals, 3x3/5x5/7x7 depthwise, "
                     "squeeze-excite (mean, 1x1 convs, hard-sigmoid or sigmoid, broadcast MUL), "
                     "80x80x3, 2 classes"),
    "mcunet_se_224": ("keras3", ("int8io",), "the same network at 224x224x3, 10 classes"),
    "yolo_tiny_128x160": ("keras3", BOTH, "YOLO-style detector: strided-conv/max-pool backbone, "
                          "leaky ReLU, keras.layers.Resizing(nearest) 2x upsample + concatenation "
                          "neck, three 1x1 heads (3 anchors x (5 + 2 classes)), 128x160x3"),
    "yolo_tiny_upsampling2d_128x160": ("keras3", ("int8io",), "the same detector with "
                                       "keras.layers.UpSampling2D(2, nearest) as the upsample"),
    "ds_cnn_kws": ("keras3", BOTH, "DS-CNN keyword spotting: Reshape [49,10] -> [49,10,1], conv "
                   "10x4/2, 4 depthwise-separable blocks (64 ch), average pool, FC 12, softmax"),
    "lstm_kws_fused": ("tf_keras", BOTH, "tf_keras LSTM(32) (default, unroll=False) over [49,10], "
                       "FC 12, softmax; Input(batch_size=1)"),
    "lstm_kws_unrolled": ("tf_keras", ("int8io",), "tf_keras LSTM(32, unroll=True) over [49,10], "
                          "FC 12, softmax"),
    "gru_kws_unrolled": ("tf_keras", ("int8io",), "tf_keras GRU(32, unroll=True) over [49,10], "
                         "FC 12, softmax"),
    "mobilenet_v2_torch_64": ("torch", (), "MobileNetV2 (its 17 blocks, widths 8..64, 256-ch head) "
                              "in plain torch.nn, NCHW [1,3,64,64], 10 classes; litert-torch PT2E "
                              "quantizer, symmetric per-channel static int8"),
}
PACKAGES = ["tensorflow-cpu", "keras", "tf_keras", "numpy", "torch", "torchao", "litert-torch"]


def file_names(name):
    """The corpus files that model `name` yields."""
    ios = MODELS[name][1]
    return [f"{name}_{io}.tflite" for io in ios] if ios else [f"{name}.tflite"]


# ---------------------------------------------------------------- Keras builders (child process)

def mobilenet_v2(keras, size):
    return keras.applications.MobileNetV2(input_shape=(size, size, 3), alpha=0.35,
                                          weights=None, classes=10)


def conv_bn(keras, x, filters, kernel, stride=1, act="relu6"):
    L = keras.layers
    x = L.Conv2D(filters, kernel, strides=stride, padding="same", use_bias=False)(x)
    x = L.BatchNormalization()(x)
    if act == "relu6":
        return L.ReLU(6.0)(x)
    if act == "relu":
        return L.ReLU()(x)
    if act == "leaky":
        return L.LeakyReLU(negative_slope=0.1)(x)
    return x


def dw_bn(keras, x, kernel, stride=1, act="relu6"):
    L = keras.layers
    x = L.DepthwiseConv2D(kernel, strides=stride, padding="same", use_bias=False)(x)
    x = L.BatchNormalization()(x)
    return L.ReLU(6.0)(x) if act == "relu6" else L.ReLU()(x)


def squeeze_excite(keras, x, gate):
    L = keras.layers
    channels = x.shape[-1]
    s = L.GlobalAveragePooling2D(keepdims=True)(x)
    s = L.Conv2D(max(8, channels // 4), 1, activation="relu")(s)
    s = L.Conv2D(channels, 1, activation=gate)(s)
    return L.Multiply()([x, s])


# (expansion, depthwise kernel, output channels, stride, squeeze-excite gate or None)
MCUNET_BLOCKS = [
    (1, 3, 8, 1, None),
    (3, 7, 16, 2, None), (3, 3, 16, 1, None),
    (3, 5, 24, 2, "hard_sigmoid"), (3, 7, 24, 1, "hard_sigmoid"),
    (4, 5, 32, 2, None), (3, 3, 32, 1, "sigmoid"), (3, 7, 40, 1, "sigmoid"),
    (3, 5, 48, 2, "hard_sigmoid"), (3, 3, 48, 1, None),
]


def mcunet(keras, size, classes):
    L = keras.layers
    inp = keras.Input((size, size, 3))
    x = conv_bn(keras, inp, 16, 3, 2)
    for expand, kernel, out, stride, gate in MCUNET_BLOCKS:
        y = conv_bn(keras, x, x.shape[-1] * expand, 1) if expand > 1 else x
        y = dw_bn(keras, y, kernel, stride)
        if gate:
            y = squeeze_excite(keras, y, gate)
        y = conv_bn(keras, y, out, 1, act=None)
        x = L.Add()([x, y]) if stride == 1 and x.shape[-1] == out else y
    x = L.GlobalAveragePooling2D()(x)
    return keras.Model(inp, L.Dense(classes)(x))


def yolo_tiny(keras, upsample):
    """`upsample` "resizing": keras.layers.Resizing(nearest); "upsampling2d": UpSampling2D(2)."""
    L = keras.layers

    def up2(x):
        if upsample == "upsampling2d":
            return L.UpSampling2D(2, interpolation="nearest")(x)
        return L.Resizing(2 * x.shape[1], 2 * x.shape[2], interpolation="nearest")(x)

    head = 3 * (5 + 2)
    inp = keras.Input((128, 160, 3))
    x = conv_bn(keras, inp, 16, 3, 2, "leaky")                        # 64x80
    x = L.MaxPooling2D(2)(conv_bn(keras, x, 32, 3, 1, "leaky"))      # 32x40
    x = conv_bn(keras, x, 32, 3, 1, "leaky")
    p3 = conv_bn(keras, x, 48, 3, 2, "leaky")                          # 16x20
    x = dw_bn(keras, p3, 3, 2, "relu")
    p4 = conv_bn(keras, x, 64, 1, 1, "leaky")                          # 8x10
    x = L.MaxPooling2D(2)(p4)                                          # 4x5
    p5 = conv_bn(keras, x, 64, 3, 1, "leaky")
    out5 = L.Conv2D(head, 1)(p5)
    up = up2(conv_bn(keras, p5, 32, 1, 1, "leaky"))
    n4 = conv_bn(keras, L.Concatenate()([up, p4]), 48, 3, 1, "leaky")
    out4 = L.Conv2D(head, 1)(n4)
    up = up2(conv_bn(keras, n4, 24, 1, 1, "leaky"))
    n3 = conv_bn(keras, L.Concatenate()([up, p3]), 32, 3, 1, "leaky")
    out3 = L.Conv2D(head, 1)(n3)
    return keras.Model(inp, [out3, out4, out5])


def ds_cnn(keras):
    L = keras.layers
    inp = keras.Input((49, 10))
    x = L.Reshape((49, 10, 1))(inp)
    x = conv_bn(keras, x, 64, (10, 4), 2, "relu")
    for _ in range(4):
        x = dw_bn(keras, x, 3, 1, "relu")
        x = conv_bn(keras, x, 64, 1, 1, "relu")
    x = L.AveragePooling2D(pool_size=x.shape[1:3])(x)
    x = L.Dense(12)(L.Flatten()(x))
    return keras.Model(inp, L.Softmax()(x))


def recurrent_kws(keras, layer, unroll):
    """The fused form needs a fixed batch of 1: with a free batch the converter cannot lower
    the LSTM's TensorList ops and fails. The unrolled form keeps Keras' free batch."""
    L = keras.layers
    inp = keras.Input((49, 10), batch_size=None if unroll else 1)
    x = getattr(L, layer)(32, unroll=unroll)(inp)
    return keras.Model(inp, L.Softmax()(L.Dense(12)(x)))


def keras_model(keras, name):
    builders = {
        "mobilenet_v2_035_96": lambda: mobilenet_v2(keras, 96),
        "mobilenet_v2_035_224": lambda: mobilenet_v2(keras, 224),
        "mcunet_se_80": lambda: mcunet(keras, 80, 2),
        "mcunet_se_224": lambda: mcunet(keras, 224, 10),
        "yolo_tiny_128x160": lambda: yolo_tiny(keras, "resizing"),
        "yolo_tiny_upsampling2d_128x160": lambda: yolo_tiny(keras, "upsampling2d"),
        "ds_cnn_kws": lambda: ds_cnn(keras),
        "lstm_kws_fused": lambda: recurrent_kws(keras, "LSTM", False),
        "lstm_kws_unrolled": lambda: recurrent_kws(keras, "LSTM", True),
        "gru_kws_unrolled": lambda: recurrent_kws(keras, "GRU", True),
    }
    return builders[name]()


def randomize_batch_norm(model, rng):
    """Gives every BatchNormalization random statistics, so folding it changes the weights."""
    for layer in model.layers:
        if type(layer).__name__ == "BatchNormalization":
            gamma, beta, mean, var = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, gamma.shape).astype("float32"),
                               rng.normal(0, 0.1, beta.shape).astype("float32"),
                               rng.normal(0, 0.1, mean.shape).astype("float32"),
                               rng.uniform(0.5, 1.5, var.shape).astype("float32")])


def representative_inputs(shape, rng):
    """Random calibration inputs: images uniform in [-1, 1], audio features standard normal."""
    import numpy as np
    draw = (lambda: rng.uniform(-1, 1, shape)) if len(shape) == 4 else (lambda: rng.normal(0, 1, shape))
    return [draw().astype(np.float32) for _ in range(CALIBRATION_SAMPLES)]


def tflite_int8(tf, model, int8_io, rng):
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    samples = representative_inputs((1,) + tuple(model.inputs[0].shape[1:]), rng)
    converter.representative_dataset = lambda: ([s] for s in samples)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if int8_io:
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8
    return converter.convert()


def make_keras_part(part, names, out_dir):
    if part == "tf_keras":
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import numpy as np
    import tensorflow as tf
    keras = __import__("tf_keras" if part == "tf_keras" else "keras")
    for name in names:
        for file in file_names(name):
            keras.backend.clear_session()   # layer names (kept in the file) restart per model
            keras.utils.set_random_seed(SEED)
            rng = np.random.default_rng(SEED)
            model = keras_model(keras, name)
            randomize_batch_norm(model, rng)
            (out_dir / file).write_bytes(tflite_int8(tf, model, file.endswith("_int8io.tflite"), rng))
            print("wrote", file, flush=True)


# ---------------------------------------------------------------- PyTorch (child process)

# MobileNetV2's stages (its block counts and strides, narrow widths):
# (expansion, output channels, blocks, first stride)
TORCH_MOBILENET_STAGES = [(1, 8, 1, 1), (6, 8, 2, 2), (6, 16, 3, 2), (6, 24, 4, 2), (6, 32, 3, 1),
                          (6, 40, 3, 2), (6, 64, 1, 1)]
TORCH_MOBILENET_HEAD = 256
TORCH_INPUT = (1, 3, 64, 64)


def torch_mobilenet_v2(nn, classes=10):
    """A small MobileNetV2 in plain torch.nn (NCHW, BatchNorm, ReLU6, residual adds)."""
    def conv_bn(cin, cout, kernel=1, stride=1, groups=1, act=True):
        layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                  nn.BatchNorm2d(cout)]
        return nn.Sequential(*layers, nn.ReLU6()) if act else nn.Sequential(*layers)

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expansion):
            super().__init__()
            hidden = cin * expansion
            layers = [conv_bn(cin, hidden)] if expansion > 1 else []
            layers += [conv_bn(hidden, hidden, 3, stride, hidden), conv_bn(hidden, cout, act=False)]
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.body(x) if self.residual else self.body(x)

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            layers, cin = [conv_bn(3, 16, 3, 2)], 16
            for expansion, cout, blocks, stride in TORCH_MOBILENET_STAGES:
                for i in range(blocks):
                    layers.append(InvertedResidual(cin, cout, stride if i == 0 else 1, expansion))
                    cin = cout
            layers += [conv_bn(cin, TORCH_MOBILENET_HEAD), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Linear(TORCH_MOBILENET_HEAD, classes)

        def forward(self, x):
            return self.classifier(self.features(x))

    return MobileNetV2()


def randomize_torch_batch_norm(model, torch):
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0, 0.1)
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)


def litert_torch_int8():
    """Exports the model, quantizes it with litert-torch's PT2E quantizer (symmetric, per-channel,
    static: calibrated on random inputs) and converts it."""
    import litert_torch
    import torch
    from litert_torch.quantize import pt2e_quantizer
    from litert_torch.quantize.quant_config import QuantConfig
    from torchao.quantization.pt2e import quantize_pt2e
    torch.manual_seed(SEED)
    model = torch_mobilenet_v2(torch.nn).eval()
    randomize_torch_batch_norm(model, torch)
    draw = lambda: torch.rand(TORCH_INPUT) * 2 - 1
    sample = (draw(),)
    quantizer = pt2e_quantizer.PT2EQuantizer().set_global(
        pt2e_quantizer.get_symmetric_quantization_config(is_per_channel=True))
    prepared = quantize_pt2e.prepare_pt2e(torch.export.export(model, sample).module(), quantizer)
    for _ in range(CALIBRATION_SAMPLES):
        prepared(draw())
    quantized = quantize_pt2e.convert_pt2e(prepared, fold_quantize=False)
    return litert_torch.convert(quantized, sample, quant_config=QuantConfig(pt2e_quantizer=quantizer))


def make_torch_part(names, out_dir):
    for name in names:
        litert_torch_int8().export(str(out_dir / f"{name}.tflite"))
        print("wrote", f"{name}.tflite", flush=True)


# ---------------------------------------------------------------- description (parent process)

def macs_of(op, tensors):
    """Multiply-accumulates of one op from its tensor shapes (0 for element-wise ops)."""
    shape = lambda i: [int(n) for n in tensors[i]["shape"]]
    count = math.prod
    name, ins, outs = op["op_name"], op["inputs"], op["outputs"]
    if name == "CONV_2D":
        return count(shape(outs[0])) * count(shape(ins[1])[1:])
    if name == "DEPTHWISE_CONV_2D":
        return count(shape(outs[0])) * count(shape(ins[1])[1:3])
    if name == "FULLY_CONNECTED":
        return count(shape(outs[0])) * shape(ins[1])[-1]
    if name == "UNIDIRECTIONAL_SEQUENCE_LSTM":   # 4 input and 4 recurrent weight matrices
        steps = shape(ins[0])[1]
        return steps * sum(count(shape(i)) for i in ins[1:9] if i >= 0)
    return 0


def io_text(details):
    return ", ".join(f"{d['dtype'].__name__} {[int(n) for n in d['shape']]}" for d in details)


def describe(path):
    """Ops, I/O, MACs and size of one .tflite file, read back with the TFLite interpreter."""
    import tensorflow as tf
    interpreter = tf.lite.Interpreter(model_path=str(path))
    ops = interpreter._get_ops_details()
    tensors = {t["index"]: t for t in interpreter.get_tensor_details()}
    counts = collections.Counter(op["op_name"] for op in ops)
    return {
        "inputs": io_text(interpreter.get_input_details()),
        "outputs": io_text(interpreter.get_output_details()),
        "ops": ", ".join(f"{n} x{c}" if c > 1 else n for n, c in counts.items()),
        "macs": sum(macs_of(op, tensors) for op in ops),
        "bytes": path.stat().st_size,
    }


def versions():
    found = {}
    for package in PACKAGES:
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    found["python"] = platform.python_version()
    return found


def tool_of(name, found):
    if MODELS[name][0] == "torch":
        return f"litert-torch {found['litert-torch']} (torch {found['torch']})"
    keras = f"keras {found['keras']}" if MODELS[name][0] == "keras3" else f"tf_keras {found['tf_keras']}"
    return f"TFLiteConverter, tensorflow-cpu {found['tensorflow-cpu']} ({keras})"


SOURCES_HEAD = """# Converter-made models (random weights)

Made by `tools/make_converted_corpus.py` (run by hand, not in CI): small networks with random
weights (fixed seeds, random BatchNorm statistics folded in), full-integer int8 quantized by the
converter itself from a representative dataset of {samples} random inputs (images uniform in
[-1, 1], audio features standard normal), committed as the converter wrote them. TF models:
`TFLiteConverter.from_keras_model`, `optimizations = [DEFAULT]`, `supported_ops =
[TFLITE_BUILTINS_INT8]`; `_floatio` files keep the converter's default float32 I/O (QUANTIZE at
the input, DEQUANTIZE at the output), `_int8io` files set `inference_input_type =
inference_output_type = tf.int8`. The PyTorch model goes through litert-torch's PT2E int8
quantizer (symmetric, per-channel weights, static activations). It quantizes the graph input
itself, so the file's I/O is int8; its input stays NCHW, so a TRANSPOSE to NHWC comes first,
and each stride-2 convolution gets an explicit PAD (PyTorch's symmetric padding). In the
stages of three or more blocks, where a residual ADD's skip input is the previous ADD's output,
the quantizer leaves those ADDs in float: the skip input is dequantized right after it is made
and stays float32 across the block, the block's output is dequantized, the float ADD's output
is quantized for the next block and kept in float32 as the next skip (the ADD of the 2-block
stage stays int8).

Versions: {versions}.

Not in the corpus, because the converter cannot make it: a Keras 3 LSTM or GRU with
`unroll=False` (what `keras.layers.LSTM` gives in TF 2.21) and a tf_keras GRU with
`unroll=False`. They convert to a WHILE loop over TensorList ops (with a fixed batch of 1:
RESHAPE, WHILE with cond/body subgraphs, STRIDED_SLICE, FC; with a free batch the float
conversion fails with "Lowering tensor list ops is failed"), and the int8 calibration of that
loop crashes the converter (segmentation fault). Only tf_keras' LSTM fuses into
UNIDIRECTIONAL_SEQUENCE_LSTM, and only with a fixed batch (`Input(batch_size=1)`; with a free
batch it fails on `tf.TensorListReserve`); GRU has no fused op. Keras 3's `UpSampling2D`
becomes SHAPE/STRIDED_SLICE/EXPAND_DIMS/TILE/CONCATENATION/RESHAPE, `Resizing(nearest)`
becomes RESIZE_NEAREST_NEIGHBOR; a Keras `Reshape` or `Flatten` under a free batch becomes
SHAPE/STRIDED_SLICE/PACK feeding RESHAPE. A squeeze-excite gate is MEAN, two 1x1 CONV_2D, then
LOGISTIC (sigmoid) or, for hard-sigmoid, nothing but a MUL by a rank-0 constant (relu6(x + 3)
folds into the second conv), then the MUL that broadcasts [1,1,1,C] over the map.

MACs count CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and UNIDIRECTIONAL_SEQUENCE_LSTM
(input and recurrent matrices, every step).

| file | made by | recipe | input | output | ops | MACs | bytes |
|---|---|---|---|---|---|---|---|
"""


def write_sources(out_dir, found):
    rows = []
    for name, (_, _, recipe) in MODELS.items():
        for file in file_names(name):
            d = describe(out_dir / file)
            rows.append(f"| {file} | {tool_of(name, found)} | {recipe} | {d['inputs']} | "
                        f"{d['outputs']} | {d['ops']} | {d['macs']:,} | {d['bytes']:,} |")
    text = SOURCES_HEAD.format(samples=CALIBRATION_SAMPLES,
                               versions=", ".join(f"{k} {v}" for k, v in found.items()))
    (out_dir / "SOURCES.md").write_text(text + "\n".join(rows) + "\n")


def run_parts(names, out_dir):
    by_part = collections.defaultdict(list)
    for name in names:
        by_part[MODELS[name][0]].append(name)
    for part, part_names in by_part.items():
        subprocess.run([sys.executable, __file__, "--out", str(out_dir), "--part", part,
                        "--only", *part_names], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=OUT_DIR)
    parser.add_argument("--only", nargs="+", choices=sorted(MODELS), default=list(MODELS))
    parser.add_argument("--sources-only", action="store_true",
                        help="rewrite SOURCES.md from the files in --out, convert nothing")
    parser.add_argument("--part", choices=["keras3", "tf_keras", "torch"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.part == "torch":
        make_torch_part(args.only, args.out)
    elif args.part:
        make_keras_part(args.part, args.only, args.out)
    else:
        if not args.sources_only:
            run_parts(args.only, args.out)
        write_sources(args.out, versions())


if __name__ == "__main__":
    main()
