"""Control flow that a static graph can hold: ``cond`` (``where``, its elementwise
sibling, is an op: :func:`chipsim.ops.where`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chipsim.errors import TraceError
from chipsim.frontend.functions import FUNCTIONS
from chipsim.frontend.tracing import SymbolicTensor


def cond(
    pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any], *operands: Any
) -> Any:
    """Run ``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    Eagerly, only the chosen branch runs. While tracing, the value of ``pred`` is unknown,
    so the graph records **both** branches and selects the result with ``where``: a static
    graph pays for every branch.

    Args:
        pred: a boolean tensor with a single element (e.g. ``x.sum() > 0``).
        true_fn, false_fn: functions of ``operands`` returning tensors of the same types.
        *operands: the tensors passed to the branch functions.
    """
    traced = isinstance(pred, SymbolicTensor) or any(
        isinstance(x, SymbolicTensor) for x in operands
    )
    if not traced:
        return true_fn(*operands) if bool(pred) else false_fn(*operands)
    if not isinstance(pred, SymbolicTensor) or pred.type.numel != 1 or pred.dtype.name != "bool":
        shown = getattr(pred, "type", type(pred).__name__)
        raise TraceError(
            f"cond needs a single-element bool tensor as predicate, got {shown}; "
            "reduce it first, e.g. cond(x.sum() > 0, ...)"
        )
    t_out, f_out = true_fn(*operands), false_fn(*operands)
    t_list = list(t_out) if isinstance(t_out, (tuple, list)) else [t_out]
    f_list = list(f_out) if isinstance(f_out, (tuple, list)) else [f_out]
    if len(t_list) != len(f_list):
        raise TraceError(
            f"cond branches return {len(t_list)} and {len(f_list)} values; "
            "both branches must return the same number of tensors"
        )
    results = []
    for i, (t, f) in enumerate(zip(t_list, f_list, strict=False)):
        if getattr(t, "type", None) != getattr(f, "type", None):
            raise TraceError(
                f"cond branch outputs #{i} differ: {getattr(t, 'type', t)} vs "
                f"{getattr(f, 'type', f)}; both branches must return the same "
                "shapes and dtypes"
            )
        results.append(FUNCTIONS["where"](pred.reshape(()) if pred.shape else pred, t, f))
    return results[0] if not isinstance(t_out, (tuple, list)) else type(t_out)(results)
