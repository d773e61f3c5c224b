"""Run a whole graph eagerly: one kernel per op on a :class:`ChipDevice`, frees in order.

This is what a framework's eager mode does with the same computation a compiler sees as a
graph: every op is launched on its own, its result gets a fresh block from the caching
allocator, and a tensor's block goes back to the cache as soon as its last user has run
(the moment Python would drop the last reference). The result is the baseline that
:func:`chipsim.compile` is measured against.

Example:
    >>> import numpy as np
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder(); x = b.input((4,), f32)
    >>> g = b.build(b.op("mul", b.op("add", x, b.const(1.0)), b.const(2.0)))
    >>> run = run_eager(g, np.ones(4, np.float32))
    >>> run.outputs[0].tolist(), [k.name for k in run.report.kernels]
    ([4.0, 4.0, 4.0, 4.0], ['add', 'mul'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsim.errors import ExecutionError
from chipsim.hw.chip import Chip
from chipsim.hw.isa import Instr
from chipsim.ir.graph import Graph, Value
from chipsim.runtime.device import ChipBuffer, ChipDevice
from chipsim.runtime.report import Report


@dataclass(frozen=True, eq=False)
class EagerRun:
    """The result of :func:`run_eager`: outputs (empty in timing-only mode), cost, device."""

    outputs: list[np.ndarray]
    report: Report
    device: ChipDevice

    @property
    def cycles(self) -> int:
        return self.report.cycles


def last_uses(graph: Graph) -> dict[Value, int]:
    """For each value read by a node, the index of the last node that reads it (from the
    graph's one edge list, :meth:`~chipsim.ir.Graph.users`)."""
    index = graph.node_index()
    return {v: index[readers[-1]] for v, readers in graph.users().items() if readers}


def run_eager(
    graph: Graph,
    *arrays: Any,
    chip: str | Chip | ChipDevice = "edge-npu",
    functional: bool = True,
    synchronous: bool = False,
) -> EagerRun:
    """Run ``graph`` node by node on an eager device (one kernel per op).

    Constants are uploaded when their node is reached (like a parameter created in Python);
    every tensor is released right after its last user, except the graph's outputs.

    Args:
        graph: the graph to run.
        *arrays: one array per graph input (ignored values, but required, when not
            ``functional``: pass ``np.zeros`` of the right shape).
        chip: a preset name, a :class:`Chip`, or an existing :class:`ChipDevice` to reuse.
        functional: compute values; ``False`` only measures time and memory.
        synchronous: the host waits for every kernel before it launches the next, as a
            CPU running numpy does (the host *is* the chip); the host calibration
            (:mod:`chipsim.calibration.host`) simulates numpy calls this way.

    Raises:
        ExecutionError: the number of arrays does not match the graph's inputs.
    """
    if len(arrays) != len(graph.inputs):
        raise ExecutionError(
            f"graph {graph.name} takes {len(graph.inputs)} inputs, got {len(arrays)} arrays"
        )
    dev = chip if isinstance(chip, ChipDevice) else ChipDevice(chip, functional=functional)
    env: dict[Value, ChipBuffer] = {}
    for v, a in zip(graph.inputs, arrays, strict=False):
        env[v] = dev.upload(np.asarray(a), v.type)
    last = last_uses(graph)
    keep = set(graph.outputs)
    for i, node in enumerate(graph.nodes):
        env[node.output] = dev.run(node, [env[v] for v in node.inputs])
        if synchronous:
            dev.sim.run([Instr("sync", "host", label="synchronize")])
        for v in dict.fromkeys(node.inputs):  # each input once, in order
            if last[v] == i and v not in keep:
                dev.release(env.pop(v), v.type)
        if node.output not in last and node.output not in keep:  # dead result
            dev.release(env.pop(node.output), node.output.type)
    outputs = []
    if dev.functional:
        outputs = [dev.download(env[v], v.type) for v in graph.outputs]
    return EagerRun(outputs, dev.report, dev)
