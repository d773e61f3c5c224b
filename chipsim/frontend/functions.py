"""The op functions of the public API, one per op of the registry: ``chipsim.ops.relu(x)``,
``chipsim.ops.sum(x, axes=-1)``, ``chipsim.ops.conv2d(x, w, stride=2)``...

They are built from each :class:`~chipsim.ir.ops.OpDef` (its tensor inputs, then its
attributes with their defaults: :func:`~chipsim.frontend.signature.op_function`), so an op
added to the registry is at once a function of ``chipsim`` and a method of every tensor
(``x.relu()``). Each works eagerly and while tracing.

Example:
    >>> import inspect, chipsim as cs
    >>> str(inspect.signature(cs.ops.softmax))
    '(x, axis=-1)'
    >>> cs.ops.sum(cs.tensor([[1.0, 2.0], [3.0, 4.0]]), axes=-1).numpy()
    array([3., 7.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chipsim.frontend.eager import apply_eager
from chipsim.frontend.signature import op_function
from chipsim.frontend.tensor_base import TensorBase, dispatch
from chipsim.ir.ops import OPS


def apply(op: str, operands: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """Run ``op`` on ``operands``: record it if any operand is traced, else run it eagerly
    (numbers and arrays alone run on the current device)."""
    if any(isinstance(x, TensorBase) for x in operands):
        return dispatch(op, operands, attrs)
    return apply_eager(op, operands, attrs)


#: name -> public function, for every public op of the registry (in name order).
FUNCTIONS: dict[str, Callable[..., Any]] = {
    name: op_function(OPS[name], apply) for name in sorted(OPS) if OPS[name].public
}
globals().update(FUNCTIONS)

__all__ = [*FUNCTIONS]
