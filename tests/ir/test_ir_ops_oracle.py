"""Oracle tests: every op of the registry against numpy, through the eager public API."""

import math

import numpy as np
import pytest

import chipsim as cs
from chipsim.ir.dtypes import round_bf16

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3)).astype(np.float32)
B = RNG.standard_normal((3,)).astype(np.float32)
POS = (np.abs(A) + 0.5).astype(np.float32)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


UNARY = [
    ("neg", A, np.negative),
    ("exp", A, np.exp),
    ("log", POS, np.log),
    ("sqrt", POS, np.sqrt),
    ("rsqrt", POS, lambda x: 1 / np.sqrt(x)),
    ("tanh", A, np.tanh),
    ("sigmoid", A, _sigmoid),
    ("relu", A, lambda x: np.maximum(x, 0)),
    ("gelu", A, _gelu),
    ("silu", A, lambda x: x * _sigmoid(x)),
]


@pytest.mark.parametrize(("op", "x", "ref"), UNARY, ids=[u[0] for u in UNARY])
def test_unary_matches_numpy(op, x, ref):
    out = getattr(cs.ops, op)(cs.tensor(x))
    assert out.dtype == cs.f32
    np.testing.assert_allclose(out.numpy(), ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", [u[0] for u in UNARY if u[0] not in ("neg", "relu")])
def test_float_only_unary_refuses_ints(op):
    with pytest.raises(cs.ShapeError, match="cast it to f32"):
        getattr(cs.ops, op)(cs.tensor(np.array([1, 2], np.int32)))


BINARY = [
    ("add", np.add, cs.f32),
    ("sub", np.subtract, cs.f32),
    ("mul", np.multiply, cs.f32),
    ("div", np.divide, cs.f32),
    ("maximum", np.maximum, cs.f32),
    ("minimum", np.minimum, cs.f32),
    ("gt", np.greater, cs.boolean),
    ("lt", np.less, cs.boolean),
    ("ge", np.greater_equal, cs.boolean),
    ("le", np.less_equal, cs.boolean),
    ("eq", np.equal, cs.boolean),
]


@pytest.mark.parametrize(("op", "ref", "out_dtype"), BINARY, ids=[b[0] for b in BINARY])
def test_binary_broadcasts_like_numpy(op, ref, out_dtype):
    a, b = A, POS[0]  # (2, 3) with (3,)
    out = getattr(cs.ops, op)(cs.tensor(a), cs.tensor(b))
    assert out.shape == (2, 3) and out.dtype == out_dtype
    np.testing.assert_allclose(out.numpy(), ref(a, b), rtol=1e-6)
    # a Python scalar takes the tensor's dtype
    out2 = getattr(cs.ops, op)(cs.tensor(a), 0.5)
    assert out2.dtype == out_dtype
    np.testing.assert_allclose(out2.numpy(), ref(a, np.float32(0.5)), rtol=1e-6)


def test_comparisons_give_bool_and_eq_is_exact():
    x = cs.tensor([1.0, 2.0, 3.0])
    assert (x == 2.0).numpy().tolist() == [False, True, False]
    assert (x >= 2.0).numpy().tolist() == [False, True, True]
    assert (x <= 2.0).numpy().tolist() == [True, True, False]
    assert (x > 2.0).dtype == cs.boolean


def test_i32_arithmetic_stays_integer():
    a = np.array([[7, -3, 2]], np.int32)
    b = np.array([[2], [5]], np.int32)
    for op, ref in [
        ("add", np.add),
        ("sub", np.subtract),
        ("mul", np.multiply),
        ("maximum", np.maximum),
        ("minimum", np.minimum),
    ]:
        out = getattr(cs.ops, op)(cs.tensor(a), cs.tensor(b))
        assert out.dtype == cs.i32
        np.testing.assert_array_equal(out.numpy(), ref(a, b))
    assert (cs.tensor(a) * 3).numpy().tolist() == [[21, -9, 6]]
    with pytest.raises(cs.ShapeError, match="floating-point"):
        cs.ops.div(cs.tensor(a), cs.tensor(b))
    with pytest.raises(cs.ShapeError, match="cast the tensor to f32"):
        cs.tensor(a) + 0.5


def test_f16_results_are_f16():
    a = np.array([1.0, 2.0, 65504.0], np.float16)
    out = cs.tensor(a) * 2.0  # overflows to inf in f16
    assert out.dtype == cs.f16 and out.numpy().dtype == np.float16
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out.numpy(), a * np.float16(2))
    assert np.isinf(out.numpy()[2])
    e = cs.ops.exp(cs.tensor(np.array([0.1], np.float16)))
    assert e.numpy().dtype == np.float16
    assert e.numpy()[0] == np.exp(np.float16(0.1))


