"""A float64 numpy reference of one training step of a quantized graph, to check generated code.

The forward pass is the quantized graph itself: every tensor's int8 value from TFLite's reference
interpreter (what the generated forward computes bit for bit). From there everything is real
arithmetic in float64 on the dequantized values: the softmax cross-entropy gradient of the logits
(``p - onehot(label)``, with ``p`` the int8 SOFTMAX output's real value when the graph ends in
SOFTMAX), the exact gradients of each op (convolutions, fully connected, average pooling / MEAN,
views; a RELU/RELU6 derivative is 1 where the int8 output lies strictly inside the active range,
as in ``tinyarena_training.h``; ADD passes its gradient to both inputs, a tensor several ops
read sums their gradients, PAD crops it), and the SGD update of each trainable tensor in its own int8 /
int32 units (``units``: the real value of one), unrounded: ``q - lr * dL/dw / s_w`` (clamped to [-127, 127]) for weights and
``b - lr * dL/db / (s_x * s_w)`` for biases (a partial update, ``layers:I@FRACTION``: the first C
output channels of the weights only).

:func:`reference_step` returns the gradients and updated parameters; the generated code's
quantized ones are compared with them by ``tinyarena.training_codegen.verify_training``.
"""

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ReferenceStep", "reference_step"]


@dataclass
class ReferenceStep:
    """Real-valued gradients and updated parameters of one step."""

    loss: float
    grads: dict = field(default_factory=dict)       # tensor index -> dL/d(real value)
    pre_activation: dict = field(default_factory=dict)  # op index -> dL/d(pre-activation) of a fused activation
    params: dict = field(default_factory=dict)      # weight/bias tensor index -> dL/d(real parameter)
    updated: dict = field(default_factory=dict)     # weight/bias tensor index -> updated value in its units
    units: dict = field(default_factory=dict)       # weight/bias tensor index -> real value of one unit (broadcast)


def _real(tensor, q):
    scale = np.asarray(tensor.scale, np.float64)
    zero = np.asarray(tensor.zero_point, np.float64)
    return (q.astype(np.float64) - zero[0]) * scale[0]


def _weight_scales(weights, channels):
    s = np.asarray(weights.scale, np.float64)
    return np.full(channels, s[0]) if s.size == 1 else s


def _active(op, tensor, q, activation):
    """1.0 where the RELU/RELU6 derivative at int8 output ``q`` is 1, else 0."""
    zero = int(tensor.zero_point[0])
    hi = 128 if activation == "RELU" else min(128, zero + round(6.0 / float(tensor.scale[0])))
    return ((q.astype(np.int32) > zero) & (q.astype(np.int32) < hi)).astype(np.float64)


def _padding(op, in_size, out_size, kernel, stride):
    if op.options.padding != "SAME":
        return 0
    return max((out_size - 1) * stride + kernel - in_size, 0) // 2


def _conv_backward(op, g, x, w, depthwise):
    """(dx, dW) of a conv (w: OHWI) or depthwise conv (w: [1, kh, kw, out_c]); one image."""
    _, h, wd, cin = x.shape
    _, oh, ow, cout = g.shape
    kh, kw = w.shape[1], w.shape[2]
    sh, sw = op.options.stride_h, op.options.stride_w
    pt, pl = _padding(op, h, oh, kh, sh), _padding(op, wd, ow, kw, sw)
    dm = cout // cin if depthwise else 1
    padded = np.zeros((h + kh + oh * sh, wd + kw + ow * sw, cin))
    padded[pt:pt + h, pl:pl + wd] = x[0]
    dpadded = np.zeros_like(padded)
    dw = np.zeros_like(w, dtype=np.float64)
    for ky in range(kh):
        for kx in range(kw):
            patch = padded[ky:ky + oh * sh:sh, kx:kx + ow * sw:sw][:oh, :ow]  # [oh, ow, cin]
            if depthwise:
                expanded = np.repeat(patch, dm, axis=2)  # channel co reads input channel co // dm
                dw[0, ky, kx] = np.einsum("hwc,hwc->c", g[0], expanded)
                contribution = (g[0] * w[0, ky, kx]).reshape(oh, ow, cin, dm).sum(axis=3)
            else:
                dw[:, ky, kx, :] = np.einsum("hwo,hwi->oi", g[0], patch)
                contribution = np.einsum("hwo,oi->hwi", g[0], w[:, ky, kx, :])
            dpadded[ky:ky + oh * sh:sh, kx:kx + ow * sw:sw][:oh, :ow] += contribution
    return dpadded[pt:pt + h, pl:pl + wd][None], dw


