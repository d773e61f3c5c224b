"""Operator overloading shared by eager tensors and traced (symbolic) tensors.

Both kinds of tensor route every operation through :func:`dispatch`, which picks the mode:
if any operand is being traced, the op is recorded into the trace's graph (the symbolic
tensor's ``_apply``); otherwise it runs eagerly, as one kernel, on the device (the eager
tensor's ``_apply``). One op library, two front ends; this base knows neither, so the front
end's modules form a tree: ``tensor_base`` below ``eager`` and ``tracing``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from chipsim.frontend.signature import op_function
from chipsim.ir.dtypes import DType
from chipsim.ir.ops import OPS
from chipsim.ir.types import TensorType


class TensorBase:
    """What eager and traced tensors have in common: a static type and operators."""

    __slots__ = ()
    __array_priority__ = 1000  # make numpy defer to our operators (np_array + tensor)
    traced: ClassVar[bool] = False  # a symbolic tensor of a trace (its ops are recorded)

    @property
    def type(self) -> TensorType:
        raise NotImplementedError

    def _apply(self, op: str, operands: Sequence[Any], attrs: dict[str, Any]) -> Any:
        """Run ``op`` on ``operands`` (this tensor among them) the way this kind of tensor
        does: eager tensors run it on their device, symbolic ones record it."""
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> DType:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return self.type.rank

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # arithmetic ---------------------------------------------------------------------------
    def __add__(self, o: Any) -> Any:
        return _op("add", self, o)

    def __radd__(self, o: Any) -> Any:
        return _op("add", o, self)

    def __sub__(self, o: Any) -> Any:
        return _op("sub", self, o)

    def __rsub__(self, o: Any) -> Any:
        return _op("sub", o, self)

    def __mul__(self, o: Any) -> Any:
        return _op("mul", self, o)

    def __rmul__(self, o: Any) -> Any:
        return _op("mul", o, self)

    def __truediv__(self, o: Any) -> Any:
        return _op("div", self, o)

    def __rtruediv__(self, o: Any) -> Any:
        return _op("div", o, self)

    def __matmul__(self, o: Any) -> Any:
        return _op("matmul", self, o)

    def __rmatmul__(self, o: Any) -> Any:
        return _op("matmul", o, self)

    def __neg__(self) -> Any:
        return _op("neg", self)

    def __gt__(self, o: Any) -> Any:
        return _op("gt", self, o)

    def __lt__(self, o: Any) -> Any:
        return _op("lt", self, o)

    def __ge__(self, o: Any) -> Any:
        return _op("ge", self, o)

    def __le__(self, o: Any) -> Any:
        return _op("le", self, o)

    def __eq__(self, o: Any) -> Any:
        return _op("eq", self, o)  # type: ignore[override]

    __hash__ = object.__hash__

    # methods --------------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        """Every op of the registry is a method: ``x.relu()``, ``x.sum(axes=-1)``...

        (Only called for names the class does not define: the public op functions are
        looked up by name, with the tensor as first argument.)
        """
        if name.startswith("_") or name not in METHODS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return functools.partial(METHODS[name], self)

    def reshape(self, *shape: Any) -> Any:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _op("reshape", self, shape=tuple(shape))

    def transpose(self, *perm: int) -> Any:
        if len(perm) == 1 and isinstance(perm[0], (tuple, list)):
            perm = tuple(perm[0])
        return _op("transpose", self, perm=tuple(perm) if perm else None)

    @property
    def T(self) -> Any:
        return _op("transpose", self, perm=None)

    def astype(self, dt: DType | str) -> Any:
        return _op("cast", self, to=str(dt))


def dispatch(op: str, operands: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """Run ``op`` on ``operands``, at least one of them a tensor: recorded into the trace of a
    traced operand if there is one, else run eagerly (by the first tensor's device)."""
    tensors = [x for x in operands if isinstance(x, TensorBase)]
    first = next((x for x in tensors if x.traced), tensors[0])
    return first._apply(op, operands, attrs)


def _op(op: str, *operands: Any, **attrs: Any) -> Any:
    return dispatch(op, operands, attrs)


#: name -> the function behind the method ``x.name(...)``, for every public op of the registry
METHODS: dict[str, Callable[..., Any]] = {
    name: op_function(OPS[name], dispatch) for name in sorted(OPS) if OPS[name].public
}
