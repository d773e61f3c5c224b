"""Unit selection: which execution unit computes a node, and the instruction(s) it takes.

The unit follows from the op's traits in the registry, never from its name, and, for a
contraction, from its input dtype as the chip describes it (``chip.contraction_unit``):

=========================================  ==========================================
op trait                                    unit
=========================================  ==========================================
``contraction``, dtype the tensor core has  Tensor Core (a conv as one im2col product)
``contraction``, any other dtype            MAC array (integers; f32 on a GPU's CUDA
                                            cores unless TF32 is allowed)
``reduction``                               SIMD for the bulk + ALU to combine lane partials
anything else                               SIMD, ``vector_slots`` issue slots per element
a constant not placed in memory             ALU writes it as an immediate
=========================================  ==========================================

A new execution unit goes into this table (and into the chip's dataclasses and the ISA).
The instruction computes the node's value with the op registry's own numpy semantics, so a
kernel's outputs are computed by the simulated program, never copied from elsewhere.
"""

from __future__ import annotations

from chipsim.codegen.dma import dma
from chipsim.hw.chip import Chip
from chipsim.hw.isa import Instr, Operand, cost, mma_ops, simd_ops, wave_share
from chipsim.ir.attrs import Attrs
from chipsim.ir.dtypes import dtype as get_dtype
from chipsim.ir.graph import GraphBuilder, Node
from chipsim.ir.ops import check_attrs, execute, get_op
from chipsim.ir.types import TensorType
from chipsim.reference import reference_for
from chipsim.target import Level


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
    opdef = get_op(node.op)
    in_types = [TensorType(s.shape, v.dtype) for s, v in zip(srcs, node.inputs, strict=True)]
    work_flops = int(opdef.flops(in_types, out_type, attrs))
    fn = _semantics(node.op, attrs, out_type)
    label = label or node.op
    if opdef.contraction is not None:
        c = opdef.contraction(in_types, out_type, attrs)
        if chip.contraction_unit(in_types[0].dtype.name) == "tensor":  # tensor-core tiles
            name, unit, ops = "mma", "tensor", mma_ops(chip, c.m, c.n, c.k, c.batch)
        else:  # one multiply-accumulate per output element per k
            name, unit, ops = "mac", "mac", c.batch * c.m * c.n * c.k
        # on a GPU the whole node's output runs in waves of thread blocks over the SMs: this
        # tile pays its share of the idle SMs in the last wave
        whole = opdef.contraction(
            [v.type for v in node.inputs], node.type, check_attrs(opdef, node.attrs)
        )
        itemsize = in_types[0].dtype.itemsize
        occupied, useful = wave_share(chip, whole.m, whole.n, whole.batch, whole.k, itemsize, unit)
        work = -(-ops * occupied // useful)
        return [
            Instr(
                name, unit, srcs, (dst,), work=work, hw_ops=ops, flops=work_flops, fn=fn,
                kernel=kernel, label=label,
            )
        ]  # fmt: skip
    slots = opdef.vector_slots
    elements = opdef.vector_elements(in_types, out_type)
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
    if opdef.reduction is not None:
        # the lanes hold partial results; the scalar unit folds them (lanes - 1 ops each)
        r = opdef.reduction(in_types, out_type, attrs)
        row_f32_bytes = 4 * in_types[0].numel // max(r.count, 1)
        if 0 < chip.sm.row_budget_bytes < row_f32_bytes:  # a row too long for one block:
            again = r.passes * srcs[0].nbytes  # streamed from DRAM again for every pass
            instrs.insert(
                0,
                Instr(
                    "refetch",
                    "dma",
                    work=again,
                    hw_ops=1,
                    kernel=kernel,
                    label=f"{label} re-read (row > block budget)",
                ),
            )
        ops = r.count * r.passes * max(chip.simd.lanes - 1, 1)
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


@reference_for("instruction_generation")
def unit_and_cycles(op: str, dtype: str, shapes: list[list[int]], chip: Chip) -> tuple[str, int]:
    """The unit the code generator runs ``op`` on, and its cycles there, for one tile in SRAM.

    ``op`` is an op of the registry on inputs of ``shapes`` and ``dtype`` (attributes at
    their defaults), or ``"load"``/``"store"`` of a tensor of ``shapes[0]`` between DRAM and
    SRAM. The cycles are the sum of the :func:`~chipsim.hw.isa.cost` of every instruction
    it takes (a reduction's SIMD pass and the ALU's combine of the lanes).

    Example:
        >>> from chipsim.hw import get_chip
        >>> unit_and_cycles("relu", "f32", [[64, 64]], get_chip("edge-npu"))
        ('simd', 514)
    """
    dt = get_dtype(dtype)
    if op in ("load", "store"):
        dram = Operand(Level.DRAM, 0, tuple(shapes[0]), dt.name)
        sram = Operand(Level.SRAM, 0, tuple(shapes[0]), dt.name)
        move = dma(op, *((dram, sram) if op == "load" else (sram, dram)), "")
        return "dma", cost(move, chip)
    b = GraphBuilder()
    ins = [b.input(tuple(s), dt) for s in shapes]
    b.op(op, *ins)
    node = b.nodes[-1]
    srcs = tuple(Operand(Level.SRAM, 0, v.shape, v.dtype.name) for v in node.inputs)
    dst = Operand(Level.SRAM, 0, node.type.shape, node.type.dtype.name)
    attrs = check_attrs(get_op(op), node.attrs)
    instrs = compute_instrs(node, srcs, dst, node.type, attrs, chip, "")
    main = next(i for i in instrs if i.opcode in ("mma", "mac", "vec", "scalar"))
    return main.unit, sum(cost(i, chip) for i in instrs)