class _Backward:
    def __init__(self, graph, values, label, lr, updated_tensors):
        self.g, self.q, self.label, self.lr = graph, values, label, lr
        if not isinstance(updated_tensors, dict):
            updated_tensors = dict.fromkeys(updated_tensors)
        self.updated_tensors = updated_tensors  # tensor -> updated output channels (None: all)
        self.step = None

    def real(self, t):
        return _real(self.g.tensors[t], self.q[t])

    def weight_layer(self, op, gy):
        g = self.g
        x_t, w_t = op.inputs[0], op.inputs[1]
        wq = np.asarray(g.tensors[w_t].data).astype(np.float64)
        cout = g.tensors[op.outputs[0]].shape[-1]
        s_w = _weight_scales(g.tensors[w_t], cout)
        depthwise = op.type == "DEPTHWISE_CONV_2D"
        # the weight scales broadcast over the layout: [out][in], OHWI, or [1][kh][kw][out]
        scale = s_w if depthwise else s_w.reshape((-1,) + (1,) * (wq.ndim - 1))
        w, x = wq * scale, self.real(x_t)
        if op.type == "FULLY_CONNECTED":
            x2, g2 = x.reshape(-1, w.shape[1]), gy.reshape(-1, cout)
            dx, dw = (g2 @ w).reshape(x.shape), g2.T @ x2
        else:
            dx, dw = _conv_backward(op, gy.reshape(g.tensors[op.outputs[0]].shape), x, w, depthwise)
        self.add(x_t, dx)
        # only the first C updated output channels' weights change: axis 0 ([out][in], OHWI)
        self.param(w_t, dw, lambda d: np.clip(wq - self.lr * d / scale, -127, 127), scale, not depthwise)
        if len(op.inputs) > 2 and op.inputs[2] >= 0:
            b_t = op.inputs[2]
            s_x = float(g.tensors[x_t].scale[0])
            bq = np.asarray(g.tensors[b_t].data).astype(np.float64)
            self.param(b_t, gy.reshape(-1, cout).sum(axis=0), lambda d: bq - self.lr * d / (s_x * s_w), s_x * s_w)

    def param(self, tensor, grad, update, unit, channels_first=False):
        self.step.params[tensor] = grad
        if tensor in self.updated_tensors:
            updated, units = update(grad), np.broadcast_to(unit, grad.shape)
            channels = self.updated_tensors[tensor]
            if channels is not None:
                if not channels_first:
                    raise NotImplementedError("the reference updates part of a tensor along its first axis only")
                updated, units = updated[:channels], units[:channels]
            self.step.updated[tensor] = updated
            self.step.units[tensor] = units

    def add(self, tensor, grad):
        grads = self.step.grads
        grads[tensor] = grads.get(tensor, 0.0) + grad.reshape(self.g.tensors[tensor].shape)

    def pool(self, op, gy):
        x_shape = self.g.tensors[op.inputs[0]].shape
        _, h, w, c = x_shape
        if op.type == "MEAN":
            fh, fw, sh, sw = h, w, h, w
        else:
            fh, fw, sh, sw = op.options.filter_h, op.options.filter_w, op.options.stride_h, op.options.stride_w
        y_shape = (1, (h - fh) // sh + 1, (w - fw) // sw + 1, c)
        gy = gy.reshape(y_shape)
        dx = np.zeros(x_shape)
        for oy in range(y_shape[1]):
            for ox in range(y_shape[2]):
                dx[0, oy * sh:oy * sh + fh, ox * sw:ox * sw + fw] += gy[0, oy, ox] / (fh * fw)
        self.add(op.inputs[0], dx)

    def run(self, first_op):
        g = self.g
        scores = g.outputs[0]
        producer = g.ops[g.tensors[scores].producer]
        if producer.type == "DEQUANTIZE":
            scores = producer.inputs[0]
            producer = g.ops[g.tensors[scores].producer]
        if producer.type == "SOFTMAX":
            p, logits, last = self.real(scores).reshape(-1), producer.inputs[0], producer.index - 1
        else:
            z = self.real(scores).reshape(-1)
            e = np.exp(z - z.max())
            p, logits, last = e / e.sum(), scores, producer.index
        onehot = np.zeros_like(p)
        onehot[self.label] = 1.0
        self.step = ReferenceStep(loss=float(-np.log(max(p[self.label], 1e-7))))
        self.add(logits, p - onehot)
        for op in reversed(g.ops[first_op:last + 1]):
            y = op.outputs[0]
            if y not in self.step.grads:
                continue
            gy = self.step.grads[y]
            activation = op.options.activation if op.type not in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS") else "NONE"
            if activation in ("RELU", "RELU6"):
                gy = gy * _active(op, g.tensors[y], self.q[y], activation)
                self.step.pre_activation[op.index] = gy
            if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
                self.weight_layer(op, gy)
            elif op.type in ("AVERAGE_POOL_2D", "MEAN"):
                self.pool(op, gy)
            elif op.type == "ADD":  # the real sum's gradient reaches each input unchanged
                for x in op.inputs:
                    if not g.tensors[x].is_constant:
                        self.add(x, gy)
            elif op.type in ("PAD", "PADV2"):  # the padded gradient, cropped
                pads = np.asarray(g.tensors[op.inputs[1]].data).reshape(-1, 2)
                shape = g.tensors[op.inputs[0]].shape
                crop = tuple(slice(int(b), int(b) + n) for (b, _), n in zip(pads, shape))
                self.add(op.inputs[0], gy.reshape(g.tensors[y].shape)[crop])
            elif op.type in ("RELU", "RELU6"):
                self.add(op.inputs[0], gy * _active(op, g.tensors[y], self.q[y], op.type))
            elif op.type in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"):
                self.add(op.inputs[0], gy)
            else:
                raise NotImplementedError(f"the reference has no gradient of op {op.index} ({op.type})")
        return self.step


def reference_step(graph, values, label, learning_rate, updated_tensors, first_op=0):
    """One step's real-valued gradients and updated parameters.

    ``graph``: a ``tinyarena.reader`` graph; ``values``: every tensor's int8 forward value
    ({tensor index: array}, e.g. from TFLite's reference interpreter); ``updated_tensors``: the
    weight and bias tensors the step updates, or a dict {tensor: output channels}: a weight tensor
    with a channel count C (``layers:I@FRACTION``) updates only its first C output channels, and
    ``updated`` / ``units`` then hold those channels only (None: every channel); gradients are
    followed back to op ``first_op``.
    """
    return _Backward(graph, values, int(label), float(learning_rate), updated_tensors).run(first_op)
