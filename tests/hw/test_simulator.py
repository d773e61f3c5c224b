"""The list-scheduling simulator: dependencies, parallel units, bounds, modes, determinism."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chipsim.errors import SimulationError
from chipsim.hw import AccessMap, Instr, Operand, Simulator, cost, get_chip
from chipsim.hw.memory import Memory

CHIP = get_chip("edge-npu")


def vec(src, dst, n=64, fn=None):
    return Instr("vec", "simd", (src,), (dst,), work=n, fn=fn)


def load(src, dst):
    return Instr("load", "dma", (src,), (dst,), work=src.nbytes)


@settings(max_examples=200, deadline=None)
@example([("read", 0, 10, 50), ("write", 4, 10, 5)], 4, 10)  # a write ends the reads before it
@example([("write", 0, 10, 50), ("read", 4, 20, 60)], 0, 4)  # a read leaves the write alone
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["write", "read"]),
            st.integers(0, 60),
            st.integers(0, 60),
            st.integers(0, 100),
        ),
        max_size=30,
    ),
    st.integers(0, 60),
    st.integers(0, 60),
)
def test_access_map_matches_brute_force(ops, qlo, qhi):
    m, written, read = AccessMap(), [0] * 64, [0] * 64
    for kind, lo, hi, v in ops:
        lo, hi = min(lo, hi), max(lo, hi)
        if kind == "write":
            m.write(lo, hi, v)
            written[lo:hi], read[lo:hi] = [v] * (hi - lo), [0] * (hi - lo)
        else:
            m.read(lo, hi, v)
            read[lo:hi] = [max(r, v) for r in read[lo:hi]]
    lo, hi = min(qlo, qhi), max(qlo, qhi)
    assert m.last_write(lo, hi) == (max(written[lo:hi]) if hi > lo else 0)
    assert m.last_access(lo, hi) == (max(written[lo:hi] + read[lo:hi]) if hi > lo else 0)


def test_raw_war_waw_and_independent_units():
    a, b = Operand("sram", 0, (64,), "f32"), Operand("sram", 1024, (64,), "f32")
    d = Operand("dram", 0, (64,), "f32")
    sim = Simulator(CHIP, functional=False)
    r = sim.run(
        [
            load(d, a),  # 0
            vec(a, b),  # 1 RAW on a: waits for 0
            load(d, a),  # 2 WAR on a: waits for 1 to read it
            load(d, Operand("sram", 4096, (64,), "f32")),  # 3: free of 1, after 2 (DMA)
            vec(Operand("sram", 8192, (64,), "f32"), Operand("sram", 9000, (8,), "f32")),
        ]
    )
    assert r[1].start == r[0].end
    assert r[2].start == max(r[1].end, r[0].end)
    assert r[3].start == r[2].end
    assert r[4].start == r[1].end  # SIMD is in order; no data dependency on the DMA
    assert [x.cycles for x in r] == [cost(x.instr, CHIP) for x in r]


def test_launch_is_a_barrier_and_sync_waits_for_everything():
    s = Operand("sram", 0, (64,), "f32")
    sim = Simulator(CHIP, functional=False)
    r = sim.run(
        [
            Instr("launch", "host"),
            vec(s, s),
            Instr("launch", "host"),
            vec(s, s),
            Instr("sync", "host"),
        ]
    )
    assert r[1].start == CHIP.launch.eager_cycles
    assert r[2].start == CHIP.launch.eager_cycles  # launches queue without waiting
    assert r[3].start == 2 * CHIP.launch.eager_cycles
    assert r[4].start == r[3].end


def test_functional_execution_and_bf16_storage():
    sim = Simulator(CHIP)
    d = Operand("dram", 0, (4,), "bf16")
    s = Operand("sram", 0, (4,), "bf16")
    sim.memory["dram"].write(d, np.array([1.0, 2.0, 3.0, 1.00390625], np.float32))
    sim.run([load(d, s), vec(s, s, 4, fn=lambda x: x * 2)])
    assert sim.memory["sram"].read(s).tolist() == [2.0, 4.0, 6.0, 2.0]  # 1+2^-8 rounds to even


def test_strided_operand_reads_a_column_block():
    m = Memory("dram", 4096)
    m.write(Operand("dram", 0, (4, 4), "f32"), np.arange(16, dtype=np.float32))
    col = Operand("dram", 4, (4, 2), "f32", strides=(4, 1))
    assert m.read(col).tolist() == [[1, 2], [5, 6], [9, 10], [13, 14]]


def test_out_of_bounds_names_instruction_and_tensor():
    sim = Simulator(CHIP)
    big = Operand("sram", CHIP.sram.capacity_bytes - 8, (4,), "f32", name="x")
    with pytest.raises(SimulationError, match=r"instruction #0 .*x@sram.*capacity|holds"):
        sim.run([vec(big, big, 4, fn=lambda v: v)])


def test_timing_only_gives_identical_cycles():
    s, d = Operand("sram", 0, (256,), "f32"), Operand("dram", 0, (256,), "f32")
    prog = [load(d, s), vec(s, s, 256, fn=np.exp), Instr("store", "dma", (s,), (d,), work=1024)]
    a, b = Simulator(CHIP), Simulator(CHIP, functional=False)
    a.run(prog)
    b.run(prog)
    assert [(r.start, r.end) for r in a.records] == [(r.start, r.end) for r in b.records]


DETERMINISM = """
import numpy as np
from chipsim.ir import GraphBuilder, f32
from chipsim.runtime import make_device
b = GraphBuilder(); x = b.input((300, 70), f32); w = b.input((70, 50), f32)
y = b.op("softmax", b.op("matmul", x, w))
dev = make_device("edge-npu", functional=False)
bufs = [dev.upload(None, v.type) for v in (x, w)]
h = dev.run(b.nodes[0], bufs); dev.run(b.nodes[1], [h])
print(dev.cycles, [(r.start, r.end) for r in dev.sim.records][-3:])
"""


def test_determinism_across_processes():
    outs = [
        subprocess.run(
            [sys.executable, "-c", DETERMINISM], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    ]
    assert outs[0] == outs[1] and int(outs[0].split()[0]) > 0
