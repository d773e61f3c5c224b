"""What chipsim's objects print -- tables, summaries, common errors -- follows the language.

English stays byte-for-byte what the other tests assert; Chinese has the glossary's words, the
same numbers in the same order, and columns that line up (a Chinese character is two columns).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import chipsim as cs
from chipsim.calibration.evaluate import Evaluation, Result
from chipsim.calibration.measurements import Measurement
from chipsim.errors import OutOfMemoryError
from chipsim.hw.allocator import CachingAllocator
from chipsim.i18n import use_language
from chipsim.models.summary import ModelSummary
from chipsim.passes.fusion.partition import Partition
from chipsim.passes.placement import check_dram
from chipsim.text import text_width

NUMBER = re.compile(r"\d[\d,.]*")


pytestmark = pytest.mark.usefixtures("english_by_default")


@pytest.fixture(scope="module")
def program():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 256)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    x = rng.standard_normal(256).astype(np.float32)
    return cs.compile(lambda v: cs.ops.relu(w @ v + b), x, chip="edge-npu"), x


def both(show):
    """``show()`` in English, then in Chinese."""
    english = show()
    with use_language("zh_CN"):
        return english, show()


def test_report_headers_and_summary_in_chinese_with_the_same_numbers():
    with cs.device("edge-npu") as dev:
        y = cs.ops.relu(cs.tensor(np.arange(-8, 8, dtype=np.float32)) * 2.0)
        y.numpy()
    en, zh = both(lambda: str(dev.report))
    assert en.splitlines()[4].split() == [
        "kernel",
        "units",
        "start",
        "end",
        "cycles",
        "FLOPs",
        "DRAM",
        "bytes",
    ]
    assert re.match(r"edge-npu: [\d,]+ cycles = [\d.,]+ us, 2 kernels, ", en)
    assert zh.splitlines()[4].split()[:5] == ["内核函数", "执行单元", "开始", "结束", "周期"]
    assert re.match(r"edge-npu：[\d,]+ 个周期 = [\d.,]+ 微秒，2 个内核函数，", zh)
    assert zh.splitlines()[1].startswith("忙碌占比：")
    assert NUMBER.findall(zh) == NUMBER.findall(en)  # numbers formatted the same
    assert en == str(dev.report)  # and English is back after the block


def test_partition_plan_and_placement_in_chinese(program):
    prog, _ = program
    en, zh = both(lambda: str(Partition(((0, 1), (2,)))))
    assert en == "group 0: nodes 0 1\ngroup 1: nodes 2"
    assert zh == "第 0 组：节点 0 1\n第 1 组：节点 2"

    en, zh = both(lambda: str(prog.plan))
    assert en.splitlines()[1].split() == ["id", "size", "first", "last", "offset"]
    assert zh.splitlines()[1].split() == ["编号", "大小", "首步", "末步", "偏移"]
    assert "个张量，内存池" in zh and "下界" in zh
    assert NUMBER.findall(zh) == NUMBER.findall(en)

    en, zh = both(lambda: str(prog.placement))
    assert en.splitlines()[0].split() == ["tensor", "type", "role", "level", "offset", "why"]
    assert zh.splitlines()[0].split() == ["张量", "类型", "角色", "存储层级", "偏移", "原因"]
    for word in ("权重", "融合后的中间结果", "片上分块", "寄存器", "小常量", "输出"):
        assert word in zh
    # (a long reason wraps onto the next line: read the words across lines)
    assert "在SRAM的50%以内" in "".join(zh.split()) and "inside 50% of SRAM" in " ".join(en.split())
    assert zh.splitlines()[-1].startswith("激活值内存池：")
    assert NUMBER.findall(zh) == NUMBER.findall(en)
    table = zh.splitlines()[:-1]  # every row as wide as the header, in display columns
    assert {text_width(line) for line in table} == {text_width(table[0])}
    assert "<th>张量</th>" in both(prog.placement._repr_html_)[1]
    en_levels, zh_levels = both(lambda: {r["level"] for r in prog.placement.rows()})
    assert "DRAM" in en_levels and "显存" in zh_levels and "DRAM" not in zh_levels  # the weights


def test_placement_reasons_wrap_so_the_table_fits_a_page(program):
    """A long reason continues on the next line, in its column: 4.5's table fits 1280 px."""
    from chipsim.passes.placement_table import WHY_WIDTH

    prog, _ = program
    for text in both(lambda: str(prog.placement)):
        lines = text.splitlines()[:-1]
        why_at = text_width(lines[1].rsplit("  ", 1)[0]) + 2  # where the last column starts
        assert all(text_width(line) <= why_at + WHY_WIDTH for line in lines)
        rows = [line for line in lines[2:] if not line[:1].isspace()]
        assert len(rows) == len(prog.placement.rows())


