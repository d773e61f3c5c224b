"""Blocked contractions (weights too big for SRAM), matrix-vector row tiling, and the
over-fusion demonstration."""

import dataclasses

import numpy as np
import pytest

from chipsim.codegen import KernelSpec, Location, lower, plan_kernel
from chipsim.compiler import compile as compile_graph
from chipsim.errors import PlanError, SimulationError
from chipsim.hw import Instr, Operand, Simulator, get_chip
from chipsim.hw.parts import SRAM
from chipsim.ir import GraphBuilder, f32, interpret
from chipsim.workloads.overfusion import overfusion_demo

from .harness import place, run_graph

SMALL = dataclasses.replace(get_chip("edge-npu"), sram=SRAM(capacity_bytes=64 * 1024))


def _graph(shapes, build):
    b = GraphBuilder()
    ins = [b.input(s, f32) for s in shapes]
    return b.build(build(b, *ins))


def _plan(g, chip=SMALL, window=None):
    loc, _ = place([*g.inputs, *(n.output for n in g.nodes)])
    spec = KernelSpec.of([n for n in g.nodes if n.op != "constant"], g.outputs, loc)
    spec = KernelSpec(spec.name, spec.nodes, spec.inputs, spec.outputs, loc, window)
    return plan_kernel(spec, chip)


def _check(g, chip=SMALL, mode="blocked", **kw):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(v.shape).astype(np.float32) for v in g.inputs]
    assert _plan(g, chip, kw.get("sram_window")).mode == mode
    outs, sim = run_graph(g, *args, chip=chip, fused=True, **kw)
    np.testing.assert_allclose(outs[0], interpret(g, *args)[0], rtol=1e-4, atol=1e-4)
    return sim


MATMULS = [
    ("matmul", [(256, 384), (384, 512)], lambda b, x, w: b.op("matmul", x, w)),
    (
        "matmul-bias-relu",
        [(256, 384), (384, 512), (512,)],
        lambda b, x, w, c: b.op("relu", b.op("add", b.op("matmul", x, w), c)),
    ),
    (
        "matmul-residual-gelu",
        [(64, 96), (96, 640), (64, 640)],
        lambda b, x, w, r: b.op("gelu", b.op("add", r, b.op("matmul", x, w))),
    ),
    ("bmm", [(12, 128, 64), (12, 64, 128)], lambda b, x, w: b.op("matmul", x, w)),
    ("bmm-bcast", [(8, 64, 128), (128, 64)], lambda b, x, w: b.op("matmul", x, w)),
    ("vecmat", [(512,), (512, 256)], lambda b, x, w: b.op("matmul", x, w)),
    (
        "conv2d",
        [(2, 8, 8, 64), (3, 3, 64, 96)],
        lambda b, x, w: b.op("conv2d", x, w, padding="same"),
    ),
]


@pytest.mark.parametrize("name,shapes,build", MATMULS, ids=[m[0] for m in MATMULS])
def test_blocked_contraction_matches_interpreter(name, shapes, build):
    g = _graph(shapes, build)
    window = (0, 48 * 1024) if name == "bmm" else None  # row tiles of the bmm fit 64 KiB
    _check(g, sram_window=window)


def test_inner_dimension_is_split_and_accumulated_when_tiles_must_be_tiny():
    g = _graph([(64, 512), (512, 128)], lambda b, x, w: b.op("matmul", x, w))
    plan = _plan(g, window=(0, 8 * 1024))
    assert plan.mode == "blocked" and plan.block[2] < 512
    sim = _check(g, sram_window=(0, 8 * 1024))
    assert sum(1 for r in sim.records if r.instr.opcode == "mma") > plan.tiles  # accumulation


def test_epilogue_runs_on_chip_only_the_output_is_stored():
    g = MATMULS[1]
    g = _graph(g[1], g[2])
    _, sim = run_graph(g, chip=SMALL, fused=True, functional=False)
    stored = sum(r.instr.work for r in sim.records if r.instr.opcode == "store")
    assert stored == g.outputs[0].type.nbytes  # neither matmul nor add results leave the chip
    assert all(
        o.level != "dram" for r in sim.records if r.instr.unit != "dma" for o in r.instr.srcs
    )


