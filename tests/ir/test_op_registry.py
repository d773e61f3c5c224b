"""Conformance of every op in the registry: each trait it declares is true.

These tests enumerate :data:`chipsim.ir.ops.OPS`, so a new op is checked by adding it to the
registry: its examples run through inference, numpy, row tiling, the code generator on every
chip, and the public function and tensor method the front end builds from it.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

import chipsim as cs
from chipsim.codegen import KernelSpec, Location, lower, plan_kernel
from chipsim.hw import Operand, Simulator, get_chip, list_chips
from chipsim.ir import GraphBuilder, interpret
from chipsim.ir.attrs import Attrs
from chipsim.ir.ops import OPS, check_attrs, execute, flops, infer_type

EXAMPLES = [
    pytest.param(name, i, ex, id=f"{name}-{i}")
    for name in sorted(OPS)
    for i, ex in enumerate(OPS[name].examples)
]


def _arrays(example, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for t in example.inputs:
        if t.dtype.kind == "bool":
            out.append(rng.random(t.shape) < 0.5)
        elif t.dtype.kind == "int":
            out.append(rng.integers(-5, 5, t.shape).astype(t.dtype.numpy))
        elif example.low is not None:
            out.append((example.low + np.abs(rng.standard_normal(t.shape))).astype(t.dtype.numpy))
        else:
            out.append(rng.standard_normal(t.shape).astype(t.dtype.numpy))
    return out


def _graph(name, example):
    b = GraphBuilder(name)
    ins = [b.input(t.shape, t.dtype) for t in example.inputs]
    return b.build(b.op(name, *ins, **example.attrs))


def test_every_public_op_has_examples_and_a_function_and_a_method():
    for name, opdef in OPS.items():
        if not opdef.public:
            continue
        assert opdef.examples, f"{name}: give the OpDef examples (the conformance tests use them)"
        fn = getattr(cs.ops, name)
        params = list(inspect.signature(fn).parameters)
        assert params == [*opdef.inputs, *opdef.attrs], name
        assert opdef.doc and fn.__doc__.startswith(opdef.doc[0].upper()), name
    x = cs.tensor(np.ones((2, 3), np.float32))
    assert x.gelu().numpy().shape == (2, 3)
    assert x.sum(axes=-1).numpy().tolist() == [3.0, 3.0]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        x.nope  # noqa: B018


@pytest.mark.parametrize(("name", "index", "example"), EXAMPLES)
def test_example_infers_the_shape_numpy_computes(name, index, example):
    opdef = OPS[name]
    attrs = Attrs(example.attrs)
    out = infer_type(name, example.inputs, attrs)
    result = execute(name, _arrays(example), attrs, out)
    assert result.shape == out.shape and result.dtype == out.dtype.numpy
    assert flops(name, example.inputs, out, attrs) >= 0
    full = check_attrs(opdef, attrs)
    if opdef.contraction is not None:
        c = opdef.contraction(example.inputs, out, full)
        assert flops(name, example.inputs, out, attrs) == 2 * c.batch * c.m * c.k * c.n
    if opdef.reduction is not None:
        r = opdef.reduction(example.inputs, out, full)
        assert 1 <= r.count <= out.numel or out.numel == 1
        assert r.count * r.passes >= 1


@pytest.mark.parametrize(("name", "index", "example"), EXAMPLES)
def test_row_rule_is_true(name, index, example):
    """Where an op says a block of output rows needs only the same block of some inputs,
    computing on those blocks gives exactly those rows of the whole result."""
    opdef = OPS[name]
    attrs = check_attrs(opdef, Attrs(example.attrs))
    out = infer_type(name, example.inputs, attrs)
    flags = opdef.row_inputs(example.inputs, out, attrs)
    if flags is None or out.shape[0] < 3:
        return
    arrays = _arrays(example)
    whole = execute(name, arrays, attrs, out)
    lo, hi = 1, out.shape[0] - 1  # an inner block: both edges are cut
    block = [a[lo:hi] if f else a for a, f in zip(arrays, flags, strict=True)]
    block_type = out.with_shape((hi - lo, *out.shape[1:]))
    got = execute(name, block, opdef.tile_attrs(attrs, block_type), block_type)
    np.testing.assert_allclose(got, whole[lo:hi], rtol=1e-6, atol=1e-6)
    for t, f in zip(example.inputs, flags, strict=True):
        if f:  # a sliced input has the output's rows
            assert t.shape[0] == out.shape[0]


def _run_alone(graph, arrays, chip, window):
    """Lower the graph's one op as one kernel (inputs and output in DRAM) and simulate it."""
    node = graph.nodes[-1]
    loc, cursor = {}, 0
    for v in (*graph.inputs, node.output):
        loc[v] = Location("dram", cursor)
        cursor += -(-max(v.type.nbytes, 1) // 64) * 64
    kernel = KernelSpec.of([node], [node.output], loc)
    kernel = KernelSpec(kernel.name, kernel.nodes, kernel.inputs, kernel.outputs, loc, window,
                        Location("dram", cursor))  # fmt: skip
    sim = Simulator(chip)
    for v, a in zip(graph.inputs, arrays, strict=True):
        sim.memory["dram"].write(Operand("dram", loc[v].offset, v.shape, v.dtype.name), a)
    sim.run(lower(kernel, chip))
    out = node.output
    return sim.memory["dram"].read(Operand("dram", loc[out].offset, out.shape, out.dtype.name))


@pytest.mark.parametrize("chip", list_chips())
@pytest.mark.parametrize(("name", "index", "example"), EXAMPLES)
def test_code_generator_runs_every_example_like_the_interpreter(chip, name, index, example):
    graph = _graph(name, example)
    arrays = _arrays(example, seed=1)
    ref = interpret(graph, *arrays)[0]
    target = get_chip(chip)
    for window in (None, (0, 4096)):  # all of SRAM, then 4 KiB: small row tiles or a spill
        got = _run_alone(graph, arrays, target, window)
        tol = dict(rtol=1e-5, atol=1e-5) if ref.dtype == np.float32 else dict(rtol=1e-2)
        np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), **tol)


