"""Random float weights and biases that look like a trained, batch-norm-folded network's.

A trained network's batch norm keeps every channel's pre-activation values centred with a
spread near 1 (times a learned gain), and folding it into the weights gives per-channel weight
scales that differ. ``WeightSampler.fold_batch_norm`` reproduces that from the calibration
sample: random kernels are rescaled per output channel and the bias recentres each channel.
Without it, random deep networks drift to huge or tiny activations and saturate RELU6.
"""

from typing import NamedTuple, Sequence

import numpy as np

_GAIN_SIGMA = 0.3
"""Spread (log-normal sigma) of the per-channel batch-norm gains."""
_BETA_STD = 0.3
"""Standard deviation of the batch-norm shift, relative to the channel's gain."""
_MIN_POSITIONS = 16
"""Fewest values per channel for per-channel statistics; below it one global spread is used."""


class BatchNormFold(NamedTuple):
    """Per-output-channel kernel ``factors`` (or one factor) and the float ``bias`` per channel."""

    factors: np.ndarray
    bias: np.ndarray


class WeightSampler:
    """Draws all random numbers of one model from a single seeded generator."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def kernel(self, shape: Sequence[int], fan_in: int) -> np.ndarray:
        """He-normal float weights."""
        return self.rng.standard_normal(shape, dtype=np.float32) * np.float32(np.sqrt(2.0 / fan_in))

    def fold_batch_norm(self, pre_bias: np.ndarray, per_channel: bool) -> BatchNormFold:
        """Kernel factors and bias that give each output channel (last axis) a BN-like distribution.

        ``pre_bias`` is the layer's output without bias for the calibration sample. With
        ``per_channel=False`` (per-tensor weights) there is one factor for the whole kernel.
        """
        channels = pre_bias.shape[-1]
        values = pre_bias.reshape(-1, channels).astype(np.float64)
        enough = values.shape[0] >= _MIN_POSITIONS
        gains = self.rng.lognormal(0.0, _GAIN_SIGMA, size=channels if per_channel else 1)
        spread = values.std(axis=0) if per_channel and enough else np.array([values.std()])
        factors = gains / np.where(spread > 0, spread, 1.0)
        means = values.mean(axis=0) if enough else np.zeros(channels)
        beta = self.rng.standard_normal(channels) * _BETA_STD * gains
        return BatchNormFold(factors.astype(np.float32), (beta - means * factors).astype(np.float32))

    def uniform(self, shape: Sequence[int], low: float, high: float) -> np.ndarray:
        """Uniform float32 values (calibration samples of model inputs)."""
        return self.rng.uniform(low, high, size=shape).astype(np.float32)
