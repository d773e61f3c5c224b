"""The book graphs of the HLO fixtures (tests/xla/hlo/), by name, without importing JAX."""

from __future__ import annotations

import numpy as np

import chipsim as cs
from chipsim.workloads.blocks import cnn_graph


def fixture_graphs() -> dict[str, cs.Graph]:
    """``(x + 1) * 2``, the layer ``relu(W @ x + b)`` of section 4.3, and the small CNN."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 256)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    return {
        "add_mul": cs.trace(lambda x: (x + 1) * 2, np.zeros(1024, np.float32)),
        "linear_relu": cs.trace(lambda x: cs.ops.relu(w @ x + b), np.zeros(256, np.float32)),
        "cnn": cnn_graph(0),
    }


def compiled_graph(name: str) -> cs.Graph:
    """The graph both compilers see: chipsim's graph of ``name`` after simplification."""
    return cs.compile(fixture_graphs()[name], chip="cpu-simd").graph
