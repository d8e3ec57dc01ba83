"""Recurrent layers: UNIDIRECTIONAL_SEQUENCE_LSTM in the full-integer form TFLite's converter writes
(int8 input, weights, hidden state and output; int16 cell state; int32 gate biases)."""

import numpy as np

from .args import positive_int
from .flatbuffer_writer import Field
from .graph import OptionsTable, TensorSpec
from .quantize import QuantParams, qparams_from_sample, quantize_bias, quantize_weights
from .schema_enums import Activation, BuiltinOptions
from .tensor import Tensor

_GATES = ("input", "forget", "cell", "output")
# Input positions of the op (TFLite's order); the ones not listed here stay omitted (-1).
_INPUT_WEIGHTS, _RECURRENT_WEIGHTS, _BIASES, _HIDDEN_STATE, _CELL_STATE, _INPUTS = 1, 5, 12, 18, 19, 24


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _float_lstm(x, wx, wh, bias, time_major, cifg, cell_clip):
    """The float LSTM over ``x`` (gates i, f, c, o; with ``cifg`` i = 1 - f; the cell state
    clipped to +-cell_clip when > 0): the hidden sequence and every cell state."""
    seq = np.swapaxes(x, 0, 1) if time_major else x  # [batch, steps, features]
    batch, steps, _ = seq.shape
    units = wh[0].shape[0]
    h, c = np.zeros((batch, units)), np.zeros((batch, units))
    hs, cs = np.zeros((batch, steps, units)), np.zeros((batch, steps, units))
    for t in range(steps):
        z = [seq[:, t] @ wx[g].T + h @ wh[g].T + bias[g] for g in range(4)]
        input_gate = 1.0 - _sigmoid(z[1]) if cifg else _sigmoid(z[0])
        c = _sigmoid(z[1]) * c + input_gate * np.tanh(z[2])
        if cell_clip > 0:
            c = np.clip(c, -cell_clip, cell_clip)
        h = _sigmoid(z[3]) * np.tanh(c)
        hs[:, t], cs[:, t] = h, c
    return (np.swapaxes(hs, 0, 1) if time_major else hs), cs


class RecurrentLayers:
    """Recurrent layers of ``ModelBuilder``."""

    def lstm(self, x: Tensor, units: int, cell_clip: float = 0.0, time_major: bool = False,
             cell_scale_log2=None, cifg: bool = False) -> Tensor:
        """UNIDIRECTIONAL_SEQUENCE_LSTM over ``x`` [batch, steps, features] ([steps, batch, features]
        when ``time_major``), returning the int8 hidden sequence (``units`` per step).

        Quantized as TFLite's converter does for the integer kernel (8x8->16): per-tensor
        symmetric int8 weights, int32 biases at input scale x weight scale, the hidden state
        (a variable tensor, like the cell state) sharing the output's quantization, the int16
        cell state at a power-of-two scale (``2**cell_scale_log2``, default: the smallest one
        covering the float cell values, within TFLite's 2^-15 .. 2^-9), five intermediates
        (the last carries the hidden state's quantization). ``cell_clip`` (> 0) clips the cell
        state to [-cell_clip, cell_clip] in real units. ``cifg`` couples the input gate to the
        forget gate (1 - f): the input gate's weights and bias are omitted.
        """
        x = self._check_tensor(x, "lstm", rank=3)
        units = positive_int(units, "lstm units")
        if not cell_clip >= 0.0:
            raise ValueError(f"lstm: cell_clip must be >= 0, got {cell_clip}")
        features = x.shape[2]
        batch = x.shape[1] if time_major else x.shape[0]
        wx = [self._weights.kernel((units, features), features) for _ in _GATES]
        wh = [self._weights.kernel((units, units), units) for _ in _GATES]
        bias = [self._weights.uniform((units,), -0.5, 0.5) + (1.0 if g == "forget" else 0.0) for g in _GATES]
        hs, cs = _float_lstm(self._sample(x), wx, wh, bias, time_major, cifg, cell_clip)
        if cell_scale_log2 is None:
            peak = max(float(np.max(np.abs(cs))), cell_clip, 1e-6)
            cell_scale_log2 = int(np.clip(np.ceil(np.log2(peak)) - 15, -15, -9))
        scope = self._scope("lstm")
        out = self._new_tensor(scope, hs, qparams=qparams_from_sample(hs))
        hidden_quant = QuantParams.per_tensor(out.scale, out.zero_point)
        inputs = [-1] * _INPUTS
        inputs[0] = x.index
        for g, name in enumerate(_GATES):
            if cifg and name == "input":
                continue
            for position, w in ((_INPUT_WEIGHTS + g, wx[g]), (_RECURRENT_WEIGHTS + g, wh[g])):
                q, scale = quantize_weights(w)
                inputs[position] = self._constant(f"{scope}_w{position}", q, "int8", QuantParams.symmetric(scale))
                if position == _INPUT_WEIGHTS + g:
                    bias_scale = np.float32(x.scale) * scale
                    inputs[_BIASES + g] = self._constant(f"{scope}_{name}_bias", quantize_bias(bias[g], bias_scale),
                                                         "int32", QuantParams.symmetric(bias_scale))
        def state(name, dtype, quant):
            return self._graph.add_tensor(TensorSpec(f"{scope}_{name}", (batch, units), dtype, quant, is_variable=True))

        inputs[_HIDDEN_STATE] = state("hidden_state", "int8", hidden_quant)
        inputs[_CELL_STATE] = state("cell_state", "int16", QuantParams.per_tensor(2.0 ** cell_scale_log2, 0))
        intermediates = [self._graph.add_tensor(TensorSpec(f"{scope}_{g}_intermediate", (0,), "float32"))
                         for g in _GATES]
        intermediates.append(self._graph.add_tensor(TensorSpec(f"{scope}_hidden_intermediate", (0,), "int8",
                                                               hidden_quant)))
        options = OptionsTable(
            BuiltinOptions.UnidirectionalSequenceLSTMOptions,
            (Field(0, "int8", Activation.TANH), Field(1, "float32", float(cell_clip)), Field(2, "float32", 0.0),
             Field(3, "bool", bool(time_major)), Field(4, "bool", False)),
        )
        self._emit("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [out], options, intermediates)
        return out