def test_hardware_names_no_op():
    """The hardware model costs opcodes on units; an op's name appears only in the registry."""
    hw = Path(cs.__file__).parent / "hw"
    for path in sorted(hw.glob("*.py")):
        strings = {
            n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)
        }
        named = sorted(s for s in strings if isinstance(s, str) and s in OPS)
        assert not named, f"{path.name} names IR ops {named}; cost belongs to opcodes and units"


# -- finding 3 of issue 10: the fusion cost model and the code generator read one row rule ----
@pytest.mark.parametrize(
    ("op", "shape", "attrs"),
    [("transpose", (256, 16, 16), {"perm": (0, 2, 1)}), ("sum", (64, 64), {"axes": (-1,)})],
    ids=["transpose-0-2-1", "sum-last-axis"],
)
def test_estimate_and_code_generator_agree_on_streaming(op, shape, attrs):
    from chipsim.passes.fusion.cost import estimate_kernel, mixes_rows

    b = GraphBuilder()
    x = b.input(shape)
    g = b.build(b.op(op, x, **attrs))
    assert not mixes_rows(g, 0)
    assert estimate_kernel(g, [0], get_chip("edge-npu")).streams
    node = g.nodes[0]
    loc = {x: Location("dram", 0), node.output: Location("dram", 1 << 20)}
    kernel = KernelSpec.of([node], [node.output], loc)
    plan = plan_kernel(KernelSpec(kernel.name, kernel.nodes, kernel.inputs, kernel.outputs, loc,
                                  (0, 16384)), get_chip("edge-npu"))  # fmt: skip
    assert plan.mode == "tiled" and plan.tiles > 1
