"""Hypothesis strategies for small, valid random graphs built with GraphBuilder (test helper)."""

import numpy as np
from hypothesis import strategies as st

import chipsim as cs

UNARY = ["exp", "tanh", "neg", "relu", "sigmoid", "gelu"]
BINARY = ["add", "sub", "mul", "maximum", "minimum"]


@st.composite
def graphs(draw, max_ops: int = 6) -> cs.Graph:
    """A graph over one or two f32[n, n] inputs mixing constants of every float dtype."""
    n = draw(st.integers(1, 3))
    b = cs.GraphBuilder(draw(st.sampled_from(["graph", "g2"])))
    pool = [b.input((n, n), "f32", hint="x")]
    if draw(st.booleans()):
        pool.append(b.input((n, n), "f32", hint="y"))
    for _ in range(draw(st.integers(1, max_ops))):
        v = draw(st.sampled_from(pool))
        kind = draw(
            st.sampled_from(
                [
                    "unary",
                    "binary",
                    "const",
                    "where",
                    "matmul",
                    "reduce",
                    "softmax",
                    "transpose",
                    "cast",
                    "reshape",
                ]
            )
        )
        if kind == "unary":
            out = b.op(draw(st.sampled_from(UNARY)), v)
        elif kind == "binary":
            out = b.op(draw(st.sampled_from(BINARY)), v, draw(st.sampled_from(pool)))
        elif kind == "const":
            dt = draw(st.sampled_from(["f32", "f16", "bf16"]))
            seed = draw(st.integers(0, 2**16))
            arr = np.random.default_rng(seed).standard_normal((n,)).astype(np.float32)
            c = b.const(arr, dt)
            if dt != "f32":
                c = b.op("cast", c, to="f32")
            out = b.op("mul", v, c)
        elif kind == "where":
            out = b.op("where", b.op("gt", v, b.const(0.0)), v, draw(st.sampled_from(pool)))
        elif kind == "matmul":
            out = b.op("matmul", v, draw(st.sampled_from(pool)))
        elif kind == "reduce":
            op = draw(st.sampled_from(["sum", "max", "mean"]))
            axis = draw(st.sampled_from([0, 1, -1]))
            out = b.op("sub", v, b.op(op, v, axes=(axis,), keepdims=True))
        elif kind == "softmax":
            out = b.op("softmax", v, axis=draw(st.sampled_from([0, -1])))
        elif kind == "transpose":
            out = b.op("transpose", v, perm=(1, 0))
        elif kind == "cast":
            low = b.op("cast", v, to=draw(st.sampled_from(["f16", "bf16"])))
            out = b.op("cast", low, to="f32")
        else:
            out = b.op("reshape", b.op("reshape", v, shape=(-1,)), shape=(n, n))
        pool.append(out)
    outs = [pool[-1]]
    if draw(st.booleans()):
        outs.append(draw(st.sampled_from(pool)))
    return b.build(*outs)


def example_inputs(graph: cs.Graph, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(v.shape).astype(np.float32) for v in graph.inputs]


def run(graph: cs.Graph, arrays) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return cs.interpret(graph, *arrays)
