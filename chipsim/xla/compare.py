"""XLA's kernels beside chipsim's fusion groups, for the same graph.

:func:`compare_fusion` compiles a graph twice — with :func:`chipsim.compile` for a chip and
with XLA through JAX — and lines the two partitions up node by node:

* a chipsim **group** is a set of graph nodes that run as one kernel;
* an XLA **kernel** is a working instruction of the optimised HLO's entry
  (:meth:`~chipsim.xla.hlo.HloModule.kernels`); the graph nodes it holds are read from the
  ``cs<i>_<op>`` scopes in its metadata (:mod:`chipsim.xla.bridge`). XLA drops the metadata
  of a few instructions it rewrites, so two rules fill the gaps: a contraction kernel left
  without any node gets the first contraction node of its output size that no kernel holds
  (jax 0.10's matrix-vector ``dot``), and a computing node that no metadata names joins the
  kernel of its consumer, else of its producer (jax 0.4's oneDNN matmul, named after the
  bias add fused into it).

A graph node may be in no XLA kernel (a ``reshape`` XLA turned into a ``bitcast``: free), in
one, or in several (XLA splits a ``layernorm`` into its reductions, and recomputes a cheap
elementwise op inside each consumer rather than storing it).

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder(); x = b.input((4,), f32)
    >>> g = b.build(b.op("mul", b.op("add", x, b.const(1.0)), b.const(2.0)))
    >>> chipsim_groups(cs.compile(g, chip="cpu-simd"))
    ((1, 3),)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import chipsim as cs
from chipsim.ir.graph import Graph
from chipsim.ir.ops import Pattern, get_op
from chipsim.runtime.program import Program
from chipsim.xla.bridge import compile_xla, node_of, to_jax
from chipsim.xla.hlo import HloModule, Kernel, parse_hlo

CONTRACTION_OPCODES = ("dot", "convolution")


@dataclass(frozen=True, slots=True)
class XlaKernel:
    """One XLA kernel and the graph nodes it computes (all of them or a part)."""

    kernel: Kernel
    nodes: tuple[int, ...]


def chipsim_groups(program: Program) -> tuple[tuple[int, ...], ...]:
    """The program's fusion groups without constant nodes (constants are data, not work)."""
    graph = program.graph
    groups = (
        tuple(i for i in g if not graph.nodes[i].is_constant) for g in program.partition.groups
    )
    return tuple(g for g in groups if g)


def xla_kernels(graph: Graph, module: HloModule) -> tuple[XlaKernel, ...]:
    """The module's kernels with the nodes of ``graph`` each one holds (module docstring)."""
    kernels = module.kernels()
    tagged = [{i for n in k.op_names if (i := node_of(n)) is not None} for k in kernels]
    found = [set(t) for t in tagged]
    held = {i for nodes in tagged for i in nodes}
    # 1. a contraction kernel without any tag: the first free contraction node of its size
    for k, kernel in enumerate(kernels):
        if found[k] or not any(op in CONTRACTION_OPCODES for op in kernel.opcodes):
            continue
        for i, node in enumerate(graph.nodes):
            if (
                i not in held
                and get_op(node.op).pattern is Pattern.CONTRACTION
                and 4 * math.prod(node.output.shape) == kernel.nbytes
            ):
                found[k].add(i)
                held.add(i)
                break
    # 2. a computing node no tag names sits in a library call fused with a neighbour that
    #    has a tag (a oneDNN matmul named after its bias add): its consumer's kernel, else
    #    its producer's. Layout ops (reshape, transpose) are left free: XLA folds them.
    index = graph.node_index()
    producer = graph.producer()
    users = graph.users()
    tagged_in = {i: [k for k, t in enumerate(tagged) if i in t] for i in held}
    for i, node in enumerate(graph.nodes):
        if i in held or node.is_constant or get_op(node.op).pattern is Pattern.INJECTIVE:
            continue
        consumers = [index[u] for u in users.get(node.output, [])]
        producers = [index[producer[v]] for v in node.inputs if v in producer]
        for j in (*consumers, *producers):
            if len(tagged_in.get(j, [])) == 1:
                found[tagged_in[j][0]].add(i)
                held.add(i)
                break
    return tuple(XlaKernel(k, tuple(sorted(f))) for k, f in zip(kernels, found, strict=True))


