"""The four published networks by name: their input types, builders and eager versions
(:mod:`chipsim.models` exports them)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from chipsim.frontend.tracing import trace
from chipsim.ir.graph import Graph
from chipsim.ir.types import TensorType
from chipsim.models.language import bert_forward, gpt2_forward
from chipsim.models.params import Params
from chipsim.models.vision import mobilenet_v2_forward, resnet18_forward

# name -> (forward function, the graph input's type from the input knobs batch/image/seq)
_MODELS: dict[str, tuple[Callable[..., Any], Callable[..., TensorType]]] = {
    "resnet18": (
        resnet18_forward,
        lambda batch=1, image=224: TensorType((batch, image, image, 3), "f32"),
    ),
    "mobilenet_v2": (
        mobilenet_v2_forward,
        lambda batch=1, image=224: TensorType((batch, image, image, 3), "f32"),
    ),
    "bert_base": (bert_forward, lambda batch=1, seq=128: TensorType((batch, seq), "i32")),
    "gpt2_small": (gpt2_forward, lambda batch=1, seq=128: TensorType((batch, seq), "i32")),
}
_INPUT_KNOBS = ("batch", "image", "seq")


def _split(knobs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    shape = {k: v for k, v in knobs.items() if k in _INPUT_KNOBS}
    return shape, {k: v for k, v in knobs.items() if k not in _INPUT_KNOBS}


def input_type(name: str, **knobs: Any) -> TensorType:
    """The graph input's type of model ``name`` under ``knobs``."""
    return _MODELS[name][1](**_split(knobs)[0])


def example_input(name: str, seed: int = 0, **knobs: Any) -> np.ndarray:
    """Random inputs for model ``name``: an image batch, or token ids below its vocabulary."""
    t = input_type(name, **knobs)
    rng = np.random.default_rng(seed)
    if t.dtype.kind == "int":
        vocab = knobs.get("vocab", 30522 if name == "bert_base" else 50257)
        return rng.integers(0, vocab, t.shape).astype(np.int32)
    return rng.standard_normal(t.shape).astype(np.float32)


def build(name: str, seed: int = 0, **knobs: Any) -> Graph:
    """Trace model ``name`` (one of :data:`MODELS`) with ``knobs`` into a graph."""
    if name not in _MODELS:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(_MODELS)}")
    forward, _ = _MODELS[name]
    config = _split(knobs)[1]

    def model(x: Any) -> Any:
        return forward(Params(seed, x), x, **config)

    return trace(model, input_type(name, **knobs), name=name)


def eager(name: str, seed: int = 0, **knobs: Any) -> Callable[[Any], Any]:
    """Model ``name`` as an eager function of a ``chipsim.tensor`` (the same weights as
    :func:`build` with the same seed and knobs; weights are made on the first call)."""
    forward, _ = _MODELS[name]
    config = _split(knobs)[1]
    holder: dict[str, Params] = {}

    def run(x: Any) -> Any:
        if "p" not in holder:
            holder["p"] = Params(seed, x)
        return forward(holder["p"], x, **config)

    return run


MODELS = tuple(_MODELS)
resnet18 = functools.partial(build, "resnet18")
mobilenet_v2 = functools.partial(build, "mobilenet_v2")
bert_base = functools.partial(build, "bert_base")
gpt2_small = functools.partial(build, "gpt2_small")
#: builder name -> builder (each returns the published configuration's graph by default)
NETWORKS = {
    "resnet18": resnet18,
    "mobilenet_v2": mobilenet_v2,
    "bert_base": bert_base,
    "gpt2_small": gpt2_small,
}
