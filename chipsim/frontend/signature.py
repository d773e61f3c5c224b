"""The public function of an op, built from its :class:`~chipsim.ir.ops.OpDef`: its tensor
inputs, then its attributes with their defaults. Both ``chipsim.ops.relu(x)`` and the method
``x.relu()`` are made here, each handed the function that runs the op (``apply``).

Example:
    >>> import inspect
    >>> from chipsim.ir.ops import OPS
    >>> fn = op_function(OPS["softmax"], lambda op, operands, attrs: (op, attrs))
    >>> str(inspect.signature(fn)), fn("x")
    ('(x, axis=-1)', ('softmax', {'axis': -1}))
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from chipsim.ir.ops import OpDef

#: ``apply(op, operands, attrs)``: what runs an op call (records it, or runs it eagerly)
Apply = Callable[[str, tuple[Any, ...], dict[str, Any]], Any]


def op_function(opdef: OpDef, apply: Apply) -> Callable[..., Any]:
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
