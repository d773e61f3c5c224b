"""Exact FLOPs and bytes per op, and the text of shape/dtype inference errors."""

import pytest

import chipsim as cs
from chipsim.ir import OPS, Attrs, ConstData, Pattern, TensorType, get_op
from chipsim.ir.ops import flops, infer_type


def T(*shape, dt="f32"):
    return TensorType(shape, dt)


X = T(2, 3)
# op, input types, attrs, FLOPs, bytes read, bytes written
COSTS = [
    ("add", [X, T(3)], {}, 6, 36, 24),
    ("sub", [X, X], {}, 6, 48, 24),
    ("mul", [X, T()], {}, 6, 28, 24),
    ("div", [X, X], {}, 6, 48, 24),
    ("maximum", [X, X], {}, 6, 48, 24),
    ("minimum", [X, X], {}, 6, 48, 24),
    ("gt", [X, X], {}, 6, 48, 6),
    ("lt", [X, X], {}, 6, 48, 6),
    ("ge", [X, X], {}, 6, 48, 6),
    ("le", [X, X], {}, 6, 48, 6),
    ("eq", [X, X], {}, 6, 48, 6),
    ("neg", [X], {}, 6, 24, 24),
    ("exp", [X], {}, 6, 24, 24),
    ("log", [X], {}, 6, 24, 24),
    ("sqrt", [X], {}, 6, 24, 24),
    ("rsqrt", [X], {}, 12, 24, 24),
    ("tanh", [X], {}, 6, 24, 24),
    ("sigmoid", [X], {}, 24, 24, 24),
    ("relu", [X], {}, 6, 24, 24),
    ("gelu", [X], {}, 48, 24, 24),
    ("silu", [X], {}, 30, 24, 24),
    ("where", [T(2, 3, dt="bool"), X, T()], {}, 6, 34, 24),
    ("cast", [X], {"to": "f16"}, 6, 24, 12),
    ("constant", [], {"value": ConstData.of([[1.0, 2.0, 3.0]] * 2)}, 0, 0, 0),
    ("matmul", [T(2, 3, 4), T(4, 5)], {}, 240, 176, 120),
    ("conv2d", [T(1, 5, 5, 2), T(3, 3, 2, 4)], {}, 1296, 488, 144),
    ("conv2d", [T(1, 5, 5, 2), T(3, 3, 2, 4)], {"stride": 2, "padding": "valid"}, 576, 488, 64),
    ("transpose", [X], {}, 0, 24, 24),
    ("reshape", [X], {"shape": (3, 2)}, 0, 0, 0),
    ("broadcast_to", [T(3)], {"shape": (2, 3)}, 0, 12, 24),
    ("concat", [X, T(1, 3)], {"axis": 0}, 0, 36, 36),
    ("slice", [T(4, 6)], {"starts": (0, 1), "stops": (4, 5), "steps": (2, 1)}, 0, 96, 32),
    ("sum", [X], {"axes": (1,)}, 6, 24, 8),
    ("max", [X], {"axes": (-1,)}, 6, 24, 8),
    ("mean", [X], {"axes": (1,)}, 8, 24, 8),
    ("softmax", [X], {}, 30, 24, 24),
    ("layernorm", [X, T(3), T(3)], {}, 48, 48, 24),
    ("rmsnorm", [X, T(3)], {}, 24, 36, 24),
    ("grouped_conv2d", [T(1, 5, 5, 4), T(3, 3, 1, 4)], {"groups": 4}, 648, 544, 144),
    ("max_pool2d", [T(1, 4, 4, 2)], {}, 24, 128, 32),
    ("gather", [T(5, 3), T(2, dt="i32")], {}, 0, 68, 24),
    ("clip", [X], {}, 12, 24, 24),
    ("gelu_erf", [X], {}, 60, 24, 24),
    ("batch_norm", [X, T(3), T(3), T(3), T(3)], {}, 12, 72, 24),
]


def test_every_op_has_a_cost_case():
    assert sorted({c[0] for c in COSTS}) == sorted(OPS)


@pytest.mark.parametrize(
    ("op", "ins", "attrs", "fl", "br", "bw"),
    COSTS,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(COSTS)],
)
def test_flops_and_bytes(op, ins, attrs, fl, br, bw):
    frozen = Attrs(attrs)
    out = infer_type(op, ins, frozen)
    opdef = get_op(op)
    assert flops(op, ins, out, frozen) == fl
    assert opdef.bytes_read(ins) == br
    assert opdef.bytes_written(out) == bw


def test_patterns_form_the_fusion_lattice():
    P = Pattern
    assert P.ELEMENTWISE < P.BROADCAST < P.INJECTIVE < P.REDUCTION < P.CONTRACTION < P.OPAQUE
    assert get_op("exp").pattern is P.ELEMENTWISE
    assert get_op("add").pattern is P.BROADCAST
    assert get_op("reshape").pattern is P.INJECTIVE
    assert get_op("softmax").pattern is P.REDUCTION
    assert get_op("conv2d").pattern is P.CONTRACTION
    assert get_op("constant").pattern is P.OPAQUE


def test_broadcast_failure_shows_both_shapes():
    with pytest.raises(cs.ShapeError) as info:
        infer_type("add", [T(2, 3), T(4, 3)], Attrs())
    msg = str(info.value)
    assert "[2, 3]" in msg and "[4, 3]" in msg and msg.startswith("add:")
    assert isinstance(info.value, cs.IRError)


def test_dtype_mismatch_says_insert_a_cast():
    with pytest.raises(cs.ShapeError) as info:
        infer_type("mul", [T(2), T(2, dt="f16")], Attrs())
    assert "f32[2]" in str(info.value) and "f16[2]" in str(info.value)
    assert "insert a cast" in str(info.value)


def test_unknown_op_suggests_names():
    with pytest.raises(cs.IRError, match="unknown op 'addd'. Did you mean add"):
        get_op("addd")


def test_arity_and_attribute_errors():
    with pytest.raises(cs.IRError, match="add takes 2 input\\(s\\), got 1"):
        infer_type("add", [X], Attrs())
    with pytest.raises(cs.IRError, match="unknown attribute 'axis' \\(allowed: none\\)"):
        infer_type("exp", [X], Attrs({"axis": 1}))
    with pytest.raises(cs.IRError, match="missing required attribute 'shape'"):
        infer_type("reshape", [X], Attrs())
    with pytest.raises(cs.IRError, match="bad attribute keepdims=1: expected True or False"):
        infer_type("sum", [X], Attrs({"keepdims": 1}))
    with pytest.raises(cs.IRError, match="unknown dtype 'f64'"):
        infer_type("cast", [X], Attrs({"to": "f64"}))


def test_bad_shapes_are_ir_errors():
    with pytest.raises(cs.IRError, match="every dimension must be an int >= 0"):
        TensorType((2, -1), "f32")
    with pytest.raises(cs.IRError, match="unknown dtype"):
        TensorType((2,), "float64")
