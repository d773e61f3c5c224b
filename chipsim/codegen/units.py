"""Unit selection: which execution unit computes a node, and the instruction(s) it takes.

=====================================  ==============================================
op                                     unit
=====================================  ==============================================
matmul, conv2d (float)                 Tensor Core (conv as im2col tiles)
matmul, conv2d (integer)               MAC array
elementwise, broadcast, copies         SIMD
sum / max / mean, softmax, layernorm   SIMD for the bulk + ALU to combine lane partials
constant (not placed in DRAM)          ALU writes it as an immediate
=====================================  ==============================================

The instruction computes the node's value with the op registry's own numpy semantics, so a
kernel's outputs are computed by the simulated program, never copied from elsewhere.
"""

from __future__ import annotations

import math

from chipsim.hw.chip import Chip
from chipsim.hw.isa import VECTOR_SLOTS, Instr, Operand, mma_ops, simd_ops
from chipsim.ir.graph import Attrs, Node
from chipsim.ir.ops import execute, flops
from chipsim.ir.ops.contraction import conv_geometry, matmul_dims
from chipsim.ir.types import TensorType

TENSOR_DTYPES = ("f16", "bf16", "f32")
_COMBINES = {"sum": 1, "max": 1, "mean": 1, "softmax": 2, "layernorm": 2}  # reductions per row


def _semantics(op: str, attrs: Attrs, out_type: TensorType):
    def fn(*arrays):
        return execute(op, list(arrays), attrs, out_type)

    return fn


def compute_instrs(
    node: Node,
    srcs: tuple[Operand, ...],
    dst: Operand,
    out_type: TensorType,
    attrs: Attrs,
    chip: Chip,
    kernel: str,
    label: str = "",
) -> list[Instr]:
    """The instructions computing ``node`` from ``srcs`` into ``dst`` (``out_type`` shaped).

    ``attrs`` are the node's attributes with defaults filled in, adapted to the tile.
    """
    in_types = [TensorType(s.shape, t.dtype) for s, t in zip(srcs, (v.type for v in node.inputs))]
    work_flops = flops(node.op, in_types, out_type, attrs)
    fn = _semantics(node.op, attrs, out_type)
    label = label or node.op
    op = node.op
    if op in ("matmul", "conv2d"):
        if op == "matmul":
            batch, m, k, n = matmul_dims(*in_types)
            batch_n = math.prod(batch)
        else:
            nb, oh, ow, cout, _ = conv_geometry(in_types[0], in_types[1], attrs)
            kh, kw, cin, _ = in_types[1].shape
            batch_n, m, k, n = 1, nb * oh * ow, kh * kw * cin, cout
        if out_type.dtype.name in TENSOR_DTYPES:  # tensor-core tiles
            name, unit, work = "mma", "tensor", mma_ops(chip, m, n, k, batch_n)
        else:  # one multiply-accumulate per output element per k
            name, unit, work = "mac", "mac", batch_n * m * n * k
        return [
            Instr(
                name, unit, srcs, (dst,), work=work, hw_ops=work, flops=work_flops, fn=fn,
                kernel=kernel, label=label,
            )
        ]  # fmt: skip
    slots = VECTOR_SLOTS.get(op, 1)
    elements = max(in_types[0].numel if op in _COMBINES else out_type.numel, 1)
    instrs = [
        Instr(
            "vec",
            "simd",
            srcs,
            (dst,),
            work=elements * slots,
            hw_ops=simd_ops(chip, elements, slots),
            flops=work_flops,
            fn=fn,
            kernel=kernel,
            label=label,
        )
    ]
    if op in _COMBINES:
        # the lanes hold partial results; the scalar unit folds them (lanes - 1 ops per row)
        rows = max(
            out_type.numel
            if op in ("sum", "max", "mean")
            else out_type.numel // max(out_type.shape[-1], 1),
            1,
        )
        ops = rows * _COMBINES[op] * max(chip.simd.lanes - 1, 1)
        instrs.append(
            Instr(
                "scalar",
                "alu",
                (dst,),
                (dst,),
                work=ops,
                hw_ops=ops,
                kernel=kernel,
                label=f"{label} combine",
            )
        )
    return instrs


def immediate_instr(node: Node, dst: Operand, chip: Chip, kernel: str) -> Instr:
    """The ALU writes a constant the caller did not place in DRAM (e.g. a scalar ``1.0``)."""
    data = node.attrs["value"]
    n = max(dst.numel, 1)
    return Instr(
        "scalar",
        "alu",
        (),
        (dst,),
        work=n,
        hw_ops=n,
        fn=data.array,
        kernel=kernel,
        label="constant",
    )