def test_calibration_summary_table_in_chinese():
    def row(op, which, time_us):
        return Measurement(op, f"t-{op}", ((1024,),), "f16", time_us, set=which)

    ev = Evaluation(
        "x", tuple(Result(row("gelu", w, 10.0), 11.0) for w in ("fit", "heldout", "heldout"))
    )
    en, zh = both(ev.summary_table)
    assert en.splitlines()[0].split()[:4] == ["set", "class", "rows", "MAPE"]
    assert [line.split()[:2] for line in en.splitlines()[1:]] == [
        ["fit", "gelu"],
        ["fit", "all"],
        ["heldout", "gelu"],
        ["heldout", "all"],
    ]
    assert zh.splitlines()[0].split()[:4] == ["数据集", "类别", "行数", "MAPE"]
    assert [line.split()[:2] for line in zh.splitlines()[1:]] == [
        ["拟合集", "gelu"],
        ["拟合集", "全部"],
        ["留出集", "gelu"],
        ["留出集", "全部"],
    ]
    assert NUMBER.findall(zh) == NUMBER.findall(en)
    widths = {text_width(line) for line in zh.splitlines()}
    assert widths == {text_width(line) for line in en.splitlines()}  # columns line up


def test_model_summary_names_pattern_classes_in_chinese():
    s = ModelSummary("mlp", 1234, 2 * 10**9, 4 * 10**9, 2**21, 2**22, {"elementwise": 3})
    en, zh = both(lambda: str(s))
    assert en == (
        "mlp: 1,234 parameters, 2.000 G MACs, 4.000 GFLOP, activations 2.0 MiB, "
        "weights 4.0 MiB\n  ops by pattern: elementwise 3"
    )
    assert zh.startswith("mlp：1,234 个参数") and zh.endswith("各模式类别的算子数：逐元素 3")


def test_common_errors_in_chinese():
    def trace_error():
        with pytest.raises(cs.TraceError) as info:
            cs.trace(lambda v: v * 2 if v.sum() > 0 else v, np.ones(4, np.float32))
        return str(info.value)

    en, zh = both(trace_error)
    assert "Python control flow on a traced tensor (bool() of a bool[] value)" in en
    assert "对正在追踪的张量使用了 Python 控制流" in zh and "chipsim.ops.where(cond, a, b)" in zh

    def shape_error():
        with cs.device("edge-npu"), pytest.raises(cs.ShapeError) as info:
            cs.tensor(np.ones((4, 3), np.float32)) @ cs.tensor(np.ones((5, 2), np.float32))
        return str(info.value)

    en, zh = both(shape_error)
    assert "inner dimensions differ: f32[4, 3] @ f32[5, 2]" in en
    assert "内维不一致：f32[4, 3] @ f32[5, 2]" in zh and "倒数第二维（5）" in zh

    def broadcast_error():
        with cs.device("edge-npu"), pytest.raises(cs.ShapeError) as info:
            cs.tensor(np.ones((4, 3), np.float32)) + cs.tensor(np.ones(2, np.float32))
        return str(info.value)

    en, zh = both(broadcast_error)
    assert "shapes [4, 3] and [2] cannot be broadcast together: their dimension -1 (the last)" in en
    assert "形状 [4, 3] 和 [2] 无法一起广播：它们的第 -1 维（最后一维）分别是 3 和 2" in zh

    def allocator_oom():
        a = CachingAllocator(8 * 2**20)
        blocks = [a.malloc(2**19) for _ in range(16)]
        for blk in blocks[::2]:
            a.free(blk)
        with pytest.raises(OutOfMemoryError) as info:
            a.malloc(int(1.23 * 2**20))
        return str(info.value)

    en, zh = both(allocator_oom)
    assert "needs one piece of 1.23 MiB from the large pool" in en
    assert zh.startswith("显存容量不足：") and "从大块池取一整块 1.23 MiB" in zh
    assert sorted(NUMBER.findall(zh)) == sorted(NUMBER.findall(en))  # Chinese word order

    def compile_oom():
        with pytest.raises(OutOfMemoryError) as info:
            check_dram(1024, [("w", 4096)], "the program")
        return str(info.value)

    en, zh = both(compile_oom)
    assert en.startswith("DRAM out of memory: the program needs 4,096 B of DRAM")
    assert zh.startswith("显存容量不足：the program 需要 4,096 B 的显存，")


