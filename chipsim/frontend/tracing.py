"""Tracing: run a Python function on symbolic tensors and record a static graph.

Example:
    >>> import numpy as np, chipsim as cs
    >>> g = cs.trace(lambda x: (x + 1) * 2, np.zeros(4, np.float32))
    >>> [n.op for n in g.nodes]
    ['constant', 'add', 'constant', 'mul']

Python control flow that depends on a traced value (``if t > 0:``, ``while``, ``bool(t)``,
``int(t)``) cannot be recorded: the graph is built before any data exists. It raises a
:class:`~chipsim.errors.TraceError` that names your file and line and points to
:func:`chipsim.ops.where` and :func:`chipsim.cond`.
"""

from __future__ import annotations

import functools
import inspect
import linecache
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from chipsim.errors import ChipsimError, TraceError
from chipsim.frontend.eager import Tensor
from chipsim.frontend.location import format_location, user_frame, user_location
from chipsim.frontend.operands import example_type, reference_dtype, scalar_array
from chipsim.frontend.run import run_graph
from chipsim.frontend.tensor_base import TensorBase
from chipsim.i18n import N_, tr
from chipsim.ir.dtypes import DType
from chipsim.ir.graph import Graph, GraphBuilder, Value
from chipsim.ir.types import TensorType
from chipsim.ir.verify import verify


class Tracer:
    """Records ops into a :class:`GraphBuilder` while a function runs on symbolic tensors."""

    def __init__(self, name: str) -> None:
        self.builder = GraphBuilder(name)

    def input(self, type: TensorType, hint: str) -> SymbolicTensor:
        return SymbolicTensor(self.builder.input(type.shape, type.dtype, hint), self)

    def value_of(self, x: Any, ref: DType | None, op: str) -> Value:
        if isinstance(x, SymbolicTensor):
            return x.value
        if isinstance(x, TensorBase):  # an eager tensor captured by the function: a constant
            return self.builder.const(x.numpy(), x.dtype)  # type: ignore[attr-defined]
        if isinstance(x, np.ndarray):
            return self.builder.const(x)
        return self.builder.const(scalar_array(x, ref, op), ref)

    def record(
        self, op: str, operands: Sequence[Any], attrs: dict[str, Any], ref: DType | None
    ) -> SymbolicTensor:
        values = [self.value_of(x, ref, op) for x in operands]
        return SymbolicTensor(self.builder.op(op, *values, loc=user_location(), **attrs), self)


class SymbolicTensor(TensorBase):
    """A placeholder for a value in a graph being traced: it has a type but no data."""

    __slots__ = ("value", "tracer")
    traced = True

    def __init__(self, value: Value, tracer: Tracer) -> None:
        self.value = value
        self.tracer = tracer

    @property
    def type(self) -> TensorType:
        return self.value.type

    def _apply(self, op: str, operands: Sequence[Any], attrs: dict[str, Any]) -> SymbolicTensor:
        """Record ``op`` into this tensor's trace (every traced operand must be of it)."""
        tracers = {id(x.tracer): x.tracer for x in operands if isinstance(x, SymbolicTensor)}
        if len(tracers) > 1:
            raise ChipsimError(
                f"{op}: operands come from two different traces; "
                "a traced function can only combine its own values"
            )
        return self.tracer.record(op, operands, attrs, reference_dtype(op, operands))

    def _refuse(self, what: str) -> TraceError:
        """Python needs a yes/no from a traced tensor (``if``, ``while``, ``bool``, ...)."""
        return TraceError(
            tr(
                "{where}: Python control flow on a traced tensor ({what} of a {type} "
                "value):{source}\n"
                "A static graph is recorded before any data exists, so Python cannot know the "
                "answer yet and cannot choose a branch.\n"
                "Instead, put the choice into the graph: chipsim.ops.where(cond, a, b) picks "
                "values elementwise, and chipsim.cond(pred, true_fn, false_fn, *operands) chooses "
                "between two computations (the graph records both branches).",
                where=self._where(),
                what=tr(what),
                type=self.type,
                source=self._source(),
            )
        )

    def _no_value(self, what: str) -> TraceError:
        """Python asked for a traced tensor's numbers (``float``, ``print(x.numpy())``, ...)."""
        return TraceError(
            tr(
                "{where}: a traced tensor has no value yet ({what} of a {type} value):{source}\n"
                "While a function is traced, its tensors are placeholders: the graph is recorded "
                "before any data exists, so there are no numbers to convert or print.\n"
                "Instead, keep computing with tensors (x.sum() * 2, not float(x.sum()) * 2) and "
                "return what you want to see: the compiled function's outputs hold the numbers. "
                "To inspect values while debugging, call the function eagerly on cs.tensor(...) "
                "inputs, without jit or trace.",
                where=self._where(),
                what=tr(what),
                type=self.type,
                source=self._source(),
            )
        )

    @staticmethod
    def _where() -> str:
        file, line = user_frame()
        return format_location(file, line)

    @staticmethod
    def _source() -> str:
        file, line = user_frame()
        source = linecache.getline(file, line).strip() if file else ""
        return f"\n    {source}" if source else ""

    def __bool__(self) -> bool:
        raise self._refuse("bool()")

    def __int__(self) -> int:
        raise self._no_value("int()")

    def __float__(self) -> float:
        raise self._no_value("float()")

    def __index__(self) -> int:
        raise self._no_value(N_("using it as an index"))

    def __iter__(self) -> Any:
        raise self._refuse(N_("iterating over it"))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise self._no_value(N_("converting it to numpy"))

    def numpy(self) -> np.ndarray:
        raise self._no_value(".numpy()")

    def __repr__(self) -> str:
        return f"SymbolicTensor({self.type})"


