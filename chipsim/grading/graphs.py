"""The problem graphs of the fusion exercises, each built from a seed (pristine definitions).

Every builder is deterministic: the same arguments give the same graph, weights included, on
every machine. The grader rebuilds them in its own process and never trusts a graph that came
from a learner's kernel.

Example:
    >>> g = chain_graph(0)
    >>> g.name, len(g.inputs)
    ('chains0', 2)
"""

from __future__ import annotations

import numpy as np

from chipsim.ir import Graph, GraphBuilder, Value, f32

UNARY = ("relu", "exp", "tanh", "sigmoid", "gelu", "neg")


def _weight(rng: np.random.Generator, b: GraphBuilder, *shape: int) -> Value:
    scale = 1.0 / np.sqrt(shape[0]) if len(shape) > 1 else 0.1
    return b.const((rng.normal(size=shape) * scale).astype(np.float32))


def chain_graph(seed: int, rows: int = 64, cols: int = 256, segments: int = 3) -> Graph:
    """Elementwise chains cut by matmuls and row reductions, with a side branch.

    Each segment is 2..4 cheap ops (unary, scale by a scalar, add a bias or the side input),
    then a matmul or a row sum that ends the chain.
    """
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"chains{seed}")
    x = b.input((rows, cols), f32, "x")
    skip = b.input((rows, cols), f32, "skip")
    h = x
    for s in range(segments):
        for _ in range(int(rng.integers(2, 5))):
            kind = int(rng.integers(4))
            if kind == 0:
                h = b.op(str(rng.choice(UNARY)), h)
            elif kind == 1:
                h = b.op("mul", h, b.const(float(rng.uniform(0.5, 1.5))))
            elif kind == 2:
                h = b.op("add", h, _weight(rng, b, cols))
            else:
                h = b.op("add", h, skip)
        if s < segments - 1:
            if rng.random() < 0.5:
                h = b.op("matmul", h, _weight(rng, b, cols, cols))
            else:
                h = b.op("sub", h, b.op("mean", h, axes=(-1,), keepdims=True))
    return b.build(b.op("tanh", h))


def epilogue_graph(seed: int, rows: int, d: int, h: int, layers: int = 2, extra: int = 0) -> Graph:
    """``layers`` dense layers ``act(x @ W + b)``, then a residual scale.

    Big weights (``d * h * 4`` bytes near the chip's tile window) make a fused
    matmul-plus-epilogue kernel too large for SRAM: the trap of over-fusion. ``extra``: up to
    that many more elementwise ops after each activation (drawn from the seed).
    """
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"dense{seed}")
    x = b.input((rows, d), f32, "x")
    t = x
    width = d
    for i in range(layers):
        out = h if i % 2 == 0 else d
        t = b.op("add", b.op("matmul", t, _weight(rng, b, width, out)), _weight(rng, b, out))
        t = b.op(str(rng.choice(("relu", "gelu", "sigmoid"))), t)
        for _ in range(int(rng.integers(extra + 1)) if extra else 0):
            t = b.op(str(rng.choice(UNARY)), t)
        width = out
    if width == d:
        t = b.op("add", t, x)
    return b.build(b.op("mul", t, b.const(0.5)))


def transformer_graph(
    seed: int, seq: int = 64, d: int = 64, ff: int = 256, act: str = "gelu", extra: float = 0.0
) -> Graph:
    """A pre-norm transformer block with one attention head (weights are constants).

    ``act``: the MLP's activation; ``extra``: the chance that a linear layer is followed by
    one more elementwise op (drawn from the seed).
    """
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"transformer{seed}")
    x = b.input((seq, d), f32, "x")

    def linear(t: Value, n_in: int, n_out: int) -> Value:
        y = b.op("add", b.op("matmul", t, _weight(rng, b, n_in, n_out)), _weight(rng, b, n_out))
        if extra and rng.random() < extra:
            y = b.op(str(rng.choice(UNARY)), y)
        return y

    n1 = b.op("layernorm", x)
    q, k, v = linear(n1, d, d), linear(n1, d, d), linear(n1, d, d)
    s = b.op("mul", b.op("matmul", q, b.op("transpose", k)), b.const(float(1 / np.sqrt(d))))
    a = b.op("matmul", b.op("softmax", s, axis=-1), v)
    h = b.op("add", x, linear(a, d, d))
    m = linear(b.op(act, linear(b.op("layernorm", h), d, ff)), ff, d)
    return b.build(b.op("add", h, m))


