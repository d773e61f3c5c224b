"""The op library: importing this package registers every op."""

from chipsim.ir.ops import contraction, elementwise, reduce, shape_ops  # noqa: F401  (register)
from chipsim.ir.ops.registry import (
    OPS,
    AttrSpec,
    OpDef,
    Pattern,
    check_arity,
    check_attrs,
    execute,
    flops,
    get_op,
    infer_type,
)

__all__ = [
    "OPS",
    "AttrSpec",
    "OpDef",
    "Pattern",
    "check_arity",
    "check_attrs",
    "execute",
    "flops",
    "get_op",
    "infer_type",
]
