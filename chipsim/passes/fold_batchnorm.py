"""Fold inference batch norm into the convolution (or matmul) that feeds it.

At inference a batch norm is a fixed affine map per output channel,
``y = conv(x, w) * s + t`` with ``s = scale / sqrt(var + eps)`` and ``t = bias - mean * s``.
A convolution is linear in its weight, so scaling the weight's output channels by ``s`` gives
``conv(x, w * s) = conv(x, w) * s``: the multiply disappears into the weights (computed once,
at compile time) and only ``+ t`` remains, an epilogue that fusion puts into the conv's kernel.
This is what inference compilers do to every ResNet and MobileNet.

The pass applies where the contraction's weight (input 1) and all four batch-norm vectors are
constants, the weight's last axis is the output's channel axis (conv2d, grouped_conv2d and
``x @ W`` all qualify, as the op registry declares them contractions), and nothing else reads
the contraction's result.

Example:
    >>> import numpy as np
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder()
    >>> x = b.input((1, 8, 8, 3), f32)
    >>> w = b.const(np.ones((3, 3, 3, 4), np.float32))
    >>> c = [b.const(np.full(4, v, np.float32)) for v in (2.0, 0.5, 0.1, 1.0)]
    >>> y = b.op("batch_norm", b.op("conv2d", x, w), *c)
    >>> [n.op for n in fold_batchnorm(b.build(y)).nodes if not n.is_constant]
    ['conv2d', 'add']
"""

from __future__ import annotations

import numpy as np

from chipsim.ir.attrs import Attrs, ConstData
from chipsim.ir.graph import Graph, Node, Value
from chipsim.ir.ops import check_attrs, get_op
from chipsim.passes.simplify import dce


def _const(nodes_by_value: dict[Value, Node], v: Value) -> np.ndarray | None:
    node = nodes_by_value.get(v)
    if node is None or not node.is_constant:
        return None
    return node.attrs["value"].array()


def _constant_node(array: np.ndarray, like: Value) -> Node:
    data = ConstData.of(array.astype(like.dtype.numpy), like.dtype)
    return Node.constant(data)


def fold_batchnorm(graph: Graph) -> Graph:
    """Return ``graph`` with every foldable ``batch_norm`` merged into its producer."""
    producer = graph.producer()
    users = graph.users()
    replace: dict[Node, list[Node]] = {}  # the contraction node -> its replacement nodes
    mapping: dict[Value, Value] = {}  # a batch norm's output -> the folded result
    for bn in graph.nodes:
        if bn.op != "batch_norm":
            continue
        head = producer.get(bn.inputs[0])
        if head is None or get_op(head.op).contraction is None or len(head.inputs) < 2:
            continue
        w = _const(producer, head.inputs[1])
        params = [_const(producer, v) for v in bn.inputs[1:]]
        folds = (
            w is not None
            and w.ndim >= 2
            and w.shape[-1] == head.type.shape[-1]
            and all(p is not None for p in params)
            and len(users[head.output]) == 1
            and head.output not in graph.outputs
        )
        if not folds:
            continue
        scale, bias, mean, var = (p.astype(np.float64) for p in params)  # type: ignore[union-attr]
        eps = check_attrs(get_op("batch_norm"), bn.attrs)["eps"]
        s = scale / np.sqrt(var + eps)
        new_w = _constant_node(w.astype(np.float64) * s, head.inputs[1])
        new_head = head.replace(
            inputs=(head.inputs[0], new_w.output, *head.inputs[2:]),
            output=Value(head.type, head.output.hint),
        )
        shift = _constant_node(bias - mean * s, bn.inputs[1])
        out = Value(bn.type, bn.output.hint)
        add = Node("add", (new_head.output, shift.output), Attrs({}), out, bn.loc)
        replace[head] = [new_w, new_head, shift, add]
        mapping[bn.output] = add.output
    if not replace:
        return graph
    nodes: list[Node] = []
    folded_bns = {producer[v] for v in mapping}
    for node in graph.nodes:
        if node in folded_bns:
            continue
        for new in replace.get(node, [node]):  # a folded head may read a folded batch norm
            if any(v in mapping for v in new.inputs):
                new = new.replace(inputs=tuple(mapping.get(v, v) for v in new.inputs))
            nodes.append(new)
    outputs = tuple(mapping.get(v, v) for v in graph.outputs)
    return dce(graph.replace(nodes=tuple(nodes), outputs=outputs))
