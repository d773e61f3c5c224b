"""The op functions of the public API, one per op of the registry: ``chipsim.relu(x)``,
``chipsim.sum(x, axes=-1)``, ``chipsim.conv2d(x, w, stride=2)``...

They are built here from each :class:`~chipsim.ir.ops.OpDef` (its tensor inputs, then its
attributes with their defaults), so an op added to the registry is at once a function of
``chipsim`` and a method of every tensor (``x.relu()``). Each works eagerly and while tracing.

Example:
    >>> import inspect, chipsim as cs
    >>> str(inspect.signature(cs.softmax))
    '(x, axis=-1)'
    >>> cs.sum(cs.tensor([[1.0, 2.0], [3.0, 4.0]]), axes=-1).numpy()
    array([3., 7.], dtype=float32)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from chipsim.frontend.dispatch import apply
from chipsim.ir.ops import OPS, OpDef


def op_function(opdef: OpDef) -> Callable[..., Any]:
    """The public function of ``opdef``: tensor parameters first, then its attributes."""
    lo, _ = opdef.arity
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [
        inspect.Parameter(name, kind, default=inspect.Parameter.empty if i < lo else None)
        for i, name in enumerate(opdef.inputs)
    ]
    for name, spec in opdef.attrs.items():
        default = inspect.Parameter.empty if spec.required else spec.default
        params.append(inspect.Parameter(name, kind, default=default))
    signature = inspect.Signature(params)
    n_inputs = len(opdef.inputs)

    def fn(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = list(bound.arguments.values())
        if opdef.variadic:
            operands = tuple(values[0])
        else:  # optional inputs left out (None) are not operands
            operands = tuple(v for v in values[:n_inputs] if v is not None)
        attrs = dict(zip(opdef.attrs, values[n_inputs:], strict=True))
        return apply(opdef.name, operands, attrs)

    fn.__name__ = fn.__qualname__ = opdef.name
    fn.__module__ = "chipsim"
    fn.__signature__ = signature  # type: ignore[attr-defined]
    args = [
        f"    {name}: {'tensors' if opdef.variadic else 'a tensor'}"
        + (" (optional)" if i >= lo and not opdef.variadic else "")
        for i, name in enumerate(opdef.inputs)
    ]
    args += [f"    {k}: {spec.doc}" for k, spec in opdef.attrs.items()]
    fn.__doc__ = opdef.doc[:1].upper() + opdef.doc[1:] + ".\n\nArgs:\n" + "\n".join(args)
    return fn


#: name -> public function, for every public op of the registry (in name order).
FUNCTIONS: dict[str, Callable[..., Any]] = {
    name: op_function(OPS[name]) for name in sorted(OPS) if OPS[name].public
}
globals().update(FUNCTIONS)

__all__ = [*FUNCTIONS]