def _flatten(result: Any, fn_name: str) -> list[SymbolicTensor]:
    items = list(result) if isinstance(result, (tuple, list)) else [result]
    for i, item in enumerate(items):
        if not isinstance(item, SymbolicTensor):
            raise TraceError(
                f"{fn_name} returned {type(item).__name__} as output #{i}; a traced "
                "function must return tensors computed from its inputs"
            )
    return items


def trace(fn: Callable[..., Any], *example_inputs: Any, name: str | None = None) -> Graph:
    """Record ``fn`` as a static :class:`Graph` by running it on symbolic tensors.

    Args:
        fn: a function of tensors, returning a tensor or a tuple of tensors.
        *example_inputs: numpy arrays, eager tensors or :class:`TensorType` values giving the
            shape and dtype of each argument (their values are not used).
        name: the graph's name (defaults to the function's name).
    """
    gname = name or getattr(fn, "__name__", "graph")
    if gname == "<lambda>":
        gname = "graph"
    tracer = Tracer(gname)
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = []
    args = [
        tracer.input(example_type(x), params[i] if i < len(params) else f"arg{i}")
        for i, x in enumerate(example_inputs)
    ]
    outputs = _flatten(fn(*args), gname)
    for out in outputs:
        if out.tracer is not tracer:
            raise TraceError(f"{gname} returned a value from another trace")
    return verify(tracer.builder.build(*(o.value for o in outputs)))


class Jitted:
    """A function compiled on first call for each input signature (shapes and dtypes)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.graphs: dict[tuple[TensorType, ...], Graph] = {}

    def graph_for(self, *args: Any) -> Graph:
        """The traced graph for arguments like ``args`` (traced once, then cached)."""
        key = tuple(example_type(a) for a in args)
        if key not in self.graphs:
            self.graphs[key] = trace(self.fn, *key)
        return self.graphs[key]

    @property
    def graph(self) -> Graph:
        """The most recently traced graph."""
        if not self.graphs:
            raise TraceError(
                f"{self.fn.__name__} has not been called yet, so it has no graph; "
                "call it once or use chipsim.trace(fn, *example_inputs)"
            )
        return list(self.graphs.values())[-1]

    def __call__(self, *args: Any) -> Any:
        graph = self.graph_for(*args)
        outs = run_graph(graph, args)
        tensors = [
            Tensor.from_numpy(o, o_v.dtype) for o, o_v in zip(outs, graph.outputs, strict=False)
        ]
        return tensors[0] if len(tensors) == 1 else tuple(tensors)


def jit(fn: Callable[..., Any]) -> Jitted:
    """Decorator: trace ``fn`` into a static graph on first call, then run the whole graph.

    Example:
        >>> import chipsim as cs
        >>> @cs.jit
        ... def f(x):
        ...     return (x + 1) * 2
        >>> f(cs.tensor([3.0])).numpy()
        array([8.], dtype=float32)
    """
    return Jitted(fn)