def test_bf16_results_are_rounded_to_bfloat16():
    x = cs.tensor(np.array([1.0, 3.0], np.float32), "bf16")
    y = x / 3.0
    assert y.dtype == cs.bf16
    # 1/3 in bf16 keeps 8 significant bits: 0.333984375
    assert y.numpy()[0] == np.float32(0.333984375)
    assert y.numpy()[1] == 1.0
    bits = y.numpy().view(np.uint32)
    assert np.all(bits & 0xFFFF == 0)
    # round-to-nearest-even on a tie: 1 + 2**-8 is halfway between 1 and 1 + 2**-7
    assert round_bf16(np.array([1 + 2**-8], np.float32))[0] == 1.0
    assert round_bf16(np.array([1 + 3 * 2**-8], np.float32))[0] == np.float32(1 + 2**-6)


def test_bool_arithmetic_that_numpy_refuses_is_a_shape_error():
    t = cs.tensor([True, False])
    with pytest.raises(cs.ShapeError, match="bool"):
        _ = -t
    with pytest.raises(cs.ShapeError, match="bool"):
        cs.ops.sub(t, t)


def test_where_broadcasts_and_needs_bool():
    c = A > 0
    out = cs.ops.where(cs.tensor(c), cs.tensor(A), 0.0)
    np.testing.assert_array_equal(out.numpy(), np.where(c, A, np.float32(0)))
    out2 = cs.ops.where(cs.tensor(c[0]), cs.tensor(A), cs.tensor(B))
    np.testing.assert_array_equal(out2.numpy(), np.where(c[0], A, B))
    with pytest.raises(cs.ShapeError, match="condition must be bool"):
        cs.ops.where(cs.tensor(A), cs.tensor(A), cs.tensor(A))


@pytest.mark.parametrize(
    ("to", "np_dtype"),
    [("f16", np.float16), ("i32", np.int32), ("bool", np.bool_), ("i8", np.int8)],
)
def test_cast_matches_astype(to, np_dtype):
    x = np.array([-2.7, 0.0, 1.5, 3.25], np.float32)
    out = cs.ops.cast(cs.tensor(x), to)
    assert out.dtype.name == to
    np.testing.assert_array_equal(out.numpy(), x.astype(np_dtype))


def test_cast_to_bf16_rounds():
    out = cs.tensor([1.0 + 2**-10]).astype("bf16")
    assert out.numpy()[0] == 1.0 and out.dtype == cs.bf16


def test_constant_keeps_dtype_and_bits():
    b = cs.GraphBuilder()
    c16 = b.const(np.array([0.1, 2.5], np.float16))
    cb = b.const(np.array([0.1], np.float32), "bf16")
    ci = b.const(np.array([[1, 2]], np.int64))
    g = b.build(c16, cb, ci)
    o16, ob, oi = g()
    assert o16.dtype == np.float16 and o16.tolist() == np.array([0.1, 2.5], np.float16).tolist()
    assert ob[0] == round_bf16(np.array([0.1], np.float32))[0]
    assert oi.dtype == np.int32 and oi.shape == (1, 2)
    assert [v.dtype for v in g.outputs] == [cs.f16, cs.bf16, cs.i32]


# -- contractions ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sa", "sb"),
    [
        ((3, 4), (4, 5)),
        ((4,), (4, 5)),
        ((3, 4), (4,)),
        ((4,), (4,)),
        ((2, 3, 4), (4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((4,), (2, 4, 3)),
        ((2, 3, 4), (4,)),
    ],
)
def test_matmul_matches_numpy(sa, sb):
    a = RNG.standard_normal(sa).astype(np.float32)
    b = RNG.standard_normal(sb).astype(np.float32)
    out = cs.ops.matmul(cs.tensor(a), cs.tensor(b))
    assert out.shape == np.matmul(a, b).shape
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-5, atol=1e-5)


def test_matmul_i32_and_errors():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = cs.tensor(a) @ cs.tensor(a.T.copy())
    assert out.dtype == cs.i32
    np.testing.assert_array_equal(out.numpy(), a @ a.T)
    with pytest.raises(cs.ShapeError, match="inner dimensions differ"):
        cs.ops.matmul(
            cs.tensor(np.ones((2, 3), np.float32)), cs.tensor(np.ones((4, 2), np.float32))
        )
    with pytest.raises(cs.ShapeError, match="insert a cast"):
        cs.ops.matmul(
            cs.tensor(np.ones((2, 3), np.float32)), cs.tensor(np.ones((3, 2), np.float16))
        )
    with pytest.raises(cs.ShapeError, match="rank >= 1"):
        cs.ops.matmul(cs.tensor(1.0), cs.tensor([1.0]))


