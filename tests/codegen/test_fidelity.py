"""Fidelity invariants of the cost model (the issue's list)."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from chipsim.hw import get_chip
from chipsim.ir import GraphBuilder, f16, f32
from chipsim.ir.ops import get_op
from chipsim.runtime import make_device, roofline_cycles

from .harness import run_graph

UNARY = ["exp", "relu", "gelu", "tanh", "neg"]
BINARY = ["add", "mul", "div", "maximum"]


def _eager_kernel(chip, build, shapes, dt=f32):
    """Run one op eagerly (timing only); return its KernelStat and the node."""
    b = GraphBuilder()
    ins = [b.input(s, dt) for s in shapes]
    build(b, *ins)
    node = b.nodes[-1]
    dev = make_device(chip, functional=False)
    dev.run(node, [dev.upload(None, v.type) for v in ins])
    return dev.report.kernels[0], node


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["edge-npu", "datacenter-gpu", "cpu-simd"]),
    st.sampled_from(["unary", "binary", "matmul", "softmax", "sum", "layernorm"]),
    st.sampled_from(UNARY + BINARY),
    st.integers(1, 300),
    st.integers(1, 300),
    st.integers(1, 200),
    st.sampled_from([f32, f16]),
)
def test_no_kernel_beats_its_roofline(chip_name, kind, op, m, n, k, dt):
    chip = get_chip(chip_name)
    if kind == "unary":
        op = op if op in UNARY else "exp"
        stat, node = _eager_kernel(chip, lambda b, x: b.op(op, x), [(m, n)], dt)
    elif kind == "binary":
        op = op if op in BINARY else "add"
        stat, node = _eager_kernel(chip, lambda b, x, y: b.op(op, x, y), [(m, n), (n,)], dt)
    elif kind == "matmul":
        stat, node = _eager_kernel(chip, lambda b, x, y: b.op("matmul", x, y), [(m, k), (k, n)], dt)
    elif kind == "layernorm":
        stat, node = _eager_kernel(chip, lambda b, x: b.op("layernorm", x), [(m, n)], dt)
    else:
        stat, node = _eager_kernel(chip, lambda b, x: b.op(kind, x), [(m, n)], dt)
    opdef = get_op(node.op)
    reads = opdef.bytes_read([v.type for v in node.inputs])
    writes = opdef.bytes_written(node.type)
    if chip.l2.present:  # the inputs are cold; a write-back L2 may keep the output on chip
        assert stat.dram_bytes >= reads
        assert stat.cycles >= roofline_cycles(chip, stat.flops, reads, stat.units)
        assert stat.cycles >= (reads + writes) / chip.l2.bytes_per_cycle  # all cross the L2
    else:
        assert stat.dram_bytes >= reads + writes
        assert stat.cycles >= roofline_cycles(chip, stat.flops, reads + writes, stat.units)


def _per_op_cycles(n, reps=6):
    b = GraphBuilder()
    x, y = b.input((n,), f32), b.input((n,), f32)
    b.op("add", x, y)
    node = b.nodes[-1]
    dev = make_device("edge-npu", functional=False)
    bx, by = dev.upload(None, x.type), dev.upload(None, y.type)
    for _ in range(reps):
        dev.release(dev.run(node, [bx, by]), node.type)
    return dev.cycles / reps


def test_eager_elementwise_is_launch_bound_then_bandwidth_bound():
    chip = get_chip("edge-npu")
    n_star = chip.launch.eager_cycles * chip.dram.bytes_per_cycle / 12  # 3 f32 per element
    small = [2**k for k in range(4, 10)]  # well below n* (~2.7k)
    times = [_per_op_cycles(n) for n in small]
    for t0, t1 in zip(times, times[1:], strict=False):
        assert t1 <= 1.10 * t0  # flat
    big = [2**k for k in range(17, 21)]  # well above n*
    tb = [_per_op_cycles(n) for n in big]
    for t0, t1 in zip(tb, tb[1:], strict=False):
        assert math.isclose(t1 / t0, 2.0, rel_tol=0.10)  # linear
    slope = (tb[-1] - tb[0]) / (big[-1] - big[0])
    crossover = times[0] / slope  # where the flat and linear regimes meet
    assert n_star / 2 <= crossover <= 2 * n_star


def _units_time(sim, units):
    return sum(r.cycles for r in sim.records if r.instr.unit in units)


def test_double_buffering_overlaps_dma_with_compute():
    b = GraphBuilder()
    a, w = b.input((2048, 64), f32), b.input((64, 64), f32)
    g = b.build(b.op("matmul", a, w))
    window = (0, 48 * 1024)
    _, single = run_graph(g, fused=True, functional=False, double_buffer=False, sram_window=window)
    _, double = run_graph(g, fused=True, functional=False, double_buffer=True, sram_window=window)
    tiles = sum(1 for r in double.records if r.instr.opcode == "mma")
    assert tiles >= 16
    for sim in (single, double):
        assert _units_time(sim, {"dma"}) == _units_time(double, {"dma"})  # same work
    dma, comp = _units_time(double, {"dma"}), _units_time(double, {"tensor"})
    launch = get_chip("edge-npu").launch.graph_cycles
    assert math.isclose(single.cycles - launch, dma + comp, rel_tol=0.05)
    assert math.isclose(double.cycles - launch, max(dma, comp), rel_tol=0.05)
