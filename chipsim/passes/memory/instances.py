"""Memory-planning instances from published networks' tables.

* :func:`mobilenet_v1_records`, :func:`mobilenet_v2_records`: the activations of MobileNet v1
  (Howard et al. 2017, Table 1) and v2 (Sandler et al. 2018, Table 2) at 224 x 224, fp32, one
  tensor per layer (batch norm and ReLU fused into the convolution). v2's residual connections
  keep a block's input alive until the add at its end.

The seeded generators (``packed_instance``, ``random_records`` and the benchmark families) live
in :mod:`chipsim.testing.memory_instances`.

Example:
    >>> from chipsim.passes.memory.bounds import lower_bound
    >>> recs = mobilenet_v1_records()
    >>> len(recs), lower_bound(recs)
    (31, 4816896)
"""

from __future__ import annotations

from collections.abc import Sequence

from chipsim.errors import PlanError
from chipsim.i18n import tr
from chipsim.passes.memory.liveness import UsageRecord, records_from_uses

__all__ = [
    "mobilenet_v1_records",
    "mobilenet_v2_records",
    "network_records",
]

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
                raise PlanError(tr("layer {name!r} reads {src!r}, which is not defined before it",
                                   name=name, src=src))  # fmt: skip
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
