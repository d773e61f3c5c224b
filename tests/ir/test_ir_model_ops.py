"""Oracle tests of the ops the published models need, against straightforward numpy loops."""

import math

import numpy as np
import pytest

import chipsim as cs

RNG = np.random.default_rng(7)


def _loop_grouped_conv(x, w, stride, pad, groups):
    n, h, wd, cin = x.shape
    kh, kw, cg, cout = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, oh, ow, cout))
    per = cout // groups
    for o in range(cout):
        g = o // per
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, i * stride : i * stride + kh, j * stride : j * stride + kw,
                           g * cg : (g + 1) * cg]  # fmt: skip
                out[:, i, j, o] = np.tensordot(patch, w[:, :, :, o], axes=3)
    return out


@pytest.mark.parametrize(
    ("cin", "cout", "groups", "stride"), [(6, 6, 6, 1), (6, 12, 3, 2), (4, 8, 1, 1)]
)
def test_grouped_conv2d_matches_a_loop(cin, cout, groups, stride):
    x = RNG.standard_normal((2, 7, 7, cin)).astype(np.float32)
    w = RNG.standard_normal((3, 3, cin // groups, cout)).astype(np.float32)
    got = cs.ops.grouped_conv2d(cs.tensor(x), cs.tensor(w), stride=stride, padding=1, groups=groups)
    np.testing.assert_allclose(got.numpy(), _loop_grouped_conv(x, w, stride, 1, groups),
                               rtol=1e-4, atol=1e-4)  # fmt: skip


def test_grouped_conv2d_with_one_group_is_conv2d():
    x = RNG.standard_normal((1, 6, 6, 4)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 4, 5)).astype(np.float32)
    a = cs.ops.grouped_conv2d(cs.tensor(x), cs.tensor(w), stride=2, padding="same").numpy()
    b = cs.ops.conv2d(cs.tensor(x), cs.tensor(w), stride=2, padding="same").numpy()
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_grouped_conv2d_says_what_the_weight_shape_must_be():
    x = cs.tensor(np.zeros((1, 5, 5, 8), np.float32))
    with pytest.raises(cs.ShapeError, match=r"cin / groups"):
        cs.ops.grouped_conv2d(x, cs.tensor(np.zeros((3, 3, 8, 8), np.float32)), groups=8)
    with pytest.raises(cs.ShapeError, match="must divide"):
        cs.ops.grouped_conv2d(x, cs.tensor(np.zeros((3, 3, 2, 8), np.float32)), groups=3)


def test_max_pool2d_matches_a_loop_and_padding_never_wins():
    x = -np.abs(RNG.standard_normal((2, 9, 9, 3))).astype(np.float32) - 1  # all negative
    got = cs.ops.max_pool2d(cs.tensor(x), window=3, stride=2, padding=1).numpy()
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
    ref = np.array([[[[xp[n, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3, c].max() for c in range(3)]
                      for j in range(5)] for i in range(5)] for n in range(2)])  # fmt: skip
    np.testing.assert_array_equal(got, ref)
    assert got.max() < 0  # the -inf padding is never the maximum


def test_gather_is_an_embedding_lookup_and_names_a_bad_index():
    table = RNG.standard_normal((10, 4)).astype(np.float32)
    idx = np.array([[3, 0, 9], [9, 9, 1]], np.int32)
    got = cs.ops.gather(cs.tensor(table), cs.tensor(idx)).numpy()
    np.testing.assert_array_equal(got, table[idx])
    with pytest.raises(cs.ShapeError, match="integers"):
        cs.ops.gather(cs.tensor(table), cs.tensor(idx.astype(np.float32)))
    with pytest.raises(Exception, match="index 12 is out of range for a table of 10 rows"):
        cs.ops.gather(cs.tensor(table), cs.tensor(np.array([12], np.int32))).numpy()


def test_clip_defaults_to_relu6():
    x = np.linspace(-3, 9, 25, dtype=np.float32)
    np.testing.assert_array_equal(
        cs.ops.clip(cs.tensor(x)).numpy(), np.minimum(np.maximum(x, 0), 6)
    )
    np.testing.assert_array_equal(
        cs.ops.clip(cs.tensor(x), lo=-1.0, hi=1.0).numpy(), np.clip(x, -1, 1)
    )


def test_gelu_erf_matches_math_erf():
    x = np.linspace(-6, 6, 301, dtype=np.float32)
    # Abramowitz & Stegun 7.1.26 bounds the error of erf by 1.5e-7
    ref = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
    np.testing.assert_allclose(cs.ops.gelu_erf(cs.tensor(x)).numpy(), ref, rtol=1e-5, atol=5e-7)
    # and it differs measurably from the tanh approximation GPT-2 uses
    assert np.abs(cs.ops.gelu(cs.tensor(x)).numpy() - ref).max() > 1e-4


def test_batch_norm_normalises_per_channel():
    x = RNG.standard_normal((3, 4, 4, 5)).astype(np.float32)
    scale, bias = RNG.random(5).astype(np.float32) + 0.5, RNG.standard_normal(5).astype(np.float32)
    mean, var = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    got = cs.ops.batch_norm(*(cs.tensor(a) for a in (x, scale, bias, mean, var)), eps=1e-3).numpy()
    np.testing.assert_allclose(got.mean(axis=(0, 1, 2)), bias, atol=1e-4)
    ref = (x - mean) / np.sqrt(var + 1e-3) * scale + bias
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(cs.ShapeError, match=r"one per channel"):
        cs.ops.batch_norm(*(cs.tensor(a) for a in (x, scale[:4], bias, mean, var)))
