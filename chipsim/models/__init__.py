"""Published networks built with chipsim's own front end, with seeded random weights.

Each builder returns a traced :class:`~chipsim.ir.Graph` of the published configuration by
default; its keyword knobs shrink it for tests and exercises. :func:`eager` returns the same
model (same weights) as a function that runs op by op on the current device.

=================  ===================================  ==========================
builder            published configuration              graph input
=================  ===================================  ==========================
``resnet18``       224 x 224 NHWC, 1000 classes          f32[batch, 224, 224, 3]
``mobilenet_v2``   width 1.0, 224 x 224, 1000 classes    f32[batch, 224, 224, 3]
``bert_base``      12 layers, 768 wide, seq 128, pooler  i32[batch, 128] token ids
``gpt2_small``     12 layers, 768 wide, seq 128, tied    i32[batch, 128] token ids
=================  ===================================  ==========================

Example:
    >>> import chipsim.models as models
    >>> g = models.resnet18(image=32, width=8, num_classes=10)
    >>> g.inputs[0].type
    f32[1, 32, 32, 3]
"""

from chipsim.models.measure import ModelRun, measure
from chipsim.models.records import activation_records
from chipsim.models.summary import ModelSummary, parameters, summary
from chipsim.models.zoo import (
    MODELS,
    NETWORKS,
    bert_base,
    build,
    eager,
    example_input,
    gpt2_small,
    input_type,
    mobilenet_v2,
    resnet18,
)

__all__ = [
    "MODELS",
    "ModelRun",
    "NETWORKS",
    "ModelSummary",
    "activation_records",
    "bert_base",
    "build",
    "eager",
    "example_input",
    "gpt2_small",
    "input_type",
    "measure",
    "mobilenet_v2",
    "parameters",
    "resnet18",
    "summary",
]
