"""Seeded random weights, the same whether a model runs eagerly or is traced into a graph.

Each weight is drawn from its own generator, seeded by the model's seed and the weight's name,
so a model's weights never depend on the order it asks for them, and nothing is downloaded.
Traced, a weight becomes one ``constant`` node (named after the weight) however often it is
used: GPT-2's tied embedding is one constant read by the lookup and by the output layer.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from chipsim.frontend.eager import tensor
from chipsim.frontend.tracing import SymbolicTensor

BUFFER = "buffer."  # the name prefix of constants that are not learned parameters


class Params:
    """The weights of one model instance; ``like`` is any tensor of the run (eager or traced)."""

    def __init__(self, seed: int, like: Any) -> None:
        self.seed = seed
        self.tracer = like.tracer if isinstance(like, SymbolicTensor) else None
        self.cache: dict[str, Any] = {}

    def _draw(self, name: str, shape: tuple[int, ...], kind: str, fan_in: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, zlib.crc32(name.encode())])
        noise = rng.standard_normal(shape, dtype=np.float32)
        if kind == "weight":  # variance-preserving, so activations stay O(1) through the depth
            return noise * np.float32(1.0 / np.sqrt(max(fan_in, 1)))
        if kind == "one":  # norm scales and variances: near 1, positive
            return (1.0 + 0.1 * np.abs(noise)).astype(np.float32)
        if kind == "embedding":
            return noise * np.float32(0.5)
        return noise * np.float32(0.05)  # biases and means: small

    def buffer(self, name: str, array: np.ndarray) -> Any:
        """A constant that is not learned (a causal mask): named ``buffer.<name>`` in graphs,
        so :func:`chipsim.models.summary` does not count it as a parameter."""
        key = f"{BUFFER}{name}"
        if key not in self.cache:
            self.cache[key] = self._wrap(key, np.asarray(array, np.float32))
        return self.cache[key]

    def _wrap(self, name: str, array: np.ndarray) -> Any:
        if self.tracer is None:
            return tensor(array)
        value = self.tracer.builder.const(array, hint=name)
        return SymbolicTensor(value, self.tracer)

    def get(self, name: str, shape: tuple[int, ...], kind: str = "weight", fan_in: int = 0) -> Any:
        """The weight ``name`` as a tensor of this run (created on first use)."""
        if name not in self.cache:
            array = self._draw(name, shape, kind, fan_in or int(np.prod(shape[:-1])))
            self.cache[name] = self._wrap(name, array)
        return self.cache[name]
