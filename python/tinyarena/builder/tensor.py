"""``Tensor``: the handle the layer API returns and accepts."""

from typing import Optional, Tuple

from .graph import TensorSpec


class Tensor:
    """A tensor of a ``ModelBuilder`` graph (an activation, or a model input/output).

    Attributes are read-only: ``name``, ``shape`` (tuple), ``dtype`` (``"int8"`` or
    ``"float32"``), ``scale`` and ``zero_point`` (None for float tensors) and ``index``
    (position in the subgraph's tensor list).
    """

    __slots__ = ("_owner", "_index", "_spec")

    def __init__(self, owner: object, index: int, spec: TensorSpec):
        self._owner = owner
        self._index = index
        self._spec = spec

    @property
    def index(self) -> int:
        return self._index

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def shape(self) -> Tuple[int, ...]:
        return self._spec.shape

    @property
    def rank(self) -> int:
        return len(self._spec.shape)

    @property
    def dtype(self) -> str:
        return self._spec.dtype

    @property
    def scale(self) -> Optional[float]:
        quant = self._spec.quant
        return None if quant is None else float(quant.scale[0])

    @property
    def zero_point(self) -> Optional[int]:
        quant = self._spec.quant
        return None if quant is None else int(quant.zero_point[0])

    def belongs_to(self, owner: object) -> bool:
        """True if this handle was made by ``owner``."""
        return self._owner is owner

    def __repr__(self) -> str:
        quant = "" if self.scale is None else f", scale={self.scale:.6g}, zero_point={self.zero_point}"
        return f"Tensor({self.name!r}, shape={self.shape}, dtype={self.dtype}{quant})"
