"""Every op, run by the simulated program, equals the reference interpreter."""

import numpy as np
import pytest

from chipsim.codegen import KernelSpec, Location, kernel_name, lower, plan_kernel
from chipsim.errors import PlanError
from chipsim.hw import get_chip
from chipsim.ir import GraphBuilder, bf16, f16, f32, i32, interpret

from .harness import run_graph

RNG = np.random.default_rng(0)

CASES = [
    *[
        (op, lambda b, x, op=op: b.op(op, x), [(16, 12)])
        for op in ["neg", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "gelu"]
    ],
    *[
        (op, lambda b, x, y, op=op: b.op(op, x, y), [(16, 12), (12,)])
        for op in ["add", "sub", "mul", "div", "maximum", "minimum"]
    ],
    ("add-outer", lambda b, x, y: b.op("add", x, y), [(16, 1), (1, 12)]),
    ("where-gt", lambda b, x, y: b.op("where", b.op("gt", x, y), x, y), [(16, 12), (16, 12)]),
    ("lt", lambda b, x, y: b.op("cast", b.op("lt", x, y), to="f32"), [(16, 12), (16, 12)]),
    ("eq", lambda b, x: b.op("cast", b.op("eq", x, x), to="f32"), [(16, 12)]),
    ("cast", lambda b, x: b.op("cast", x, to="f16"), [(16, 12)]),
    ("matmul", lambda b, x, y: b.op("matmul", x, y), [(16, 12), (12, 8)]),
    ("bmm", lambda b, x, y: b.op("matmul", x, y), [(3, 16, 12), (3, 12, 8)]),
    ("bmm-bcast", lambda b, x, y: b.op("matmul", x, y), [(3, 16, 12), (12, 8)]),
    ("matvec", lambda b, x, y: b.op("matmul", x, y), [(16, 12), (12,)]),
    ("conv2d", lambda b, x, w: b.op("conv2d", x, w, padding="same"), [(2, 8, 8, 3), (3, 3, 3, 4)]),
    ("conv2d-s2", lambda b, x, w: b.op("conv2d", x, w, stride=2), [(2, 9, 9, 3), (3, 3, 3, 4)]),
    ("transpose", lambda b, x: b.op("transpose", x), [(16, 12)]),
    ("transpose3", lambda b, x: b.op("transpose", x, perm=(0, 2, 1)), [(4, 6, 5)]),
    ("reshape", lambda b, x: b.op("exp", b.op("reshape", x, shape=(16, 3, 4))), [(16, 12)]),
    ("reshape-rows", lambda b, x: b.op("exp", b.op("reshape", x, shape=(12, 16))), [(16, 12)]),
    ("broadcast_to", lambda b, x: b.op("broadcast_to", x, shape=(16, 12)), [(12,)]),
    ("concat1", lambda b, x, y: b.op("concat", x, y, axis=1), [(16, 12), (16, 3)]),
    ("concat0", lambda b, x, y: b.op("concat", x, y, axis=0), [(16, 12), (4, 12)]),
    ("slice", lambda b, x: b.op("slice", x, starts=(0, 2), stops=(16, 9)), [(16, 12)]),
    (
        "slice-rows",
        lambda b, x: b.op("slice", x, starts=(2, 2), stops=(10, 9), steps=(2, 1)),
        [(16, 12)],
    ),
    *[
        (f"{op}-{ax}", lambda b, x, op=op, ax=ax: b.op(op, x, axes=ax), [(16, 12)])
        for op in ["sum", "max", "mean"]
        for ax in [(1,), (0,), None]
    ],
    ("softmax", lambda b, x: b.op("softmax", x), [(16, 12)]),
    ("softmax-0", lambda b, x: b.op("softmax", x, axis=0), [(16, 12)]),
    ("layernorm", lambda b, x, w, c: b.op("layernorm", x, w, c), [(16, 12), (12,), (12,)]),
    (
        "constants",
        lambda b, x: b.op(
            "mul", b.op("add", x, b.const(1.0)), b.const(np.arange(12, dtype=np.float32))
        ),
        [(16, 12)],
    ),
    (
        "mlp",
        lambda b, x, w: b.op("gelu", b.op("layernorm", b.op("matmul", x, w))),
        [(32, 12), (12, 16)],
    ),
]


