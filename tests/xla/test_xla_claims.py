"""The structural claims of the page 'A real compiler beside chipsim' (book/xla.md), checked
against the JAX installed here: what XLA fuses for the book's graphs, that a Python ``if``
on a traced value raises and ``where`` / ``cond`` fix it, and XLA's buffer for the MLP.
Timings are not claims of the page and are not tested.
"""

from __future__ import annotations

import numpy as np
import pytest
from xla_graphs import fixture_graphs

import chipsim as cs
from chipsim.ir.ops import Pattern, get_op
from chipsim.workloads.blocks import transformer_graph
from chipsim.workloads.mlp import mlp_forward, mlp_params
from chipsim.xla import compare_fusion, compile_xla, load_jax, parse_hlo, to_jax
from chipsim.xla.timing import numpy_eager

jax = pytest.importorskip("jax")
load_jax()


def nodes_of(comparison, op):
    return [i for i, n in enumerate(comparison.graph.nodes) if n.op == op]


def test_add_mul_is_one_kernel_for_both_compilers():
    c = compare_fusion("add_mul", fixture_graphs()["add_mul"])
    (add,), (mul,) = nodes_of(c, "add"), nodes_of(c, "mul")
    assert len(c.xla) == len(c.groups) == 1
    assert c.xla[0].nodes == (add, mul) and c.same_groups == (0,)


def test_relu_layer_xla_keeps_the_matmul_apart_and_fuses_add_with_relu():
    """The page's claim for relu(W @ x + b): chipsim makes one kernel; XLA on the CPU makes
    two, the matrix product alone and the bias add fused with the ReLU."""
    c = compare_fusion("linear_relu", fixture_graphs()["linear_relu"])
    (matmul,), (add,), (relu,) = (nodes_of(c, op) for op in ("matmul", "add", "relu"))
    assert len(c.groups) == 1 and len(c.xla) == 2
    assert c.kernels_of(add) == c.kernels_of(relu)
    assert not set(c.kernels_of(matmul)) & set(c.kernels_of(add))
    assert c.split_groups == (0,) and c.contraction_epilogues() == (1, 0)


def test_the_page_code_for_the_layer_gives_the_same_kernels():
    """The page compiles its own JAX function (W and b captured as constants): the same two
    kernels, a dot and a fusion of add and maximum."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 256)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    x = rng.standard_normal(256).astype(np.float32)
    text = jax.jit(lambda x: jax.numpy.maximum(w @ x + b, 0.0)).lower(x).compile().as_text()
    kernels = parse_hlo(text).kernels()
    assert [set(k.opcodes) for k in kernels] == [{"dot"}, {"add", "maximum"}]


def test_every_computing_node_of_a_transformer_is_mapped_to_a_kernel():
    """After XLA's passes the node scopes still find every computing operator; only layout
    operators (reshape, transpose) may become free."""
    c = compare_fusion("transformer", transformer_graph(0, seq=32, d=32, ff=64))
    free_ops = {c.graph.nodes[i].op for i in c.free_nodes}
    assert free_ops <= {"reshape", "transpose"}
    assert not c.unmapped_kernels
    for i in c.work_nodes:
        if get_op(c.graph.nodes[i].op).pattern is Pattern.REDUCTION:
            assert c.kernels_of(i), c.node_label(i)


@pytest.mark.parametrize("name", ["linear_relu", "cnn"])
def test_the_jax_function_computes_what_numpy_computes(name):
    graph = cs.compile(fixture_graphs()[name], chip="cpu-simd").graph
    jg = to_jax(graph)
    args = jg.example_args()
    got = np.asarray(jax.jit(jg.fn)(*args))
    want = numpy_eager(graph)(*args[: len(graph.inputs)])[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        got, cs.interpret(graph, *args[: len(graph.inputs)])[0], rtol=1e-4, atol=1e-4
    )


def test_python_if_raises_a_concretization_error_and_where_and_cond_fix_it():
    def with_if(x):
        if x.sum() > 0:
            return x * 2
        return jax.numpy.maximum(x, 0.0)

    def with_cond(x):
        return jax.lax.cond(x.sum() > 0, lambda t: t * 2, lambda t: jax.numpy.maximum(t, 0.0), x)

    def with_where(x):
        return jax.numpy.where(x.sum() > 0, x * 2, jax.numpy.maximum(x, 0.0))

    values = np.array([1.0, -2.0, 4.0], np.float32)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(with_if)(values)
    with pytest.raises(cs.TraceError):
        cs.trace(lambda x: x * 2 if x.sum() > 0 else cs.ops.relu(x), values)
    for v in (values, -values):
        for fn in (with_cond, with_where):
            np.testing.assert_allclose(np.asarray(jax.jit(fn)(v)), with_if(v))
    kernels = parse_hlo(jax.jit(with_cond).lower(values).compile().as_text()).kernels()
    assert any(k.opcode == "conditional" for k in kernels)


def test_xla_buffer_for_the_mlp_is_the_peak_of_its_schedule():
    params = mlp_params((256, 512, 512, 10))
    graph = cs.trace(lambda t: mlp_forward(t, *params), np.zeros((64, 256), np.float32))
    program = cs.compile(graph, chip="cpu-simd")
    compiled = compile_xla(to_jax(program.graph))
    module = parse_hlo(compiled.as_text())
    temp = compiled.memory_analysis().temp_size_in_bytes
    assert temp == module.live_peak() > 0
    assert program.plan.arena_size == program.plan.lower_bound
