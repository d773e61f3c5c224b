"""Small networks the chapters and exercises build: seeded, deterministic graphs.

Each builder makes the same graph, weights included, on every machine for the same
arguments: a chain of elementwise ops cut by matmuls and row reductions, dense layers with
their epilogues, a pre-norm transformer block, a small convolutional network. The book's
chapters use them as examples; the course's grader draws its exercise instances from them.

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
