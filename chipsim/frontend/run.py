"""How a jitted function's graph runs: on the current device, as one program."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from chipsim.frontend.device import current_device
from chipsim.ir.graph import Graph
from chipsim.ir.interpreter import interpret


def run_graph(graph: Graph, args: Sequence[Any]) -> list[np.ndarray]:
    """Run ``graph`` as a whole on the current device.

    A device that can run whole graphs (the simulated chip compiles them) implements
    ``run_graph``; the host device interprets the graph with numpy.
    """
    arrays = [np.asarray(a.numpy() if hasattr(a, "numpy") else a) for a in args]
    runner = getattr(current_device(), "run_graph", None)
    if runner is not None:
        return list(runner(graph, arrays))
    return interpret(graph, *arrays)
