"""The L2 cache in front of DRAM: LRU residency against a brute-force oracle, write-back costs,
strided lines, what the simulator charges, and that chips without an L2 are untouched."""

import dataclasses
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipsim.hw import Instr, L2Cache, Operand, Simulator, cost, get_chip
from chipsim.hw.cache import BLOCK_LINES, Traffic, operand_blocks
from chipsim.hw.parts import L2

LINE = 128


class OracleLRU:
    """The cache's policy the textbook way: blocks of BLOCK_LINES lines in an ordered dict
    (least recently used first), each with the set of its lines on chip and the dirty ones."""

    def __init__(self, capacity_lines: int) -> None:
        self.capacity, self.blocks = capacity_lines, OrderedDict()

    @property
    def resident(self):
        return sum(len(lines) for lines, _ in self.blocks.values())

    def access(self, lines, write):
        hits = back = 0
        for block in sorted({ln // BLOCK_LINES for ln in lines}):
            mine = {ln for ln in lines if ln // BLOCK_LINES == block}
            held, dirty = self.blocks.pop(block, (set(), set()))
            hits += len(held & mine)
            self.blocks[block] = (held | mine, dirty | mine if write else dirty)
        while self.resident > self.capacity:
            _, (_, dirty) = self.blocks.popitem(last=False)
            back += len(dirty)
        return hits, back


@settings(max_examples=120, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 200), st.integers(1, 70), st.booleans(), st.integers(1, 3)),
        min_size=1,
        max_size=40,
    ),
    st.integers(1, 160),
)
def test_lru_residency_and_write_backs_match_an_oracle(accesses, capacity_lines):
    """Every transfer's hits and write-backs equal a plain LRU's over the same blocks, for
    dense and strided (every 2nd or 3rd line) transfers in any order."""
    cache = L2Cache(L2(capacity_bytes=capacity_lines * LINE, bytes_per_cycle=64, line_bytes=LINE))
    oracle = OracleLRU(capacity_lines)
    for first, count, write, step in accesses:
        if step == 1:
            op = Operand("dram", first * LINE, (count * LINE // 4,), "f32")
        else:  # one line out of every `step`
            op = Operand(
                "dram", first * LINE, (count, LINE // 4), "f32", strides=(step * LINE // 4, 1)
            )
        lines = [first + i * step for i in range(count)]
        got = cache.access(op, write=write)
        hits, back = oracle.access(lines, write)
        if write:
            assert got == Traffic(op.nbytes, 0, back * LINE)
        else:
            assert got.hit == op.nbytes * hits // count
            assert got.miss == op.nbytes - got.hit
            assert got.written_back == back * LINE
        assert cache.resident == oracle.resident <= capacity_lines


def test_a_strided_view_touches_only_its_rows():
    """A 32-column block of a 256-column f32 matrix: one line per row, not the whole span."""
    block = Operand("dram", 1024, (4, 32), "f32", strides=(256, 1))
    blocks, masks = operand_blocks(block, LINE)
    assert blocks.tolist() == [0, 1] and masks.tolist() == [1 << 8 | 1 << 16 | 1 << 24, 1]
    cache = L2Cache(L2(capacity_bytes=64 * LINE, bytes_per_cycle=64, line_bytes=LINE))
    cache.access(block, write=False)
    neighbour = Operand("dram", 1024 + 128, (4, 32), "f32", strides=(256, 1))
    assert cache.access(neighbour, write=False).hit == 0  # the next columns were never read
    assert cache.access(block, write=False).hit == block.nbytes
    assert cache.holds(block) == 1.0 and cache.holds(neighbour) == 1.0
    assert cache.holds(Operand("dram", 1 << 20, (8,), "f32")) == 0.0


GPU = get_chip("datacenter-gpu")


def _load(src, dst):
    return Instr("load", "dma", (src,), (dst,), work=src.nbytes)


def _store(src, dst):
    return Instr("store", "dma", (src,), (dst,), work=src.nbytes)


def test_a_tensor_read_back_from_the_l2_is_faster_than_from_dram():
    """Written by one kernel, read by the next: served by the L2 at its bandwidth, without
    DRAM's latency; the same read of a tensor never written pays DRAM."""
    n = 1 << 20  # 4 MiB of f32, well inside 40 MB
    on_chip = Operand("sram", 0, (n,), "f32")
    t = Operand("dram", 0, (n,), "f32")
    sim = Simulator(GPU, functional=False)
    sim.run([_store(on_chip, t)])
    (warm,) = sim.run([_load(t, on_chip)])
    cold = Simulator(GPU, functional=False).run([_load(t, on_chip)])[0]
    assert warm.traffic == Traffic(t.nbytes, 0, 0) and cold.traffic == Traffic(0, t.nbytes, 0)
    assert warm.cycles == cost(warm.instr, GPU, warm.traffic)
    assert warm.cycles < cold.cycles
    assert warm.dram_bytes == 0 and cold.dram_bytes == t.nbytes


def test_a_stream_larger_than_the_l2_pays_dram_both_ways():
    """A 256 MiB copy through 40 MB of L2: every load misses and the outputs are written back,
    so DRAM moves about twice the bytes, and the L2 speeds nothing up."""
    rows, width = 64, 1 << 20  # 64 tiles of 4 MiB
    sim = Simulator(GPU, functional=False)
    buf = Operand("sram", 0, (width,), "f32")
    program = []
    for r in range(rows):
        program.append(_load(Operand("dram", r * 4 * width, (width,), "f32"), buf))
        program.append(_store(buf, Operand("dram", (rows + r) * 4 * width, (width,), "f32")))
    recs = sim.run(program)
    moved = rows * 4 * width
    total = sum((r.traffic for r in recs), Traffic(0, 0, 0))
    assert total.miss == moved
    assert total.hit <= moved + GPU.l2.line_bytes * rows  # the stores (and a few shared lines)
    assert moved - GPU.l2.capacity_bytes <= total.written_back <= moved
    dram_rate = GPU.dram.sustained_bytes_per_cycle
    assert sim.cycles >= (total.miss + total.written_back) // dram_rate


def test_simulation_with_an_l2_is_deterministic():
    rng = np.random.default_rng(0)
    program = []
    for _ in range(200):
        off, n = int(rng.integers(0, 1 << 26)), int(rng.integers(1, 1 << 18))
        src = Operand("dram", off, (n,), "f32")
        program.append(_load(src, Operand("sram", 0, (n,), "f32")))
        if rng.random() < 0.5:
            program.append(_store(Operand("sram", 0, (n,), "f32"), src))
    runs = []
    for _ in range(2):
        sim = Simulator(GPU, functional=False)
        runs.append([(r.start, r.end, r.traffic) for r in sim.run(program)])
    assert runs[0] == runs[1]


def test_chips_without_an_l2_have_no_cache():
    npu = get_chip("edge-npu")
    assert not npu.l2.present
    sim = Simulator(npu, functional=False)
    assert sim.l2 is None
    x = Operand("dram", 0, (64,), "f32")
    (rec,) = sim.run([_load(x, Operand("sram", 0, (64,), "f32"))])
    assert rec.traffic is None and rec.cycles == cost(rec.instr, npu)


def test_warm_puts_tensors_in_the_l2_only_where_there_is_one():
    x = Operand("dram", 0, (4096,), "f32")
    sim = Simulator(GPU, functional=False)
    sim.warm([x])
    assert sim.l2.holds(x) == 1.0
    Simulator(get_chip("edge-npu")).warm([x])  # no L2: nothing to do, no error


def test_an_l2_section_is_read_from_a_chip_file():
    chip = dataclasses.replace(get_chip("edge-npu"))
    data = chip.to_dict()
    data["l2"] = {"capacity_bytes": 1 << 20, "bytes_per_cycle": 64, "latency_cycles": 20}
    from chipsim.hw.chip import Chip

    loaded = Chip.from_dict(data)
    assert loaded.l2.present and loaded.l2.line_bytes == 128
    with pytest.raises(Exception, match="l2.ways"):
        Chip.from_dict({**data, "l2": {"ways": 16}})
    with pytest.raises(Exception, match="l2.bytes_per_cycle"):  # a cache needs a bandwidth
        Chip.from_dict({**data, "l2": {"capacity_bytes": 1 << 20}})


def test_a_host_upload_into_a_reused_block_does_not_hit_the_old_tensors_lines():
    """The eager device reuses freed blocks; the host's copy replaces their bytes, so the
    next kernel reading the upload pays DRAM, not the L2 that held the freed tensor."""
    from chipsim.hw.parts import L2

    cache = L2Cache(L2(capacity_bytes=1 << 20, bytes_per_cycle=64, line_bytes=LINE))
    t = Operand("dram", 0, (4096,), "f32")
    cache.access(t, write=True)
    cache.forget(Operand("dram", 0, (1024,), "f32"))  # a smaller upload into the same block
    assert cache.resident == 3 * 1024 * 4 // LINE
    assert cache.access(t, write=False).hit == 3 * t.nbytes // 4
    sim = Simulator(GPU, functional=False)
    sim.warm([t])
    sim.host_wrote(t)
    assert sim.l2.holds(t) == 0.0 and sim.l2.resident == 0