def test_big_double_buffered_matmul_runs_near_max_of_dma_and_compute():
    g = _graph([(256, 384), (384, 512)], lambda b, x, w: b.op("matmul", x, w))
    _, double = run_graph(g, chip=SMALL, fused=True, functional=False)
    _, single = run_graph(g, chip=SMALL, fused=True, functional=False, double_buffer=False)
    busy = {
        u: sum(r.cycles for r in double.records if r.instr.unit == u) for u in ("dma", "tensor")
    }
    kernel = double.cycles - SMALL.launch.graph_cycles
    assert max(busy.values()) <= kernel <= 1.10 * max(busy.values())
    assert single.cycles > double.cycles


def test_gpt2_sized_weight_on_edge_npu_is_blocked_not_spilled():
    g = _graph([(128, 768), (768, 3072)], lambda b, x, w: b.op("matmul", x, w))
    plan = _plan(g, get_chip("edge-npu"))
    assert plan.mode == "blocked" and plan.buffers == 2 and plan.sram_bytes <= 512 * 1024


def test_lowering_is_deterministic():
    g = _graph(MATMULS[1][1], MATMULS[1][2])
    loc, _ = place([*g.inputs, *(n.output for n in g.nodes)])
    spec = KernelSpec.of(g.nodes, g.outputs, loc)
    texts = [[str(i) for i in lower(spec, SMALL)] for _ in range(2)]
    assert texts[0] == texts[1]


@pytest.mark.parametrize("x_shape", [(256,), (256, 1)], ids=["rank1", "column"])
def test_matrix_vector_tiles_over_the_rows_of_w(x_shape):
    bias = (512,) if len(x_shape) == 1 else (512, 1)
    g = _graph(
        [(512, 256), x_shape, bias],
        lambda b, w, x, c: b.op("relu", b.op("add", b.op("matmul", w, x), c)),
    )
    plan = _plan(g)
    assert plan.mode == "tiled" and plan.tiles > 1
    _check(g, mode="tiled")


def test_unknown_memory_level_names_the_instruction():
    sim = Simulator(get_chip("edge-npu"))
    bad = Operand("hbm", 0, (4,), "f32", None, "x")
    good = Operand("sram", 0, (4,), "f32")
    with pytest.raises(SimulationError, match=r"instruction #0 .*unknown memory level 'hbm'"):
        sim.run([Instr("load", "dma", (bad,), (good,), work=16)])


def test_overfusion_is_slower_than_the_best_split():
    chip = get_chip("edge-npu")
    g, fused_all, split = overfusion_demo(chip)
    x = np.random.default_rng(1).standard_normal(g.inputs[0].shape).astype(np.float32)
    ref = interpret(g, x)[0]
    progs = {}
    for name, part in (("fused", fused_all), ("split", split)):
        progs[name] = compile_graph(g, chip=chip, fusion=lambda graph, target, p=part: p)
        assert len(progs[name].kernels) == len(part.groups)
        np.testing.assert_allclose(progs[name](x), ref, rtol=1e-4, atol=1e-5)
    assert plan_kernel(progs["fused"].kernels[0], chip).mode == "spill"
    assert all(plan_kernel(k, chip).mode != "spill" for k in progs["split"].kernels)
    assert progs["fused"].cycles > progs["split"].cycles


def test_location_level_is_checked():
    with pytest.raises(PlanError, match="level"):
        Location("hbm", 0)


def test_the_memo_of_block_sizes_returns_what_the_search_does(monkeypatch):
    """``choose_blocks`` is memoised per kernel signature without addresses: the layers of
    this chain that repeat (same shapes, other addresses) share a choice, the others (other
    widths) must each get what the search finds for them alone."""
    from chipsim.codegen import block_sizes
    from chipsim.codegen.contraction import match_blocked

    rng = np.random.default_rng(0)
    b = GraphBuilder()
    h = b.input((256, 512), f32)
    for cols in (512, 512, 1024, 256, 256):  # weights of 1 and 2 MiB: more than SRAM
        w = b.const(rng.standard_normal((h.shape[1], cols)).astype(np.float32))
        h = b.op("relu", b.op("matmul", h, w))
    program = compile_graph(b.build(h), chip="edge-npu")
    blocked = [(k, match_blocked(k)) for k in program.kernels]
    blocked = [(k, bk) for k, bk in blocked if bk is not None]
    assert len(blocked) == 5
    chip = program.chip
    monkeypatch.setattr(block_sizes, "_CHOSEN", {})  # start empty
    for k, bk in blocked:
        window = k.sram_window
        chosen = block_sizes.choose_blocks(bk, k, chip, window, True)
        assert chosen == block_sizes.search_blocks(bk, k, chip, window, True)
    assert len(block_sizes._CHOSEN) < len(blocked)
