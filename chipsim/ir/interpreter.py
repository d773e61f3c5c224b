"""The reference interpreter: runs any graph with numpy, one node at a time.

Every other execution path (eager, compiled, simulated) is tested against it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from chipsim.errors import ChipsimError, ExecutionError
from chipsim.ir.dtypes import to_storage
from chipsim.ir.ops import execute
from chipsim.ir.printer import format_node

if TYPE_CHECKING:  # types only: graph.py imports this module (calling a graph runs it)
    from chipsim.ir.graph import Graph, Value


def bind_inputs(graph: Graph, args: tuple[Any, ...]) -> dict[Value, np.ndarray]:
    """Check ``args`` against the graph's input types and convert them to storage arrays."""
    if len(args) != len(graph.inputs):
        raise ExecutionError(f"{graph.name} takes {len(graph.inputs)} inputs, got {len(args)}")
    env: dict[Value, np.ndarray] = {}
    names = graph.names()
    for v, arg in zip(graph.inputs, args, strict=False):
        arr = np.asarray(getattr(arg, "numpy", lambda a=arg: a)())
        if arr.shape != v.shape:
            raise ExecutionError(
                f"input {names[v]} expects shape {list(v.shape)} ({v.type}), got {list(arr.shape)}"
            )
        env[v] = to_storage(arr, v.dtype)
    return env


def interpret(graph: Graph, *args: Any) -> list[np.ndarray]:
    """Run ``graph`` on numpy arrays; return the list of outputs.

    An error raised by an op is re-raised as :class:`ExecutionError` that says
    ``while executing %3 = ...``.
    """
    env = bind_inputs(graph, args)
    names = graph.names()
    for node in graph.nodes:
        try:
            env[node.output] = execute(
                node.op, [env[v] for v in node.inputs], node.attrs, node.type
            )
        except (ChipsimError, ValueError, TypeError, FloatingPointError, KeyError) as exc:
            raise ExecutionError(
                f"while executing {format_node(node, names)}"
                f"{' (from ' + node.loc + ')' if node.loc else ''}: {exc}"
            ) from exc
    return [env[v] for v in graph.outputs]
