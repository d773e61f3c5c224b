"""The Pipeline that composes passes and stages: declarations held, until, replace, and
instruments that show what each stage wrote."""

from __future__ import annotations

import dataclasses
import io
from dataclasses import dataclass

import numpy as np
import pytest

import chipsim as cs
from chipsim.compiler import PIPELINE, CompileState
from chipsim.errors import PassError
from chipsim.passes.pipeline import Pipeline, PrintAfterEach, Stage
from chipsim.passes.simplify import cse, dce, fold_constants


@dataclass(frozen=True)
class State:
    a: int = 0
    b: int | None = None
    c: int | None = None


def _set_b(s: State) -> State:
    return dataclasses.replace(s, b=s.a + 1)


def _set_c(s: State) -> State:
    return dataclasses.replace(s, c=s.b * 10)


B = Stage("b", "b from a", _set_b, reads=("a",), writes=("b",))
C = Stage("c", "c from b", _set_c, reads=("b",), writes=("c",))


def test_stages_run_in_order_and_unpack_as_name_and_what():
    assert Pipeline([B, C])(State(a=1)) == State(1, 2, 20)
    assert [tuple(s) for s in Pipeline([B, C])] == [("b", "b from a"), ("c", "c from b")]


def test_a_stage_reading_what_only_a_later_stage_writes_is_refused():
    with pytest.raises(PassError, match=r"stage 'c' reads 'b', which no stage before it writes"):
        Pipeline([C, B])


def test_a_stage_changing_a_field_it_does_not_declare_fails_naming_both():
    sneaky = Stage("b", "b from a", lambda s: dataclasses.replace(s, a=5, b=1), writes=("b",))
    with pytest.raises(PassError, match=r"stage 'b' changed 'a', but it declares .* \['b'\]"):
        Pipeline([sneaky])(State())


def test_until_cuts_after_a_stage_and_names_the_stages_when_it_is_unknown():
    assert Pipeline([B, C]).until("b")(State(a=1)) == State(1, 2, None)
    assert PIPELINE.until("fuse").names == ["trace", "simplify", "fuse"]
    with pytest.raises(PassError, match=r"no stage 'x'; the stages are \['b', 'c'\]"):
        Pipeline([B, C]).until("x")


def test_replace_keeps_a_plain_function_under_the_old_stage_and_its_declarations():
    swapped = Pipeline([B, C]).replace("b", lambda s: dataclasses.replace(s, b=7))
    assert swapped.names == ["b", "c"] and swapped.stages[0].writes == ("b",)
    assert swapped(State()) == State(0, 7, 70)
    other = Pipeline([B, C]).replace("c", Stage("d", "d", _set_c, reads=("b",), writes=("c",)))
    assert other.names == ["b", "d"]
    assert Pipeline([fold_constants, cse, dce]).replace("cse", dce).names == [
        "fold_constants",
        "dce",
        "dce",
    ]


def test_instruments_see_each_stage_plain_callables_its_name():
    seen = []
    Pipeline([B, C], instruments=[lambda name, x: seen.append((name, x.c))])(State())
    assert seen == [("b", None), ("c", 10)]


def test_print_after_each_prints_what_each_stage_wrote():
    out = io.StringIO()
    graph = cs.trace(lambda x: (x + 1).relu() * 2, np.zeros(64, np.float32))
    pipeline = PIPELINE.until("plan memory").with_instruments(PrintAfterEach(file=out))
    state = pipeline(CompileState(graph, (), cs.chip("edge-npu")))
    text = out.getvalue()
    for header in (
        "--- after trace: graph ---",
        "--- after fuse: partition ---",
        "--- after liveness: records ---",
        "--- after plan memory: plan ---",
    ):
        assert header in text
    assert str(state.partition) in text and "graph(%0: f32[64])" in text
    assert str(state.plan) in text


def test_print_after_each_on_graph_passes_prints_the_graph_and_can_pick_stages(capsys):
    graph = cs.trace(lambda x: x * 1.0 + 0.0, np.zeros(4, np.float32))
    Pipeline([fold_constants, cse, dce], instruments=[PrintAfterEach(("dce",))])(graph)
    out = capsys.readouterr().out
    assert out.startswith("--- after dce ---\ngraph(%0: f32[4]) {") and "cse" not in out


def test_compile_until_fuse_is_compiles_partition():
    graph = cs.trace(lambda x: (x + 1).relu().exp(), np.zeros((64, 64), np.float32))
    state = PIPELINE.until("fuse")(CompileState(graph, (), cs.chip("edge-npu")))
    assert state.program is None
    assert state.partition.groups == cs.compile(graph).partition.groups
