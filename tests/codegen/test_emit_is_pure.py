"""Codegen is plan, then emit: ``emit`` is a pure function of the kernel and its frozen plan."""

import dataclasses

import pytest

from chipsim.codegen import KernelSpec, Location, lower
from chipsim.codegen.lower import emit
from chipsim.codegen.planning import plan_kernel, plan_lowering
from chipsim.hw import get_chip
from chipsim.hw.parts import SRAM
from chipsim.ir import GraphBuilder, f32

from .harness import place

SMALL = dataclasses.replace(get_chip("edge-npu"), sram=SRAM(capacity_bytes=64 * 1024))


def _relu():  # tiled: 1 MiB of rows through 512 KiB of SRAM
    b = GraphBuilder()
    x = b.input((4096, 64), f32)
    return b.build(b.op("relu", x)), get_chip("edge-npu"), None, None


def _matmul_bias_relu():  # blocked: a weight too big for SRAM next to row tiles
    b = GraphBuilder()
    x, w, c = b.input((256, 384), f32), b.input((384, 512), f32), b.input((512,), f32)
    return b.build(b.op("relu", b.op("add", b.op("matmul", x, w), c))), SMALL, None, None


def _softmax_spilled():  # spill: needs all rows at once, in an 8 KiB window
    b = GraphBuilder()
    x = b.input((64, 64), f32)
    y = b.op("softmax", b.op("exp", x), axis=0)
    return b.build(y), get_chip("edge-npu"), (0, 8192), Location("dram", 1 << 20)


def _spec(graph, window, scratch):
    loc, _ = place([*graph.inputs, *(n.output for n in graph.nodes)])
    spec = KernelSpec.of([n for n in graph.nodes if n.op != "constant"], graph.outputs, loc)
    return KernelSpec(spec.name, spec.nodes, spec.inputs, spec.outputs, loc, window, scratch)


def _text(prog):
    """What an instruction stream says (instructions compare by identity)."""
    return [(str(i), i.work, i.hw_ops, i.flops, i.kernel, i.fn is None) for i in prog]


@pytest.mark.parametrize(
    "build, mode",
    [(_relu, "tiled"), (_matmul_bias_relu, "blocked"), (_softmax_spilled, "spill")],
)
def test_emit_is_a_pure_function_of_the_plan(build, mode):
    graph, chip, window, scratch = build()
    kernel = _spec(graph, window, scratch)
    plan = plan_lowering(kernel, chip)
    assert plan.kernel_plan.mode == mode
    assert plan.kernel_plan == plan_kernel(kernel, chip)
    first = emit(kernel, chip, plan)
    assert _text(emit(kernel, chip, plan)) == _text(first)  # same plan, same instructions
    assert _text(lower(kernel, chip)) == _text(first)  # lowering is planning, then emission


def test_the_plan_is_frozen():
    graph, chip, window, scratch = _relu()
    plan = plan_lowering(_spec(graph, window, scratch), chip)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.sram_lo = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        plan.homes[graph.inputs[0]] = None  # type: ignore[index]