@dataclass(frozen=True)
class FusionComparison:
    """chipsim's groups and XLA's kernels for one graph (see the module docstring).

    Attributes:
        name: what the graph is (for tables).
        graph: the graph both partitions refer to (chipsim's graph after simplification).
        chip: the chip chipsim compiled for.
        groups: chipsim's groups (node indices, constants left out).
        group_names: chipsim's kernel names, one per group.
        xla: XLA's kernels in its schedule order.
        hlo: the optimised HLO text XLA printed.
    """

    name: str
    graph: Graph
    chip: str
    groups: tuple[tuple[int, ...], ...]
    group_names: tuple[str, ...]
    xla: tuple[XlaKernel, ...]
    hlo: str

    @property
    def work_nodes(self) -> tuple[int, ...]:
        """The graph's nodes that compute something (every node but constants)."""
        return tuple(i for i, n in enumerate(self.graph.nodes) if not n.is_constant)

    def kernels_of(self, node: int) -> tuple[int, ...]:
        """Positions of the XLA kernels that compute (part of) ``node``."""
        return tuple(k for k, x in enumerate(self.xla) if node in x.nodes)

    @property
    def free_nodes(self) -> tuple[int, ...]:
        """Nodes no XLA kernel computes: XLA made them a bitcast or folded them away."""
        return tuple(i for i in self.work_nodes if not self.kernels_of(i))

    @property
    def same_groups(self) -> tuple[int, ...]:
        """chipsim groups that one XLA kernel computes exactly (free nodes aside)."""
        free = set(self.free_nodes)
        kernel_sets = {frozenset(x.nodes) for x in self.xla if x.nodes}
        out = []
        for g, group in enumerate(self.groups):
            work = frozenset(i for i in group if i not in free)
            if not work or work in kernel_sets:
                out.append(g)
        return tuple(out)

    @property
    def split_groups(self) -> tuple[int, ...]:
        """chipsim groups whose nodes XLA spreads over more than one kernel."""
        return tuple(
            g
            for g, group in enumerate(self.groups)
            if len({k for i in group for k in self.kernels_of(i)}) > 1
        )

    @property
    def merging_kernels(self) -> tuple[int, ...]:
        """XLA kernels that hold nodes of more than one chipsim group."""
        owner = {i: g for g, group in enumerate(self.groups) for i in group}
        return tuple(
            k for k, x in enumerate(self.xla) if len({owner[i] for i in x.nodes if i in owner}) > 1
        )

    @property
    def unmapped_kernels(self) -> tuple[int, ...]:
        """XLA kernels that hold no graph node (copies and broadcasts of XLA's own)."""
        return tuple(k for k, x in enumerate(self.xla) if not x.nodes)

    def contraction_epilogues(self) -> tuple[int, int]:
        """(chipsim groups where a contraction has elementwise ops after it, of those the
        ones where XLA computes the contraction and those ops in one kernel)."""
        both = 0
        groups = 0
        for group in self.groups:
            ops = [(i, get_op(self.graph.nodes[i].op).pattern) for i in group]
            heads = [i for i, p in ops if p is Pattern.CONTRACTION]
            tail = [i for i, p in ops if p <= Pattern.BROADCAST and heads and i > heads[0]]
            if not heads or not tail:
                continue
            groups += 1
            kernels = set(self.kernels_of(heads[0]))
            if any(kernels & set(self.kernels_of(i)) for i in tail):
                both += 1
        return groups, both

    def reduction_spread(self) -> dict[str, tuple[int, ...]]:
        """For each reduction op of the graph (softmax, layernorm, mean...): into how many XLA
        kernels each of its nodes was split."""
        out: dict[str, list[int]] = {}
        for i in self.work_nodes:
            node = self.graph.nodes[i]
            if get_op(node.op).pattern is Pattern.REDUCTION:
                out.setdefault(node.op, []).append(len(self.kernels_of(i)))
        return {op: tuple(counts) for op, counts in out.items()}

    def ops_per_kernel(self) -> tuple[float, float]:
        """Mean graph nodes per kernel: (chipsim, XLA); a node XLA splits counts in each
        kernel that holds a part of it."""
        chipsim = len(self.work_nodes) / max(len(self.groups), 1)
        xla = sum(len(x.nodes) for x in self.xla) / max(len(self.xla), 1)
        return chipsim, xla

    def node_label(self, i: int) -> str:
        """``%5 add`` — the node's printed name and its op."""
        node = self.graph.nodes[i]
        return f"{self.graph.names()[node.output]} {node.op}"

    def alignment(self) -> list[tuple[str, list[str]]]:
        """For every chipsim kernel: its name and the XLA kernels that compute its nodes,
        each as ``name [opcodes]``."""
        rows = []
        for name, group in zip(self.group_names, self.groups, strict=True):
            kernels = sorted({k for i in group for k in self.kernels_of(i)})
            rows.append((name, [_kernel_text(self.xla[k].kernel) for k in kernels]))
        return rows


def _kernel_text(kernel: Kernel) -> str:
    ops = ", ".join(dict.fromkeys(kernel.opcodes))
    return f"{kernel.name} [{ops}]"


def compare_fusion(name: str, graph: Graph, chip: str = "cpu-simd") -> FusionComparison:
    """Compile ``graph`` with chipsim for ``chip`` and with XLA on this CPU; line them up."""
    program = cs.compile(graph, chip=chip)
    compiled = compile_xla(to_jax(program.graph))
    text = compiled.as_text()
    module = parse_hlo(text)
    groups = chipsim_groups(program)
    names = program.partition.kernel_names(program.graph)
    kept = [
        n
        for n, g in zip(names, program.partition.groups, strict=True)
        if any(not program.graph.nodes[i].is_constant for i in g)
    ]
    return FusionComparison(
        name, program.graph, chip, groups, tuple(kept), xla_kernels(program.graph, module), text
    )
