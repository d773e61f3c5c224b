"""Convolutional image classifiers, NHWC: ResNet-18 and MobileNetV2 (torchvision's layouts).

Published configurations are the defaults; ``width``, ``image`` and ``batch`` shrink them.
"""

from __future__ import annotations

from typing import Any

import chipsim as cs
from chipsim.models.layers import conv_bn, global_avg_pool, linear
from chipsim.models.params import Params


def resnet18_forward(p: Params, x: Any, width: int = 64, num_classes: int = 1000) -> Any:
    """ResNet-18 (He et al. 2016): a 7x7 stem, four stages of two basic blocks, a classifier."""
    y = cs.ops.relu(conv_bn(p, "conv1", x, width, 7, stride=2))
    y = cs.ops.max_pool2d(y, window=3, stride=2, padding=1)
    for stage in range(4):
        cout = width * 2**stage
        for block in range(2):
            name = f"layer{stage + 1}.{block}"
            stride = 2 if stage > 0 and block == 0 else 1
            h = cs.ops.relu(conv_bn(p, f"{name}.conv1", y, cout, 3, stride))
            h = conv_bn(p, f"{name}.conv2", h, cout, 3)
            if stride != 1 or y.shape[-1] != cout:
                y = conv_bn(p, f"{name}.downsample", y, cout, 1, stride)
            y = cs.ops.relu(h + y)
    return linear(p, "fc", global_avg_pool(y), num_classes)


def make_divisible(v: float, divisor: int = 8) -> int:
    """Channel counts rounded as in the MobileNetV2 reference code (never down by > 10%)."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


# expansion t, output channels c, repeats n, first stride s (Sandler et al. 2018, table 2)
MOBILENET_V2_BLOCKS = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


def mobilenet_v2_forward(p: Params, x: Any, width: float = 1.0, num_classes: int = 1000) -> Any:
    """MobileNetV2: inverted residual blocks of 1x1 expand, 3x3 depthwise, 1x1 project."""
    cin = make_divisible(32 * width)
    y = cs.ops.clip(conv_bn(p, "features.0", x, cin, 3, stride=2))
    index = 1
    for t, c, n, s in MOBILENET_V2_BLOCKS:
        cout = make_divisible(c * width)
        for i in range(n):
            name, stride = f"features.{index}", s if i == 0 else 1
            hidden = cin * t
            h = y
            if t != 1:
                h = cs.ops.clip(conv_bn(p, f"{name}.expand", h, hidden, 1))
            h = cs.ops.clip(conv_bn(p, f"{name}.depthwise", h, hidden, 3, stride, groups=hidden))
            h = conv_bn(p, f"{name}.project", h, cout, 1)
            y = h + y if stride == 1 and cin == cout else h
            cin, index = cout, index + 1
    last = make_divisible(1280 * max(1.0, width))
    y = cs.ops.clip(conv_bn(p, f"features.{index}", y, last, 1))
    return linear(p, "classifier", global_avg_pool(y), num_classes)