def cnn_graph(
    seed: int,
    size: int = 16,
    channels: tuple[int, ...] = (3, 16, 32),
    batch: int = 8,
    acts: tuple[str, ...] = (),
) -> Graph:
    """Conv + bias + activation layers, a global average pool and a classifier (NHWC images).

    Kernels tile over the batch, so a batch of several images lets fused kernels stream.
    ``acts``: each layer's activation (default: relu everywhere).
    """
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"cnn{seed}")
    t = b.input((batch, size, size, channels[0]), f32, "image")
    for k, (cin, cout) in enumerate(zip(channels[:-1], channels[1:], strict=True)):
        t = b.op("conv2d", t, _weight(rng, b, 3, 3, cin, cout), padding="same")
        t = b.op(acts[k] if acts else "relu", b.op("add", t, _weight(rng, b, cout)))
    pooled = b.op("reshape", b.op("mean", t, axes=(1, 2)), shape=(batch, channels[-1]))
    logits = b.op("matmul", pooled, _weight(rng, b, channels[-1], 10))
    logits = b.op("add", logits, _weight(rng, b, 10))
    return b.build(b.op("softmax", logits, axis=-1))


# -- hidden-instance families: a seed picks shapes and structure ---------------------------------
# The grader draws each hidden instance's seed from its secret (:mod:`.hidden`). Each family
# varies the *structure* (op sequence, activations, shapes) with the seed, not only the
# weights: a fusion answer depends on structure, and a family with few structures could be
# solved offline, all of it, with the reference passes.
#
# The k-th hidden instance of a part is drawn from *stratum* k of its family: the dimensions
# that decide how hard an instance is (its size against the SRAM, its depth) follow the
# stratum, the rest follows the seed. Every submission then meets the same spread of sizes,
# and a score moves little with the draw (stratified sampling); without a stratum, a family
# draws everything from the seed.
def _rng(seed: int, family: int) -> np.random.Generator:
    return np.random.default_rng([seed, family])


def _stratum(table: tuple, stratum: int | None, rng: np.random.Generator) -> tuple:
    """Row ``stratum`` of ``table`` (cycling), or a random row when there is no stratum."""
    return table[int(rng.integers(len(table))) if stratum is None else stratum % len(table)]


#: The strata of the families: the dimensions that decide how an instance behaves.
CHAIN_STRATA = ((128, 128), (192, 192), (256, 256), (320, 256), (384, 320), (448, 384))
DENSE_STRATA = ((128, 96, 192), (192, 128, 384), (256, 128, 1024), (128, 160, 1536),
                (320, 96, 2048), (256, 192, 576))  # fmt: skip
TRANSFORMER_STRATA = ((32, 64), (64, 96), (96, 128), (128, 160))  # (d, seq)
CNN_STRATA = ((2, 16), (3, 12), (3, 16), (4, 8))  # (layers, image size)
SCRATCHPAD_STRATA = ((64, 160), (96, 128), (96, 160), (128, 192))  # (d, seq)
TIGHT_STRATA = (40, 48, 56, 64)  # buffers


def chain_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`chain_graph` with a size from :data:`CHAIN_STRATA` and a seeded length and ops."""
    rng = _rng(seed, 1)
    rows, cols = _stratum(CHAIN_STRATA, stratum, rng)
    return chain_graph(seed, rows, cols, int(rng.integers(3, 6)))


def epilogue_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`epilogue_graph` with seeded shapes, depth and extra epilogue ops; the widths
    straddle the SRAM budget, so some epilogues fit and some spill."""
    rng = _rng(seed, 2)
    rows, d, h = _stratum(DENSE_STRATA, stratum, rng)
    return epilogue_graph(seed, rows, d, h, int(rng.integers(2, 5)), extra=2)


