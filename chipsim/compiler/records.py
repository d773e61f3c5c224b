"""The tensors a compiled program keeps between kernels, as usage records for the planner."""

from __future__ import annotations

from chipsim.ir.graph import Graph, Value
from chipsim.passes.fusion import Partition
from chipsim.passes.fusion.boundary import kernel_boundary
from chipsim.passes.memory import UsageRecord
from chipsim.passes.memory.liveness import records_from_uses


def kernel_records(graph: Graph, partition: Partition) -> tuple[list[UsageRecord], list[Value]]:
    """Usage records of the activations a compiled program keeps between kernels.

    Step 0 loads the graph inputs; step ``k + 1`` runs kernel ``k`` of ``partition``.
    Planned tensors: graph inputs read by a kernel, and values one kernel produces and a
    later kernel reads. Graph outputs go to DRAM and constants are weights, so neither is
    planned. Lifetimes follow :data:`chipsim.passes.memory.INTERVAL_CONVENTION`.

    Returns:
        The records (ids are the values' print names) and the planned values, in order.
    """
    names = graph.names()
    group_of = {i: g for g, group in enumerate(partition.groups) for i in group}
    producer_step = {graph.nodes[i].output: g + 1 for i, g in group_of.items()}
    uses: dict[Value, list[int]] = {}
    for g, group in enumerate(partition.groups):  # what each kernel reads from outside it
        for v in kernel_boundary(graph, group).reads:
            uses.setdefault(v, []).append(g + 1)
    outputs = set(graph.outputs)
    planned = [v for v in graph.inputs if v in uses and v not in outputs]
    planned += [
        graph.nodes[i].output
        for i in sorted(group_of)
        if graph.nodes[i].output in uses and graph.nodes[i].output not in outputs
    ]
    born = {v: 0 for v in graph.inputs} | producer_step
    tensors = [(names[v], v.type.nbytes, born[v], uses[v], False) for v in planned]
    return records_from_uses(tensors, len(partition.groups) + 1), planned