def _check(build, shapes, dt=f32, **kw):
    b = GraphBuilder()
    ins = [b.input(s, dt) for s in shapes]
    g = b.build(build(b, *ins))
    if dt is i32:
        args = [RNG.integers(-5, 5, v.shape).astype(np.int32) for v in g.inputs]
    else:
        args = [
            (np.abs(RNG.standard_normal(v.shape)) + 0.5).astype(v.dtype.numpy) for v in g.inputs
        ]
    ref = interpret(g, *args)[0]
    tol = dict(rtol=1e-5, atol=1e-6) if dt is f32 else dict(rtol=2e-2, atol=1e-2)
    for fused in (False, True):
        for window in (None, (0, 2048)):  # 2 KiB of SRAM forces small tiles or a spill
            outs, _ = run_graph(g, *args, fused=fused, sram_window=window, **kw)
            assert outs[0].shape == ref.shape
            np.testing.assert_allclose(
                outs[0].astype(np.float64),
                ref.astype(np.float64),
                **tol,
                err_msg=f"fused={fused} window={window}",
            )


@pytest.mark.parametrize("name,build,shapes", CASES, ids=[c[0] for c in CASES])
def test_op_matches_interpreter(name, build, shapes):
    _check(build, shapes)


@pytest.mark.parametrize("dt", [f16, bf16], ids=["f16", "bf16"])
def test_half_precision(dt):
    _check(
        lambda b, x, y: b.op("relu", b.op("add", b.op("matmul", x, y), b.const(1.0, dt))),
        [(16, 12), (12, 8)],
        dt,
    )


def test_integer_matmul_runs_on_the_mac_array():
    _check(lambda b, x, y: b.op("matmul", x, y), [(16, 12), (12, 8)], i32)
    b = GraphBuilder()
    x, y = b.input((16, 12), i32), b.input((12, 8), i32)
    b.op("matmul", x, y)
    _, sim = run_graph(b.build(b.nodes[-1].output), functional=False)
    assert {r.instr.unit for r in sim.records} >= {"mac"}
    assert "tensor" not in {r.instr.unit for r in sim.records}


def test_kernel_names():
    b = GraphBuilder()
    x, w = b.input((8, 8), f32), b.input((8, 8), f32)
    b.op("relu", b.op("add", b.op("matmul", x, w), b.const(1.0)))
    assert kernel_name(b.nodes) == "fused_matmul_add_relu"
    assert kernel_name(b.nodes[:1]) == "matmul"


def test_tensor_core_macro_instruction_counts_4x4x4_operations():
    b = GraphBuilder()
    x, w = b.input((8, 12), f32), b.input((12, 16), f32)
    y = b.op("matmul", x, w)
    loc = {x: Location("dram", 0), w: Location("dram", 1024), y: Location("dram", 4096)}
    prog = lower(KernelSpec.of(b.nodes, [y], loc), get_chip("edge-npu"))
    mma = [i for i in prog if i.opcode == "mma"]
    assert sum(i.hw_ops for i in mma) == (8 // 4) * (16 // 4) * (12 // 4)


def test_over_capacity_group_spills_instead_of_failing():
    b = GraphBuilder()
    x = b.input((64, 64), f32)
    y = b.op("softmax", b.op("exp", x), axis=0)  # needs all rows at once: 16 KiB each
    g = b.build(y)
    loc = {x: Location("dram", 0), y: Location("dram", 16384)}
    spec = KernelSpec.of(g.nodes, [y], loc)
    small = KernelSpec(spec.name, spec.nodes, spec.inputs, spec.outputs, loc, (0, 8192))
    plan = plan_kernel(small, get_chip("edge-npu"))
    assert plan.mode == "spill" and plan.scratch_bytes == 16384
    with pytest.raises(PlanError, match="scratch"):
        lower(small, get_chip("edge-npu"))
    arg = RNG.standard_normal((64, 64)).astype(np.float32)
    tiled, sim_t = run_graph(g, arg, fused=True)
    spilled, sim_s = run_graph(g, arg, fused=True, sram_window=(0, 8192))
    np.testing.assert_allclose(spilled[0], interpret(g, arg)[0], rtol=1e-5)
    assert sim_s.cycles > sim_t.cycles  # spilling is slower