def test_graph_cost_table_and_chip_in_chinese(program):
    prog, _ = program
    en, zh = both(prog.graph.table)
    assert en.splitlines()[0].split() == [
        "value",
        "op",
        "pattern",
        "type",
        "flops",
        "bytes_read",
        "bytes_written",
    ]
    assert re.fullmatch(r"total: [\d,]+ FLOPs, [\d,]+ bytes moved by \d+ ops", en.splitlines()[-1])
    assert zh.splitlines()[0].split() == [
        "数值",
        "算子",
        "模式类别",
        "类型",
        "FLOPs",
        "读取字节",
        "写入字节",
    ]
    assert "收缩" in zh and zh.splitlines()[-1].startswith("合计：")
    table = zh.splitlines()[:-1]
    assert {text_width(line) for line in table} == {text_width(table[0])}

    en, zh = both(lambda: str(cs.chip("edge-npu")))
    assert en.startswith("edge-npu: ") and "eager launch" in en
    assert zh.startswith("edge-npu：") and "张量核心" in zh and "启动开销" in zh
    assert NUMBER.findall(zh) == NUMBER.findall(en)


def test_a_marked_chinese_note_wraps_between_words_only():
    """4.5's pipeline figure wrapped its Chinese notes every 9 characters and split 运行,
    代码 and 单元 across lines; their translations now mark where a line may break, and the
    figure cuts only there. Printed, the marks are left out."""
    from chipsim.i18n import catalogue, tr, tr_lines
    from chipsim.text import BREAK, wrap

    for _, what in cs.PIPELINE:
        note = catalogue("zh_CN")[what]
        assert BREAK in note, what  # every stage's note says where it may break
        clean, cuts, k = note.replace(BREAK, ""), set(), 0
        for ch in note:  # where a mark or a space stands, in the text without marks
            cuts |= {k} if ch == BREAK else {k, k + 1} if ch == " " else set()
            k += ch != BREAK
        with use_language("zh_CN"):
            lines, printed = tr_lines(what, 18), tr(what)
        assert printed == clean  # a printed stage list carries no marks
        assert "".join(lines).replace(" ", "") == clean.replace(" ", ""), what
        end = 0
        for line in lines:
            assert text_width(line) <= 18 and BREAK not in line, line
            end = clean.index(line, end) + len(line)
            assert end in cuts | {len(clean)}, (note, line)  # never inside a word
    assert wrap("每个内核函数", 8) != wrap(f"每个{BREAK}内核函数", 8)  # unmarked: cut anywhere


def test_wrap_keeps_to_its_width_when_a_word_is_wider_than_the_line():
    """A marked Chinese word is one piece, so a piece wider than what is left of a line is
    ordinary input (it crashed when nothing was left, and overran by one column when one
    was)."""
    from chipsim.text import BREAK, wrap

    for text, width in (("每个内核 函数只读一次多" + BREAK + "啊", 8), ("abc defghij", 3),
                        ("一二三四五六七八a" + BREAK + "九十一二三四五六七八九", 18)):  # fmt: skip
        lines = wrap(text, width)
        assert all(text_width(line) <= width for line in lines), lines
        assert "".join(lines).replace(" ", "") == text.replace(BREAK, "").replace(" ", "")


def test_wrap_keeps_marks_and_numbers_with_their_words():
    """Chinese typesetting starts no line with 。 or ” and ends none with （ or “, and a number
    joined to its words by no-break spaces stays with them (Validate's summary read "显示\\n0
    分" when nbgrader refilled it)."""
    from chipsim.text import BREAK, wrap

    assert wrap("一二三四五六。七八", 12) == ["一二三四五", "六。七八"]
    assert wrap("一二三四五（六七八", 12) == ["一二三四五", "（六七八"]
    assert wrap("不是“融合”……好", 8) == ["不是“融", "合”……好"]
    assert wrap("一二三\u00a04\u00a0个部分", 8) == ["一二", "三\u00a04\u00a0个", "部分"]
    assert wrap(f"每个{BREAK}内核函数{BREAK}只读一次。", 9)[-1] != "。"  # even where a word is cut
    for text in ("\u00a0abc def", "显示\u00a00\u00a0分的部分。", "a\u00a0\u00a0b c"):
        for width in range(2, 12):
            lines = wrap(text, width)
            assert all(text_width(line) <= width for line in lines) or width < 4, (text, lines)
            assert all(line.strip(" ") for line in lines), (text, width, lines)
