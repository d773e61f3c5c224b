"""Benchmark instances for memory planners, all generated from a seed or a paper's table.

* :func:`mobilenet_v1_records`, :func:`mobilenet_v2_records`: the activations of MobileNet v1
  (Howard et al. 2017, Table 1) and v2 (Sandler et al. 2018, Table 2) at 224 x 224, fp32, one
  tensor per layer (batch norm and ReLU fused into the convolution). v2's residual connections
  keep a block's input alive until the add at its end.
* :func:`packed_instance`: cut a fully packed ``height`` bytes x ``steps`` rectangle into
  buffers by recursive guillotine cuts. Every step is exactly full, so the optimum arena is
  ``height`` and it equals the lower bound.
* :func:`random_records`: loose random lifetimes and sizes, for property tests.

Example:
    >>> from chipsim.passes.memory.bounds import lower_bound
    >>> recs = packed_instance(100, seed=0)
    >>> len(recs), lower_bound(recs) == 64 * 1024
    (100, True)
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from chipsim.errors import PlanError
from chipsim.passes.memory.liveness import UsageRecord, records_from_uses

FP32 = 4

# (expansion t, output channels c, repeats n, first stride s): MobileNet v2, Table 2.
_V2_BOTTLENECKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                   (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]  # fmt: skip


def network_records(layers: Sequence[tuple[str, int, Sequence[str]]]) -> list[UsageRecord]:
    """Usage records of a network given as ``(name, bytes, input names)`` per layer.

    The first layer is the network input (no inputs, live from step 0); layer ``k >= 1`` runs
    at step ``k - 1``. The last layer is the output. Same liveness rule as graphs.
    """
    step = {name: k - 1 for k, (name, _, _) in enumerate(layers)}
    uses: dict[str, list[int]] = {name: [] for name, _, _ in layers}
    for name, _, inputs in layers:
        for src in inputs:
            if src not in uses:
                raise PlanError(f"layer {name!r} reads {src!r}, which is not defined before it")
            uses[src].append(step[name])
    last = layers[-1][0]
    tensors = [
        (name, size, max(step[name], 0), uses[name], name == last) for name, size, _ in layers
    ]
    return records_from_uses(tensors, len(layers) - 1)


def mobilenet_v1_records(resolution: int = 224) -> list[UsageRecord]:
    """MobileNet v1 (width 1.0) activations: a plain chain of 30 layers after the input."""
    hw, c = resolution // 2, 32
    layers = [
        ("input", resolution * resolution * 3 * FP32, []),
        ("conv1", hw * hw * c * FP32, ["input"]),
    ]
    # (stride of the depthwise conv, output channels of the pointwise conv), Table 1.
    blocks = [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512)]
    blocks += [(1, 512)] * 5 + [(2, 1024), (1, 1024)]
    for k, (stride, cout) in enumerate(blocks, start=2):
        hw //= stride
        layers.append((f"dw{k}", hw * hw * c * FP32, [layers[-1][0]]))
        layers.append((f"pw{k}", hw * hw * cout * FP32, [layers[-1][0]]))
        c = cout
    layers.append(("avgpool", c * FP32, [layers[-1][0]]))
    layers.append(("fc", 1000 * FP32, ["avgpool"]))
    layers.append(("softmax", 1000 * FP32, ["fc"]))
    return network_records(layers)


def mobilenet_v2_records(resolution: int = 224) -> list[UsageRecord]:
    """MobileNet v2 (width 1.0) activations, with the inverted-residual skip connections.

    A bottleneck is expand (1x1, t*c channels; absent when t = 1), depthwise 3x3 (stride s),
    project (1x1, linear). When the stride is 1 and the channels match, an ``add`` sums the
    projection with the block input, so that input stays live through the whole block.
    """
    hw, c = resolution // 2, 32
    layers: list[tuple[str, int, list[str]]] = [
        ("input", resolution * resolution * 3 * FP32, []),
        ("conv1", hw * hw * c * FP32, ["input"]),
    ]
    block = 0
    for t, cout, repeats, first_stride in _V2_BOTTLENECKS:
        for r in range(repeats):
            block += 1
            stride = first_stride if r == 0 else 1
            x = layers[-1][0]
            prev = x
            if t != 1:
                layers.append((f"b{block}_expand", hw * hw * c * t * FP32, [prev]))
                prev = layers[-1][0]
            hw //= stride
            layers.append((f"b{block}_dw", hw * hw * c * t * FP32, [prev]))
            layers.append((f"b{block}_project", hw * hw * cout * FP32, [layers[-1][0]]))
            if stride == 1 and c == cout:
                layers.append((f"b{block}_add", hw * hw * cout * FP32, [layers[-1][0], x]))
            c = cout
    layers.append(("conv_last", hw * hw * 1280 * FP32, [layers[-1][0]]))
    layers.append(("avgpool", 1280 * FP32, ["conv_last"]))
    layers.append(("classifier", 1000 * FP32, ["avgpool"]))
    return network_records(layers)


def packed_instance(
    n: int, seed: int = 0, *, steps: int | None = None, height: int | None = None, quantum: int = 64
) -> list[UsageRecord]:
    """``n`` buffers that tile a ``height`` x ``steps`` rectangle exactly (optimum = ``height``).

    Start from the whole rectangle; repeatedly take a piece (larger ones more likely) and cut it
    in two, across time or across addresses, at a random point. Address cuts fall on multiples
    of ``quantum`` bytes so that, with alignment ``quantum``, nothing is rounded up.

    Args:
        n: number of buffers (pieces).
        seed: seed of the random cuts.
        steps: time span (default ``n``).
        height: arena height in bytes (default ``quantum * 1024``).
        quantum: the address granularity of cuts, in bytes.
    """
    steps = n if steps is None else steps
    height = quantum * 1024 if height is None else height
    if height % quantum or n < 1 or steps < 1:
        raise PlanError(f"packed_instance needs n, steps >= 1 and height a multiple of {quantum}")
    rng = random.Random(seed)
    pieces = [(0, steps, 0, height // quantum)]  # (t0, t1, a0, a1), addresses in quanta
    while len(pieces) < n:
        weights = [(t1 - t0) * (a1 - a0) for t0, t1, a0, a1 in pieces]
        k = rng.choices(range(len(pieces)), weights=weights)[0]
        t0, t1, a0, a1 = pieces[k]
        cut_time = rng.random() < (t1 - t0) / ((t1 - t0) + (a1 - a0) * steps / (height // quantum))
        if cut_time and t1 - t0 >= 2:
            m = rng.randrange(t0 + 1, t1)
            pieces[k : k + 1] = [(t0, m, a0, a1), (m, t1, a0, a1)]
        elif a1 - a0 >= 2:
            m = rng.randrange(a0 + 1, a1)
            pieces[k : k + 1] = [(t0, t1, a0, m), (t0, t1, m, a1)]
        elif t1 - t0 >= 2:
            m = rng.randrange(t0 + 1, t1)
            pieces[k : k + 1] = [(t0, m, a0, a1), (m, t1, a0, a1)]
        elif not any(p[1] - p[0] >= 2 or p[3] - p[2] >= 2 for p in pieces):
            raise PlanError(f"cannot cut a {steps} x {height} B rectangle into {n} buffers")
    # Shuffle so that record order gives no hint of the packing.
    rng.shuffle(pieces)
    return [
        UsageRecord(f"b{k}", (a1 - a0) * quantum, t0, t1)
        for k, (t0, t1, a0, a1) in enumerate(pieces)
    ]


def random_records(
    n: int, seed: int = 0, *, steps: int = 50, max_size: int = 5000
) -> list[UsageRecord]:
    """``n`` records with random lifetimes in ``[0, steps)`` and sizes in ``[1, max_size]``."""
    rng = random.Random(seed)
    records = []
    for k in range(n):
        first = rng.randrange(steps)
        last = rng.randrange(first + 1, steps + 1)
        records.append(UsageRecord(f"t{k}", rng.randint(1, max_size), first, last))
    return records
