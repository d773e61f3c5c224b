"""The instruction-building API: a hand-written loop nest costs what the code generator's
does, the data form round-trips, and every mistake is named at the instruction that made it."""

from __future__ import annotations

import numpy as np
import pytest

from chipsim.codegen.blocked import Blocks
from chipsim.codegen.builder import KernelBuilder, assemble, generated
from chipsim.codegen.program_data import replay
from chipsim.errors import PlanError
from chipsim.hw import get_chip
from chipsim.i18n import use_language
from chipsim.ir import GraphBuilder, f32, interpret
from chipsim.runtime.handwritten import dma_overlap, run_kernel

CHIP = get_chip("edge-npu")


def dense(m: int, k: int, n: int, act: str = "relu"):
    b = GraphBuilder("dense")
    x, w, bias = b.input((m, k), f32), b.input((k, n), f32), b.input((n,), f32)
    return b.build(b.op(act, b.op("add", b.op("matmul", x, w), bias)))


def conv(images: int, size: int, cin: int, cout: int):
    b = GraphBuilder("conv")
    x = b.input((images, size, size, cin), f32)
    w = b.input((3, 3, cin, cout), f32)
    scale, shift = b.input((cout,), f32), b.input((cout,), f32)
    y = b.op("conv2d", x, w, padding="same")
    return b.build(b.op("relu", b.op("add", b.op("mul", y, scale), shift)))


def align(n: int) -> int:
    return -(-n // 64) * 64


def loop_nest(kb: KernelBuilder, rows: int, cols: int, inner: int, buffers: int):
    """A learner's loop nest written only with the public API: output tiles row by row,
    inner blocks innermost, a tile loaded only when it changes, loads one step ahead with two
    buffers, the epilogue in place over the sum."""
    ext, (x, w) = kb.extents, kb.operands
    acc = kb.names[kb.contraction]
    made = {out for out, _, _ in kb.epilogue_ops}
    extra = list(dict.fromkeys(v for _, _, ins in kb.epilogue_ops for v in ins
                               if v not in made and v != acc))  # fmt: skip
    rows, cols, inner = (
        min(n, ext[a]) for n, a in ((rows, "rows"), (cols, "cols"), (inner, "inner"))
    )
    full = kb.tile((0, rows), (0, cols), (0, inner))
    offsets, cursor = {}, 0
    for name in (x, w, *extra, acc):
        size = align(kb.tile_bytes(name, full))
        offsets[name] = [cursor + i * size for i in range(buffers)]
        cursor += buffers * size
    steps = [(r, c, k) for r in range(0, ext["rows"], rows) for c in range(0, ext["cols"], cols)
             for k in range(0, ext["inner"], inner)]  # fmt: skip
    last, count, plan = {}, dict.fromkeys(offsets, -1), []
    for r, c, k in steps:
        t = kb.tile((r, min(rows, ext["rows"] - r)), (c, min(cols, ext["cols"] - c)),
                    (k, min(inner, ext["inner"] - k)))  # fmt: skip
        keys = {x: (r, k), w: (k, c)} | ({e: (c,) for e in extra} if k == 0 else {})
        loads = {}
        for name, key in keys.items():
            if last.get(name) != key:
                last[name], count[name] = key, count[name] + 1
                loads[name] = offsets[name][count[name] % buffers]
        plan.append((t, loads))
    ahead, where, tile_no = (1 if buffers > 1 else 0), {}, -1
    for name, at in plan[0][1].items() if ahead else ():
        kb.load(name, plan[0][0], at)
    for s, (_r, _c, k) in enumerate(steps):
        if s + ahead < len(plan):
            for name, at in plan[s + ahead][1].items():
                kb.load(name, plan[s + ahead][0], at)
        t, loads = plan[s]
        where.update(loads)
        tile_no += k == 0
        at = offsets[acc][tile_no % buffers]
        kb.contract(t, at, {x: where[x], w: where[w]}, accumulate=k > 0)
        if k + inner >= ext["inner"]:
            for out, _op, ins in kb.epilogue_ops:
                kb.epilogue(out, t, at, {v: where[v] if v in extra else at for v in ins})
            kb.store(kb.outputs[0], t, at)
    return kb


GRAPHS = {
    "square": lambda: dense(256, 256, 256),
    "skinny": lambda: dense(32, 1024, 512, "gelu"),
    "ragged": lambda: dense(200, 176, 144, "sigmoid"),
    "conv": lambda: conv(2, 8, 32, 48),
}


@pytest.mark.parametrize("name", list(GRAPHS))
@pytest.mark.parametrize("double", [False, True])
def test_a_loop_nest_written_with_the_api_costs_what_the_code_generator_emits(name, double):
    """The API is the code generator's own vocabulary: the same tiles, the same loop, the
    same cycles and the same DMA overlap, to the cycle."""
    graph = GRAPHS[name]()
    ref = generated(graph, CHIP, double_buffer=double)
    b = ref.blocks
    mine = loop_nest(KernelBuilder(graph, CHIP), b.rows, b.cols, b.inner, b.buffers)
    _, theirs = run_kernel(ref, functional=False)
    _, ours = run_kernel(mine, functional=False)
    assert ours.cycles == theirs.cycles
    assert dma_overlap(ours.records) == pytest.approx(dma_overlap(theirs.records))
    assert mine.missing() == ""


@pytest.mark.parametrize("name", list(GRAPHS))
def test_the_program_computes_the_interpreters_values_and_round_trips_as_data(name):
    graph = GRAPHS[name]()
    kb = loop_nest(KernelBuilder(graph, CHIP), 64, 32, 64, 2)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(v.shape).astype(np.float32) for v in graph.inputs]
    (got,), report = run_kernel(kb, *args)
    np.testing.assert_allclose(got, interpret(graph, *args)[0], rtol=1e-4, atol=1e-4)
    again = assemble(graph, CHIP, kb.data())
    assert [str(i) for i in again.instructions] == [str(i) for i in kb.instructions]
    assert run_kernel(again, functional=False)[1].cycles == report.cycles