def transformer_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`transformer_graph` with a size from :data:`TRANSFORMER_STRATA` and a seeded MLP
    width, activation and extra elementwise ops."""
    rng = _rng(seed, 3)
    d, seq = _stratum(TRANSFORMER_STRATA, stratum, rng)
    seq += 16 * int(rng.integers(0, 3))
    ff = d * int(rng.integers(2, 5))
    act = str(rng.choice(("gelu", "relu", "sigmoid", "tanh")))
    return transformer_graph(seed, seq, d, ff, act, extra=0.5)


def cnn_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`cnn_graph` with a depth and image size from :data:`CNN_STRATA` and seeded
    widths, batch and activations."""
    rng = _rng(seed, 4)
    layers, size = _stratum(CNN_STRATA, stratum, rng)
    widths = tuple(8 * int(rng.integers(1, 7)) for _ in range(layers))
    acts = tuple(str(rng.choice(("relu", "gelu", "sigmoid", "tanh"))) for _ in range(layers))
    batch = 8 * int(rng.integers(1, 5))
    return cnn_graph(seed, size, (3, *widths), batch, acts)


def mobilenet_variant_records(seed: int) -> list:
    """Usage records of a MobileNet-v1-shaped chain with seeded resolution, widths and strides."""
    from chipsim.passes.memory.instances import network_records

    rng, fp32 = _rng(seed, 5), 4
    res = 32 * int(rng.integers(3, 8))
    hw, c = res // 2, 8 * int(rng.integers(2, 6))
    layers = [("input", res * res * 3 * fp32, []), ("conv1", hw * hw * c * fp32, ["input"])]
    for k in range(2, 2 + int(rng.integers(8, 15))):
        stride = 2 if hw > 4 and rng.random() < 0.3 else 1
        hw //= stride
        cout = 8 * int(rng.integers(2, 17))
        layers.append((f"dw{k}", hw * hw * c * fp32, [layers[-1][0]]))
        layers.append((f"pw{k}", hw * hw * cout * fp32, [layers[-1][0]]))
        c = cout
    layers.append(("avgpool", c * fp32, [layers[-1][0]]))
    layers.append(("fc", 1000 * fp32, ["avgpool"]))
    return network_records(layers)


def tight_records(seed: int, n: int = 60, quantum: int = 64) -> list:
    """A tight arena: ``n`` buffers cut from a full rectangle, then about a third of them made
    smaller by a few quanta, in a shuffled order under fresh names.

    The cut rectangle alone would plant its optimum (the rectangle's height) and, with it, a
    packing that replaying the cuts recovers; the shrunk buffers leave holes where no cut
    was, so neither the optimum nor the packing follows from how the instance was made. The
    lower bound still says how far any plan could go.
    """
    from chipsim.passes.memory.liveness import UsageRecord
    from chipsim.testing.memory_instances import packed_instance

    rng = _rng(seed, 6)
    records = []
    for r in packed_instance(n, seed=int(rng.integers(2**63)), quantum=quantum):
        quanta = r.size // quantum
        if quanta > 1 and rng.random() < 0.35:
            quanta -= int(rng.integers(1, max(2, quanta // 3 + 1)))
        records.append((quanta * quantum, r.first, r.last))
    order = rng.permutation(len(records))
    return [UsageRecord(f"t{k}", *records[i]) for k, i in enumerate(order)]


def tight_variant(seed: int, stratum: int | None = None) -> list:
    """:func:`tight_records` with a number of buffers from :data:`TIGHT_STRATA`."""
    return tight_records(seed, _stratum(TIGHT_STRATA, stratum, _rng(seed, 7)))


def scratchpad_variant(seed: int, stratum: int | None = None) -> Graph:
    """A transformer block whose activations outgrow the SRAM arena (the memory challenge's
    cycles instances): a size from :data:`SCRATCHPAD_STRATA`, seeded MLP width and act."""
    rng = _rng(seed, 8)
    d, seq = _stratum(SCRATCHPAD_STRATA, stratum, rng)
    act = str(rng.choice(("gelu", "relu", "sigmoid", "tanh")))
    return transformer_graph(seed, seq, d, d * int(rng.integers(2, 5)), act, extra=0.5)
