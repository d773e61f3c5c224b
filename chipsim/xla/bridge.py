"""A chipsim graph as a JAX function, node for node, so XLA compiles exactly the same graph.

:func:`to_jax` walks a :class:`~chipsim.ir.Graph` and calls, for every node, the
``jax.numpy`` / ``jax.lax`` operations that mean what the op's numpy semantics mean
(:data:`JAX_OPS`). Each node runs inside ``jax.named_scope("cs<i>_<op>")``: XLA copies the
scope into the metadata of every instruction it makes from that node, so after XLA's passes
we can still tell which graph node each fused instruction came from
(:func:`node_of`). Constants with more than one element become arguments of the function,
as a framework passes a model's weights; scalars stay literals in the program.

JAX is optional: :func:`jax_problem` says why it cannot be used (not installed, or its
import fails) instead of raising, so a page can say so and go on.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder(); x = b.input((4,), f32)
    >>> g = b.build(b.op("mul", b.op("add", x, b.const(1.0)), b.const(2.0)))
    >>> scope_name(2, "add"), node_of("jit(f)/cs2_add/add")
    ('cs2_add', 2)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsim.errors import ChipsimError
from chipsim.ir.attrs import Attrs
from chipsim.ir.graph import Graph, Node
from chipsim.ir.ops import check_attrs, get_op
from chipsim.ir.ops.contraction import conv_geometry
from chipsim.ir.ops.reduce import reduced_axes
from chipsim.ir.types import TensorType

_SCOPE = re.compile(r"(?:^|/)cs(\d+)_\w+")


def scope_name(index: int, op: str) -> str:
    """The ``jax.named_scope`` of graph node ``index``: ``cs3_add``."""
    return f"cs{index}_{op}"


def node_of(op_name: str) -> int | None:
    """The graph node a metadata ``op_name`` came from (the innermost ``cs<i>_`` scope)."""
    found = _SCOPE.findall(op_name)
    return int(found[-1]) if found else None


def jax_problem() -> str | None:
    """None when JAX can be imported; otherwise one line saying why not."""
    try:
        import jax  # noqa: F401
    except Exception as err:  # an ImportError, or a broken jaxlib failing to load
        return f"{type(err).__name__}: {err}"
    return None


def load_jax() -> Any:
    """Import JAX on the CPU (the page never uses an accelerator), printing jaxprs without
    terminal colours, and return the module.

    Raises:
        ChipsimError: JAX is not installed or cannot be imported (the reason is named).
    """
    problem = jax_problem()
    if problem is not None:
        raise ChipsimError(
            f"JAX is not available ({problem}); install it with `pip install jax` "
            "(requirements.txt lists it for the page 'chipsim beside XLA')"
        )
    import jax

    jax.config.update("jax_platforms", "cpu")
    try:  # plain text: a notebook shows terminal colour codes literally
        jax.config.update("jax_pprint_use_color", False)
    except (AttributeError, KeyError, ValueError):  # a JAX without that option prints plainly
        pass
    return jax


def _requirements(name: str) -> set[str]:
    """The installed distributions ``name`` needs, itself included (extras left out)."""
    from importlib import metadata

    seen: set[str] = set()
    todo = [name]
    while todo:
        dist = re.split(r"[ <>=!~;\[(]", todo.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if dist in seen:
            continue
        try:
            requires = metadata.requires(dist) or []
        except metadata.PackageNotFoundError:
            continue
        seen.add(dist)
        todo += [r for r in requires if "extra ==" not in r]
    return seen


def jax_footprint() -> tuple[int, tuple[str, ...]]:
    """Bytes on disk of JAX and the packages it brought that chipsim does not need, and
    their names: what installing JAX added to this environment."""
    from importlib import metadata

    extra = sorted(_requirements("jax") - _requirements("chipsim"))
    total = 0
    for name in extra:
        for file in metadata.distribution(name).files or ():
            path = file.locate()
            if path.is_file():
                total += path.stat().st_size
    return total, tuple(extra)


def _conv2d(x: Any, w: Any, attrs: Attrs) -> Any:
    from jax import lax

    *_, (top, bottom, left, right) = conv_geometry(
        TensorType(tuple(x.shape), "f32"), TensorType(tuple(w.shape), "f32"), attrs
    )
    return lax.conv_general_dilated(
        x,
        w,
        window_strides=attrs["stride"],
        padding=[(top, bottom), (left, right)],
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
    )


def _axes(x: Any, attrs: Attrs) -> tuple[int, ...]:
    return reduced_axes(TensorType(tuple(x.shape), "f32"), attrs["axes"])


def _softmax(jnp: Any, x: Any, axis: int) -> Any:
    e = jnp.exp(x - jnp.max(x, axis=axis, keepdims=True))
    return e / jnp.sum(e, axis=axis, keepdims=True)


def _layernorm(jnp: Any, a: Sequence[Any], eps: float) -> Any:
    x = a[0]
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    y = (x - mean) / jnp.sqrt(var + eps)
    return y * a[1] + a[2] if len(a) == 3 else y


def _gelu(jnp: Any, x: Any) -> Any:  # the tanh approximation, as the registry computes it
    c = np.float32(np.sqrt(2.0 / np.pi))
    return 0.5 * x * (1.0 + jnp.tanh(c * (x + np.float32(0.044715) * (x * x * x))))


def jax_ops() -> dict[str, Callable[[Any, Sequence[Any], Attrs], Any]]:
    """``op -> fn(jnp, inputs, attrs)``: the JAX meaning of every op :func:`to_jax` knows."""
    unary = {
        "neg": lambda jnp, x: -x,
        "exp": lambda jnp, x: jnp.exp(x),
        "log": lambda jnp, x: jnp.log(x),
        "sqrt": lambda jnp, x: jnp.sqrt(x),
        "rsqrt": lambda jnp, x: 1.0 / jnp.sqrt(x),
        "tanh": lambda jnp, x: jnp.tanh(x),
        "sigmoid": lambda jnp, x: 1.0 / (1.0 + jnp.exp(-x)),
        "relu": lambda jnp, x: jnp.maximum(x, 0.0),
        "gelu": _gelu,
    }
    binary = {
        "add": lambda jnp, a, b: a + b,
        "sub": lambda jnp, a, b: a - b,
        "mul": lambda jnp, a, b: a * b,
        "div": lambda jnp, a, b: a / b,
        "maximum": lambda jnp, a, b: jnp.maximum(a, b),
        "minimum": lambda jnp, a, b: jnp.minimum(a, b),
        "gt": lambda jnp, a, b: a > b,
        "lt": lambda jnp, a, b: a < b,
        "ge": lambda jnp, a, b: a >= b,
        "le": lambda jnp, a, b: a <= b,
        "eq": lambda jnp, a, b: a == b,
        "matmul": lambda jnp, a, b: jnp.matmul(a, b),
    }
    table: dict[str, Callable[[Any, Sequence[Any], Attrs], Any]] = {}
    for name, fn in unary.items():
        table[name] = lambda jnp, a, attrs, fn=fn: fn(jnp, a[0])
    for name, fn in binary.items():
        table[name] = lambda jnp, a, attrs, fn=fn: fn(jnp, a[0], a[1])
    table.update(
        {
            "where": lambda jnp, a, attrs: jnp.where(a[0], a[1], a[2]),
            "sum": lambda jnp, a, at: jnp.sum(a[0], _axes(a[0], at), keepdims=at["keepdims"]),
            "max": lambda jnp, a, at: jnp.max(a[0], _axes(a[0], at), keepdims=at["keepdims"]),
            "mean": lambda jnp, a, at: jnp.mean(a[0], _axes(a[0], at), keepdims=at["keepdims"]),
            "softmax": lambda jnp, a, attrs: _softmax(jnp, a[0], attrs["axis"]),
            "layernorm": lambda jnp, a, attrs: _layernorm(jnp, a, attrs["eps"]),
            "reshape": lambda jnp, a, attrs: jnp.reshape(a[0], attrs["shape"]),
            "transpose": lambda jnp, a, attrs: jnp.transpose(a[0], attrs["perm"]),
            "conv2d": lambda jnp, a, attrs: _conv2d(a[0], a[1], attrs),
        }
    )
    return table


@dataclass(frozen=True)
class JaxGraph:
    """A graph as a JAX function: ``fn(*inputs, *weights)`` returns the graph's outputs.

    Attributes:
        graph: the graph it computes.
        fn: the function (not jitted: ``jax.jit(fn)``, ``jax.make_jaxpr(fn)``).
        weights: the constants passed as arguments after the inputs, as numpy arrays.
    """

    graph: Graph
    fn: Callable[..., Any]
    weights: tuple[np.ndarray, ...]

    def example_args(self, seed: int = 0) -> list[np.ndarray]:
        """Seeded random inputs (in the graph's dtypes), then the weights."""
        rng = np.random.default_rng(seed)
        inputs = [rng.standard_normal(v.shape).astype(v.dtype.numpy) for v in self.graph.inputs]
        return inputs + list(self.weights)


def _is_weight(node: Node) -> bool:
    return node.is_constant and node.output.type.numel > 1


def to_jax(graph: Graph) -> JaxGraph:
    """``graph`` as a JAX function, one named scope per node (see the module docstring).

    Raises:
        ChipsimError: a node's op has no JAX meaning here (it names the node and the op).
    """
    table = jax_ops()
    for i, node in enumerate(graph.nodes):
        if not node.is_constant and node.op not in table:
            raise ChipsimError(
                f"node {i} ({node.op}) of graph {graph.name}: chipsim.xla has no JAX "
                f"translation for {node.op!r}; add it to chipsim.xla.bridge.jax_ops()"
            )
    weights = [n for n in graph.nodes if _is_weight(n)]
    attrs = [check_attrs(get_op(n.op), n.attrs) for n in graph.nodes]

    def fn(*args: Any) -> Any:
        import jax
        import jax.numpy as jnp

        if len(args) != len(graph.inputs) + len(weights):
            raise ChipsimError(
                f"graph {graph.name} takes {len(graph.inputs)} inputs and "
                f"{len(weights)} weights, got {len(args)} arguments"
            )
        env = dict(zip(graph.inputs, args, strict=False))
        env.update(zip((n.output for n in weights), args[len(graph.inputs) :], strict=True))
        for i, node in enumerate(graph.nodes):
            if node.output in env:
                continue
            if node.is_constant:  # a scalar: a literal of the program
                env[node.output] = jnp.asarray(node.attrs["value"].array())
                continue
            with jax.named_scope(scope_name(i, node.op)):
                env[node.output] = table[node.op](jnp, [env[v] for v in node.inputs], attrs[i])
        outs = [env[v] for v in graph.outputs]
        return outs[0] if len(outs) == 1 else tuple(outs)

    fn.__name__ = graph.name.replace("-", "_") or "graph"
    return JaxGraph(graph, fn, tuple(n.attrs["value"].array() for n in weights))


def compile_xla(jg: JaxGraph, seed: int = 0) -> Any:
    """``jax.jit(jg.fn)`` lowered and compiled for this CPU (an XLA executable)."""
    jax = load_jax()
    return jax.jit(jg.fn).lower(*jg.example_args(seed)).compile()
