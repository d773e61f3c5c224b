"""The HLO reader on text from two JAX versions, whose HLO is spelled differently.

The fixtures (tests/xla/hlo/, written by tests/xla/write_fixtures.py) are XLA's optimised HLO
for three book graphs from jax 0.4.30 (operands carry their types, oneDNN custom calls,
``fusion.N`` names) and jax 0.10.2 (bare operand names, YNNPACK fusions, names such as
``broadcast_maximum_fusion``, source-location tables before the computations). No JAX is
needed here: the reader works on text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from xla_graphs import compiled_graph

from chipsim.xla.compare import xla_kernels
from chipsim.xla.hlo import parse_hlo, parse_instruction, readable

HLO = Path(__file__).with_name("hlo")
VERSIONS = ("0.4.30", "0.10.2")


def fixture(graph: str, version: str) -> str:
    return (HLO / f"{graph}.jax-{version}.hlo").read_text(encoding="utf-8")


@pytest.mark.parametrize("version", VERSIONS)
def test_add_mul_is_one_fused_kernel_in_every_version(version):
    kernels = parse_hlo(fixture("add_mul", version)).kernels()
    assert len(kernels) == 1
    assert kernels[0].opcode == "fusion" and kernels[0].fusion_kind == "kLoop"
    assert kernels[0].opcodes == ("add", "multiply")


def test_linear_relu_fuses_differently_in_the_two_versions():
    """0.4.30 fuses the bias add into the dot (a kOutput fusion) and runs the ReLU apart;
    0.10.2 runs the dot alone and fuses the bias add with the ReLU."""
    old = [k.opcodes for k in parse_hlo(fixture("linear_relu", "0.4.30")).kernels()]
    new = [k.opcodes for k in parse_hlo(fixture("linear_relu", "0.10.2")).kernels()]
    assert old == [("dot", "add"), ("maximum",)]
    assert new == [("dot",), ("add", "maximum")]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_computing_node_of_the_cnn_is_found_in_a_kernel(version):
    """The node scopes survive XLA's passes: each computing node of the graph is in some
    kernel, and only layout ops (reshape) are left free."""
    graph = compiled_graph("cnn")
    kernels = xla_kernels(graph, parse_hlo(fixture("cnn", version)))
    held = {i for k in kernels for i in k.nodes}
    free = [
        graph.nodes[i].op for i, n in enumerate(graph.nodes) if n.op != "constant" and i not in held
    ]
    assert free == ["reshape"]
    convs = [i for i, n in enumerate(graph.nodes) if n.op == "conv2d"]
    assert all(
        any(c in k.nodes and "convolution" in k.kernel.opcodes for k in kernels) for c in convs
    )


def test_a_dot_without_metadata_is_matched_by_its_size():
    """jax 0.10.2 drops the metadata of a matrix-vector dot; the mapping finds its node."""
    graph = compiled_graph("linear_relu")
    module = parse_hlo(fixture("linear_relu", "0.10.2"))
    dot = next(k for k in module.kernels() if k.opcodes == ("dot",))
    assert dot.op_names == ()
    kernels = xla_kernels(graph, module)
    matmul = next(i for i, n in enumerate(graph.nodes) if n.op == "matmul")
    assert [k.nodes for k in kernels if k.kernel == dot] == [(matmul,)]


def test_instruction_forms():
    typed = parse_instruction(
        "  %add.115 = f32[128,768]{1,0} add(f32[128,768]{1,0} %Arg_0.1, f32[128,768]{1,0} "
        '%get-tuple-element.5), metadata={op_name="jit(f)/cs23_add/add" source_line=129}'
    )
    assert typed.opcode == "add" and typed.operands == ("Arg_0.1", "get-tuple-element.5")
    assert typed.op_names == ("jit(f)/cs23_add/add",) and typed.nbytes == 128 * 768 * 4
    tupled = parse_instruction(
        "  %custom-call.4 = (f32[128,768]{1,0}, u8[1152]{0}) custom-call(%a, %b), "
        'custom_call_target="__onednn$matmul", backend_config={"x":{"y":[]}}'
    )
    assert tupled.opcode == "custom-call" and tupled.nbytes == 128 * 768 * 4 + 1152
    cond = parse_instruction(
        "  %cond.1 = (f32[3]{0}) conditional(%p, %t, %t), branch_computations={%r1, %r2}"
    )
    assert cond.calls == ("r1", "r2")
    shared = parse_instruction(
        "  ROOT %f = f32[4]{0} fusion(%x), kind=kLoop, calls=%c, "
        'metadata={op_name="jit(f)/cs1_a/t;jit(f)/cs2_b/t"}'
    )
    assert shared.root and shared.op_names == ("jit(f)/cs1_a/t", "jit(f)/cs2_b/t")
    assert parse_instruction("FileNames") is None


@pytest.mark.parametrize("version", VERSIONS)
def test_readable_keeps_the_computations_and_drops_metadata(version):
    text = readable(fixture("cnn", version))
    assert "metadata=" not in text and "backend_config=" not in text
    assert "FileNames" not in text and "HloModule" not in text
    assert parse_hlo(text).kernels() == [
        k.__class__(k.name, k.opcode, k.fusion_kind, k.opcodes, (), k.nbytes, k.operands)
        for k in parse_hlo(fixture("cnn", version)).kernels()
    ]


def test_live_peak_counts_intermediates_in_schedule_order():
    text = """HloModule m
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} exponential(%x)
  %b = f32[8]{0} concatenate(%a, %a), dimensions={0}
  %c = f32[4]{0} slice(%b), slice={[0:4]}
  ROOT %d = f32[4]{0} add(%c, %a)
}"""
    # a (16 B) lives to d; b (32 B) to c; c (16 B) to d: at c, a + b + c = 64 bytes
    assert parse_hlo(text).live_peak() == 64


def test_a_module_without_entry_is_refused():
    with pytest.raises(ValueError, match="ENTRY"):
        parse_hlo("HloModule m\n%c (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}")
