"""Placement checks the capacity of every memory level (issue 10, findings 1 and 2)."""

import numpy as np
import pytest

import chipsim as cs
from chipsim.errors import ChipsimError, OutOfMemoryError
from chipsim.hw import get_chip
from chipsim.ir import GraphBuilder, f32
from chipsim.passes.placement import DRAM, REG


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
        cs.compile(lambda x: cs.relu(x) + 1, x, chip="edge-npu")
    msg = str(err.value)
    assert "DRAM" in msg and "64.00 MiB" in msg  # the memory and its size
    assert "x" in msg and "f32[4096, 4096]" in msg  # the tensors and their sizes
    assert "smaller" in msg or "chip with more" in msg  # advice that fits
    assert "tile" not in msg
    assert isinstance(err.value, ChipsimError)


def test_a_program_that_fits_dram_exactly_compiles():
    # 3 x 16 MiB (input, intermediate spilled, output) on a 64 MiB DRAM: fits
    x = np.zeros((2048, 2048), np.float32)
    prog = cs.compile(lambda x: cs.relu(x) + 1, x, chip="edge-npu")
    assert prog.report.cycles > 0
