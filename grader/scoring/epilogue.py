"""The grader's reference for the epilogue part: chains plus matmul epilogues within SRAM.

This is the rule the exercise teaches, written once for the grader: walk the ops from last
to first; an op joins its single consumer's group when the op is elementwise, broadcast or a
contraction, the group holds only elementwise/broadcast ops, the op's result is not a graph
output, and a tile of :data:`MIN_TILE_ROWS` rows of the merged group still fits the half of
SRAM a kernel's tiles may use. Learners cannot import it (see :mod:`~grader.course.static_check`).

Example:
    >>> from chipsim.workloads.blocks import epilogue_graph
    >>> from chipsim.hw import get_chip
    >>> epilogue_fusion(epilogue_graph(0, 64, 32, 32, 1), get_chip("edge-npu")).groups
    ((1, 3, 4, 5, 7),)
"""

from __future__ import annotations

from typing import Any

from chipsim.ir import Graph, Pattern, get_op
from chipsim.passes.fusion import Partition, working_set_bytes
from chipsim.passes.fusion.reference import topological_groups, users_of

#: Every function here is the reference solution of an exercise (chipsim.reference).
__reference_for__ = ("fusion",)

#: Rows a tile must hold for a fused group to count as fitting.
MIN_TILE_ROWS = 8
CHEAP = (Pattern.ELEMENTWISE, Pattern.BROADCAST)


def epilogue_fusion(graph: Graph, chip: Any) -> Partition:
    """Elementwise chains plus contraction epilogues, never beyond the tile budget."""
    budget = chip.sram.capacity_bytes // 2
    users = users_of(graph)
    outputs = set(graph.outputs)
    group_of: dict[int, list[int]] = {}
    for i in reversed(range(len(graph.nodes))):
        node = graph.nodes[i]
        if node.op == "constant":
            continue
        target = group_of.get(users[i][0]) if len(users[i]) == 1 else None
        joins = (
            target is not None
            and node.output not in outputs
            and get_op(node.op).pattern in (*CHEAP, Pattern.CONTRACTION)
            and all(get_op(graph.nodes[j].op).pattern in CHEAP for j in target)
            and working_set_bytes(graph, sorted([*target, i]), MIN_TILE_ROWS) <= budget
        )
        if joins:
            target.append(i)
            group_of[i] = target
        else:
            group_of[i] = [i]
    unique = {id(g): tuple(sorted(g)) for g in group_of.values()}
    return topological_groups(graph, list(unique.values()))