def test_double_buffering_overlaps_the_dma_with_compute():
    graph = dense(32, 1024, 512)
    single = run_kernel(generated(graph, CHIP, double_buffer=False), functional=False)[1]
    double = run_kernel(generated(graph, CHIP, double_buffer=True), functional=False)[1]
    assert dma_overlap(single.records) < 0.1 < 0.8 < dma_overlap(double.records)
    assert double.cycles < 0.8 * single.cycles


def test_the_smallest_tiles_are_slow_but_correct():
    graph = dense(128, 128, 128)
    small = generated(graph, CHIP, blocks=Blocks(16, 16, 16, 1))
    best = generated(graph, CHIP, double_buffer=False)
    assert (
        run_kernel(small, functional=False)[1].cycles > run_kernel(best, functional=False)[1].cycles
    )


# -- mistakes, each named where it happens ---------------------------------------------------
@pytest.fixture
def kb():
    return KernelBuilder(dense(64, 64, 64), CHIP)


def test_reading_a_tile_nothing_loaded_names_the_instruction(kb):
    t = kb.tile()
    kb.load("%0", t, at=0)
    with pytest.raises(PlanError, match=r"instruction #1 \(contract\): reads %1.* at SRAM "
                                        r"16384, but nothing has been written"):  # fmt: skip
        kb.contract(t, at=32768, inputs={"%0": 0, "%1": 16384})


def test_the_mistakes_are_named_in_the_learners_language(kb):
    """A Chinese learner read every builder error in English (a walk of the course)."""
    t = kb.tile()
    kb.load("%0", t, at=0)
    with use_language("zh_CN"), pytest.raises(PlanError) as info:
        kb.contract(t, at=32768, inputs={"%0": 0, "%1": 16384})
    assert str(info.value).startswith("指令 #1（contract）：在 SRAM 16384 处读取 %1")
    assert "但 SRAM 16384 处还没有写入任何数据：请先把它载入或计算到那里" in str(info.value)
    with use_language("zh_CN"):
        assert kb.missing().startswith("输出 %5 的元素 (0, 0) 从未被存储")
    # and so is a hand-edited program's data, checked before it is replayed
    with use_language("zh_CN"), pytest.raises(PlanError, match=r"^指令 #0（load）缺少 tile、at$"):
        replay(kb, [{"op": "load", "value": "%0"}])
    with use_language("zh_CN"), pytest.raises(PlanError, match=r"^指令 #0：分块的 rows 必须是"):
        replay(kb, [{"op": "load", "value": "%0", "tile": {"rows": [0]}, "at": 0}])


def test_a_tile_overwritten_by_a_later_load_is_not_there_any_more(kb):
    t1, t2 = kb.tile(inner=(0, 32)), kb.tile(inner=(32, 32))
    kb.load("%0", t1, at=0)
    kb.load("%1", t1, at=8192)
    kb.load("%0", t2, at=0)  # over the first block of x
    with pytest.raises(PlanError, match=r"reads %0\[axis 0 0:64, inner 0:32\] at SRAM 0, but "
                                        r"SRAM 0 holds %0\[axis 0 0:64, inner 32:64\] "
                                        r"\(written by instruction #2\)"):  # fmt: skip
        kb.contract(t1, at=16384, inputs={"%0": 0, "%1": 8192})


