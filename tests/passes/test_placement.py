"""Placement: its rules stated once (level_for, which place and place_group both follow) and the
capacity of every memory level checked (issue 10, findings 1 and 2)."""

import functools

import numpy as np
import pytest

import chipsim as cs
from chipsim.codegen.streaming import streamed_inputs
from chipsim.errors import ChipsimError, OutOfMemoryError
from chipsim.hw import get_chip
from chipsim.ir import GraphBuilder, f32
from chipsim.passes.placement import DRAM, REG, SRAM, level_for, place_group


def bias_relu_layers(layers: int = 20, width: int = 64):
    """``layers`` times ``relu(x + bias)`` on f32[8, width], each bias its own constant."""
    rng = np.random.default_rng(0)
    b = GraphBuilder()
    x = b.input((8, width), f32, "x")
    biases = [rng.standard_normal(width).astype(np.float32) for _ in range(layers)]
    y = x
    for bias in biases:
        y = b.op("relu", b.op("add", y, b.const(bias)))
    return b.build(y), biases


def test_small_constants_beyond_the_register_file_fall_back_to_memory():
    graph, biases = bias_relu_layers()
    chip = get_chip("edge-npu")
    assert sum(b.nbytes for b in biases) > chip.registers.capacity_bytes  # the finding's case
    prog = cs.compile(graph, chip=chip, fusion=None)
    slots = prog.placement.slots
    in_regs = [s for s in slots.values() if s.level == REG]
    assert in_regs, "small constants still go to registers while they fit"
    assert max(s.offset for s in in_regs) + 256 <= chip.registers.capacity_bytes
    assert any(s.level == DRAM and s.role == "small constant" for s in slots.values())
    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    want = x
    for bias in biases:
        want = np.maximum(want + bias, 0)
    np.testing.assert_allclose(prog(x), want, rtol=1e-6)
    assert prog.report.cycles > 0


def test_dram_overflow_is_refused_at_compile_time_with_the_tensors_named():
    x = np.zeros((4096, 4096), np.float32)
    with pytest.raises(OutOfMemoryError) as err:
        cs.compile(lambda x: cs.ops.relu(x) + 1, x, chip="edge-npu")
    msg = str(err.value)
    assert "DRAM" in msg and "64.00 MiB" in msg  # the memory and its size
    assert "x" in msg and "f32[4096, 4096]" in msg  # the tensors and their sizes
    assert "smaller" in msg or "chip with more" in msg  # advice that fits
    assert "tile" not in msg
    assert isinstance(err.value, ChipsimError)


def test_a_program_that_fits_dram_exactly_compiles():
    # 3 x 16 MiB (input, intermediate spilled, output) on a 64 MiB DRAM: fits
    x = np.zeros((2048, 2048), np.float32)
    prog = cs.compile(lambda x: cs.ops.relu(x) + 1, x, chip="edge-npu")
    assert prog.report.cycles > 0


def _two_kernel_chain(n: int):
    """``exp(x @ w1) @ w2``: two contractions, so two kernels on the GPU (grid-wide rule)."""
    rng = np.random.default_rng(0)
    b = GraphBuilder()
    x = b.input((n, n), f32, "x")
    w1, w2 = (b.const(rng.standard_normal((n, n)).astype(np.float32) / n) for _ in range(2))
    h = b.op("exp", b.op("matmul", x, w1))
    return b.build(b.op("matmul", h, w2))


def test_on_a_chip_with_an_l2_kernels_pass_activations_through_dram_and_hit_the_cache():
    """datacenter-gpu: no activation arena in shared memory (it does not outlive a kernel);
    the intermediate goes to DRAM with the L2 as the reason, and the second kernel reads it
    back from the L2 (hits), not from DRAM."""
    from chipsim.passes.placement import arena_budget

    chip = get_chip("datacenter-gpu")
    graph = _two_kernel_chain(512)
    prog = cs.compile(graph, chip=chip)
    assert arena_budget(chip) == 0 and len(prog.kernels) == 2
    slots = prog.placement.slots
    mids = [s for s in slots.values() if s.role == "intermediate"]
    assert mids and all(s.level == DRAM and "L2" in s.why for s in mids)
    x = np.random.default_rng(1).standard_normal((512, 512)).astype(np.float32)
    prog(x)
    second = prog.report.kernels[1]
    loads = [
        r
        for r in prog.report.records[second.first : second.stop]
        if r.instr.opcode == "load" and r.traffic is not None
    ]
    hit = sum(r.traffic.hit for r in loads)
    assert hit >= 512 * 512 * 4  # the whole 1 MiB intermediate came from the L2 (w2 is cold)
    read_from_dram = sum(r.traffic.miss for r in loads)  # (its stores reach DRAM: write-through)
    assert read_from_dram < sum(o.nbytes for r in loads for o in r.instr.srcs)
    # edge-npu keeps the same intermediate in its SRAM arena, with no cache at all
    npu = cs.compile(_two_kernel_chain(64), chip="edge-npu")
    assert any(s.level == "sram" for s in npu.placement.slots.values() if s.role == "intermediate")


def test_the_rules_once_as_a_table():
    b = GraphBuilder()
    x = b.input((8, 4), f32)
    bias = b.const(np.ones(4, np.float32))
    weight = b.const(np.ones((4, 4), np.float32))
    g = b.build(b.op("matmul", x, weight), bias)
    bias_node, weight_node = g.nodes[0], g.nodes[1]
    rule = functools.partial(level_for, output=False, streamed=False)
    assert rule(bias_node, registers_free=True, in_arena=True) == REG  # rule 1
    assert rule(bias_node, registers_free=False, in_arena=True) == DRAM  # registers full
    assert rule(weight_node, registers_free=True, in_arena=True) == DRAM  # rule 2
    assert rule(None, registers_free=True, in_arena=True) == SRAM  # rule 3
    assert rule(None, registers_free=True, in_arena=False) == DRAM  # spilled
    assert level_for(None, output=False, streamed=True, registers_free=True, in_arena=True) == DRAM
    assert level_for(None, output=True, streamed=False, registers_free=True, in_arena=True) == DRAM


@pytest.mark.parametrize("chip", ["edge-npu", "datacenter-gpu", "cpu-simd"])
def test_place_group_follows_places_rules(chip):
    """Where everything fits, the stand-in layout of all a program's tensors puts each on the
    level the program's placement chose."""
    graph, _ = bias_relu_layers(layers=3, width=32)
    prog = cs.compile(graph, chip=chip, fusion=None)  # every tensor between kernels
    streamed = streamed_inputs(prog.graph, prog.partition.groups, prog.chip)
    values = [v for v in (*prog.graph.inputs, *(n.output for n in prog.graph.nodes))
              if v in prog.placement.slots]  # fmt: skip
    where, _ = place_group(prog.graph, prog.chip, values, on_chip=True, streamed=streamed)
    assert {v: level for v, (level, _) in where.items()} == {
        v: prog.placement.level(v) for v in values
    }
    pessimistic, _ = place_group(prog.graph, prog.chip, values, on_chip=False)
    assert {level for level, _ in pessimistic.values()} == {DRAM}