def naive_conv2d(x, w, stride, pads):
    """NHWC x HWIO convolution with explicit (top, bottom, left, right) zero padding."""
    n, h, wd, c = x.shape
    kh, kw, _, co = w.shape
    sh, sw = stride
    pt, pb, pl, pr = pads
    xp = np.zeros((n, h + pt + pb, wd + pl + pr, c), np.float64)
    xp[:, pt : pt + h, pl : pl + wd, :] = x
    oh = (h + pt + pb - kh) // sh + 1
    ow = (wd + pl + pr - kw) // sw + 1
    out = np.zeros((n, oh, ow, co))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for o in range(co):
                    patch = xp[b, i * sh : i * sh + kh, j * sw : j * sw + kw, :]
                    out[b, i, j, o] = np.sum(patch * w[:, :, :, o])
    return out


def _same_pads(size, k, s):
    out = math.ceil(size / s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


@pytest.mark.parametrize(
    ("hw", "k", "stride", "padding"),
    [
        ((5, 5), (3, 3), 1, "valid"),
        ((5, 6), (3, 2), 2, "valid"),
        ((5, 5), (3, 3), 1, "same"),
        ((6, 7), (3, 3), 2, "same"),
        ((4, 4), (2, 2), (1, 2), "same"),
        ((4, 5), (3, 3), 1, 1),
        ((4, 5), (3, 2), (2, 1), (2, 0)),
    ],
)
def test_conv2d_matches_naive_loop(hw, k, stride, padding):
    x = RNG.standard_normal((2, *hw, 3)).astype(np.float32)
    w = RNG.standard_normal((*k, 3, 4)).astype(np.float32)
    st = (stride, stride) if isinstance(stride, int) else stride
    if padding == "valid":
        pads = (0, 0, 0, 0)
    elif padding == "same":
        pads = _same_pads(hw[0], k[0], st[0]) + _same_pads(hw[1], k[1], st[1])
    else:
        ph, pw = (padding, padding) if isinstance(padding, int) else padding
        pads = (ph, ph, pw, pw)
    out = cs.ops.conv2d(cs.tensor(x), cs.tensor(w), stride=stride, padding=padding)
    expected = naive_conv2d(x, w, st, pads)
    assert out.shape == expected.shape
    if padding == "same":
        assert out.shape[1:3] == (math.ceil(hw[0] / st[0]), math.ceil(hw[1] / st[1]))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_conv2d_errors():
    x = cs.tensor(np.ones((1, 4, 4, 3), np.float32))
    with pytest.raises(cs.ShapeError, match="input channels differ"):
        cs.ops.conv2d(x, cs.tensor(np.ones((3, 3, 2, 1), np.float32)))
    with pytest.raises(cs.ShapeError, match="larger than the padded input"):
        cs.ops.conv2d(x, cs.tensor(np.ones((5, 5, 3, 1), np.float32)))
    with pytest.raises(cs.IRError, match="stride must be at least 1"):
        cs.ops.conv2d(x, cs.tensor(np.ones((3, 3, 3, 1), np.float32)), stride=0)
    with pytest.raises(cs.ShapeError, match="NHWC"):
        cs.ops.conv2d(
            cs.tensor(np.ones((4, 4, 3), np.float32)), cs.tensor(np.ones((3, 3, 3, 1), np.float32))
        )


# -- shape ops --------------------------------------------------------------------------------
def test_transpose_reshape_broadcast_concat():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    t = cs.tensor(x)
    np.testing.assert_array_equal(cs.ops.transpose(t).numpy(), x.T)
    np.testing.assert_array_equal(cs.ops.transpose(t, (1, 0, 2)).numpy(), x.transpose(1, 0, 2))
    np.testing.assert_array_equal(t.T.numpy(), x.T)
    np.testing.assert_array_equal(cs.ops.reshape(t, (4, -1)).numpy(), x.reshape(4, -1))
    assert cs.ops.reshape(t, (-1,)).shape == (24,)
    assert t.reshape(3, 8).shape == (3, 8)
    y = cs.ops.broadcast_to(cs.tensor(B), (2, 3))
    np.testing.assert_array_equal(y.numpy(), np.broadcast_to(B, (2, 3)))
    c = cs.ops.concat([cs.tensor(A), cs.tensor(A[:1]), cs.tensor(A)], axis=0)
    np.testing.assert_array_equal(c.numpy(), np.concatenate([A, A[:1], A]))
    c2 = cs.ops.concat([cs.tensor(A), cs.tensor(A)], axis=-1)
    np.testing.assert_array_equal(c2.numpy(), np.concatenate([A, A], axis=-1))


def test_shape_op_errors():
    t = cs.tensor(np.ones((2, 3), np.float32))
    with pytest.raises(cs.ShapeError, match="not a permutation"):
        cs.ops.transpose(t, (0, 0))
    with pytest.raises(cs.ShapeError, match="cannot reshape"):
        cs.ops.reshape(t, (4, 2))
    with pytest.raises(cs.ShapeError, match="at most one -1"):
        cs.ops.reshape(t, (-1, -1))
    with pytest.raises(cs.ShapeError, match="cannot infer -1"):
        cs.ops.reshape(t, (4, -1))
    with pytest.raises(cs.ShapeError, match=r"cannot broadcast f32\[2, 3\] to \[3, 3\]"):
        cs.ops.broadcast_to(t, (3, 3))
    with pytest.raises(cs.ShapeError, match="except along axis 0"):
        cs.ops.concat([t, cs.tensor(np.ones((1, 4), np.float32))])
    with pytest.raises(cs.ShapeError, match="steps must be positive"):
        cs.ops.slice(t, (0,), (2,), (-1,))


@pytest.mark.parametrize(
    ("starts", "stops", "steps"),
    [
        ((0,), (4,), (2,)),
        ((1, 0), (5, 6), (3, 2)),
        ((-3, 1), (6, -1), None),
        ((0, 0), (100, 2), None),
    ],
)
def test_slice_with_steps_matches_numpy(starts, stops, steps):
    x = np.arange(36, dtype=np.float32).reshape(6, 6)
    out = cs.ops.slice(cs.tensor(x), starts, stops, steps)
    steps_ = steps or (1,) * len(starts)
    index = tuple(slice(a, b, c) for a, b, c in zip(starts, stops, steps_, strict=True))
    np.testing.assert_array_equal(out.numpy(), x[index])


# -- reductions -------------------------------------------------------------------------------
X3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("op", ["sum", "max", "mean"])
@pytest.mark.parametrize("axes", [None, 0, -1, (0, 2), (-2, -1), (-3,)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(op, axes, keepdims):
    out = getattr(cs.ops, op)(cs.tensor(X3), axes, keepdims)
    ref = getattr(np, op)(X3, axis=axes, keepdims=keepdims)
    assert out.shape == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_reduction_errors():
    t = cs.tensor(X3)
    with pytest.raises(cs.ShapeError, match="out of range for a rank-3"):
        t.sum(3)
    with pytest.raises(cs.ShapeError, match="same axis twice"):
        t.sum((0, -3))


def test_softmax_and_layernorm():
    x = X3 * 10
    for axis in (-1, 0, 1):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        np.testing.assert_allclose(
            cs.ops.softmax(cs.tensor(x), axis).numpy(),
            e / e.sum(axis=axis, keepdims=True),
            rtol=1e-5,
            atol=1e-7,
        )
    w = RNG.standard_normal(4).astype(np.float32)
    bias = RNG.standard_normal(4).astype(np.float32)
    mu = x.mean(-1, keepdims=True)
    norm = (x - mu) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(cs.ops.layernorm(cs.tensor(x)).numpy(), norm, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        cs.ops.layernorm(cs.tensor(x), cs.tensor(w), cs.tensor(bias)).numpy(),
        norm * w + bias,
        rtol=1e-4,
        atol=1e-5,
    )
    with pytest.raises(cs.ShapeError, match="layernorm weight must be f32\\[4\\]"):
        cs.ops.layernorm(cs.tensor(x), cs.tensor(w[:3]), cs.tensor(bias))
    with pytest.raises(cs.ShapeError, match="give both weight and bias"):
        cs.ops.layernorm(cs.tensor(x), cs.tensor(w))


def test_rmsnorm_matches_numpy():
    x = X3 * 10
    w = RNG.standard_normal(4).astype(np.float32)
    norm = x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(cs.ops.rmsnorm(cs.tensor(x)).numpy(), norm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        cs.ops.rmsnorm(cs.tensor(x), cs.tensor(w)).numpy(), norm * w, rtol=1e-5, atol=1e-6
    )
    with pytest.raises(cs.ShapeError, match="rmsnorm weight must be f32\\[4\\]"):
        cs.ops.rmsnorm(cs.tensor(x), cs.tensor(w[:3]))
    with pytest.raises(cs.IRError, match="last axis only"):
        cs.ops.rmsnorm(cs.tensor(x), axis=0)


def test_bf16_scalars_keep_their_shape():
    assert round_bf16(np.float32(1 / 3)).shape == ()
    t = cs.tensor(1.0, "bf16")
    assert t.shape == () and t.numpy().shape == ()
    assert (t / 3.0).numpy().item() == 0.333984375
    g = cs.trace(lambda x: x * 3.0, cs.TensorType((), cs.bf16))
    assert g.nodes[0].type == cs.TensorType((), cs.bf16)
    assert g(np.float32(1 / 3)).shape == ()
