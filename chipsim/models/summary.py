"""``summary(graph)``: what a model is made of — parameters, MACs, activations, op patterns."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from chipsim.i18n import listing, tr
from chipsim.ir.graph import Graph, Value
from chipsim.ir.ops import Pattern, check_attrs, get_op
from chipsim.ir.ops.batch_norm import STATISTICS
from chipsim.models.params import BUFFER


def parameters(graph: Graph) -> dict[Value, int]:
    """The learned parameters: constants of more than one element, each counted once however
    many nodes read it, except batch norm's running statistics and constants named as
    buffers (``buffer.*``, e.g. a causal mask): they are not learned."""
    users = graph.users()
    out: dict[Value, int] = {}
    for node in graph.nodes:
        if not node.is_constant or node.type.numel <= 1:
            continue  # a scalar literal (a scale, an epsilon) is not a parameter
        v = node.output
        if v.hint.startswith(BUFFER):
            continue  # a named constant that is not learned (a causal mask)
        statistic = users[v] and all(
            u.op == "batch_norm" and all(i in STATISTICS for i, x in enumerate(u.inputs) if x is v)
            for u in users[v]
        )
        if not statistic:
            out[v] = node.type.numel
    return out


@dataclass(frozen=True)
class ModelSummary:
    """Totals of one graph (see :func:`summary`)."""

    name: str
    params: int
    macs: int  # multiply-accumulates of the contractions
    flops: int  # all FLOPs, contractions and the rest
    activation_bytes: int  # bytes of every value the nodes compute (weights excluded)
    weight_bytes: int  # bytes of all constants
    patterns: dict[str, int]  # nodes per pattern class (constants excluded)

    def __str__(self) -> str:
        pats = listing(f"{tr(k)} {v}" for k, v in self.patterns.items())
        return tr(
            "{name}: {params:,} parameters, {gmacs:.3f} G MACs, {gflop:.3f} GFLOP, "
            "activations {act:.1f} MiB, weights {weights:.1f} MiB\n  ops by pattern: {patterns}",
            name=self.name,
            params=self.params,
            gmacs=self.macs / 1e9,
            gflop=self.flops / 1e9,
            act=self.activation_bytes / 2**20,
            weights=self.weight_bytes / 2**20,
            patterns=pats,
        )


def summary(graph: Graph) -> ModelSummary:
    """Parameters, MACs, activation bytes and ops by pattern class of ``graph``.

    Example:
        >>> from chipsim.models import resnet18
        >>> s = summary(resnet18())
        >>> s.params, round(s.macs / 1e9, 2)
        (11689512, 1.81)
    """
    macs = flops = act = weights = 0
    patterns: Counter[str] = Counter()
    for node in graph.nodes:
        opdef = get_op(node.op)
        if node.is_constant:
            weights += node.type.nbytes
            continue
        ins = [v.type for v in node.inputs]
        attrs = check_attrs(opdef, node.attrs)
        f = int(opdef.flops(ins, node.type, attrs))
        flops += f
        if opdef.contraction is not None:
            c = opdef.contraction(ins, node.type, attrs)
            macs += c.batch * c.m * c.k * c.n
        act += node.type.nbytes if opdef.moves_data else 0
        patterns[str(opdef.pattern)] += 1
    order = {str(p): p.value for p in Pattern}
    pats = dict(sorted(patterns.items(), key=lambda kv: order[kv[0]]))
    total = sum(parameters(graph).values())
    return ModelSummary(graph.name, total, macs, flops, act, weights, pats)