def test_a_tile_partly_overwritten_by_a_later_load_names_that_load(kb):
    """A learner loaded x at 0 and w at 1024, inside x's bytes: "nothing has been written at
    SRAM 0" sent them to check a load that was right; the error names the one that was not."""
    t = kb.tile()
    kb.load("%0", t, at=0)
    kb.load("%1", t, at=1024)  # x's tile is 64 x 64 x 4 B: this lands inside it
    with pytest.raises(PlanError, match=r"reads %0\[.*\] at SRAM 0, but SRAM 0 held %0\[.*\] "
                                        r"\(written by instruction #0\) until instruction #1 "
                                        r"wrote over it"):  # fmt: skip
        kb.contract(t, at=32768, inputs={"%0": 0, "%1": 1024})


def test_a_buffer_past_the_end_of_sram_is_refused(kb):
    with pytest.raises(PlanError, match=r"instruction #0 \(load\).*ends past the 524,288 B of "
                                        r"SRAM: use smaller tiles"):  # fmt: skip
        kb.load("%0", kb.tile(), at=524288 - 64)


def test_accumulating_without_a_partial_sum_and_an_epilogue_on_one_are_refused(kb):
    t1, t2 = kb.tile(inner=(0, 32)), kb.tile(inner=(32, 32))
    kb.load("%0", t1, at=0)
    kb.load("%1", t1, at=8192)
    with pytest.raises(PlanError, match="start the sum with accumulate=False"):
        kb.contract(t1, at=16384, inputs={"%0": 0, "%1": 8192}, accumulate=True)
    kb.contract(t1, at=16384, inputs={"%0": 0, "%1": 8192})
    kb.load("%2", t1, at=40960)
    with pytest.raises(PlanError, match=r"a partial sum of %3"):
        kb.epilogue("%4", t2, at=16384, inputs={"%3": 16384, "%2": 40960})


def test_unknown_values_unaligned_offsets_and_stores_of_intermediates_are_refused(kb):
    t = kb.tile()
    with pytest.raises(PlanError, match=r"no value '%9'; its values are %0, %1"):
        kb.load("%9", t, at=0)
    with pytest.raises(PlanError, match="multiple of 64"):
        kb.load("%0", t, at=10)
    with pytest.raises(PlanError, match=r"'%3' is not an input in DRAM"):
        kb.load("%3", t, at=0)
    with pytest.raises(PlanError, match=r"'%4' is not an output of the kernel; store %5"):
        kb.store("%4", t, src=0)
    with pytest.raises(PlanError, match=r"tile rows=\(32, 64\) is outside 0..64"):
        kb.tile(rows=(32, 64))


def test_an_output_tile_never_stored_is_named():
    graph = dense(64, 64, 64)
    kb = loop_nest(KernelBuilder(graph, CHIP), 32, 64, 64, 1)
    data = [d for d in kb.data() if not (d["op"] == "store" and d["tile"]["rows"] == [32, 32])]
    assert assemble(graph, CHIP, data).missing() == (
        "output %5 element (32, 0) is never stored: store every tile of the output"
    )


@pytest.mark.parametrize(
    "bad, says",
    [
        ("not a list", "a program is a list"),
        ([{"op": "jump"}], "'op' one of load, contract"),
        ([{"op": "load", "value": "%0", "at": 0}], r"instruction #0 \(load\) has no tile"),
        ([{"op": "load", "value": "%0", "tile": {"rows": [0]}, "at": 0}], "two ints"),
        ([{"op": "load", "value": "%0", "tile": {"depth": [0, 1]}, "at": 0}], "rows, cols, inner"),
    ],
)
def test_malformed_data_gets_a_message_that_names_the_instruction(bad, says):
    with pytest.raises(PlanError, match=says):
        assemble(dense(64, 64, 64), CHIP, bad)


def test_a_graph_that_is_not_one_contraction_and_an_epilogue_is_refused():
    b = GraphBuilder("two")
    x, w = b.input((8, 8), f32), b.input((8, 8), f32)
    graph = b.build(b.op("matmul", b.op("matmul", x, w), w))
    with pytest.raises(PlanError, match="not one matmul or conv2d followed by elementwise"):
        KernelBuilder(graph, CHIP)
