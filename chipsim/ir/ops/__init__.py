"""The op library. Importing this package registers every op.

Every module of this package is imported here, in name order, so an op module registers its
ops by being present: to add an op, add its :class:`OpDef` to a module here (or a new module
here) and nothing else. The registry itself is :mod:`chipsim.ir.ops.registry`.
"""

import importlib
import pkgutil

from chipsim.ir.ops.registry import (
    OPS,
    AttrSpec,
    Contraction,
    Example,
    Geometry,
    OpDef,
    Pattern,
    Reduction,
    check_arity,
    check_attrs,
    execute,
    flops,
    get_op,
    infer_type,
)

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")

__all__ = [
    "OPS",
    "AttrSpec",
    "Contraction",
    "Example",
    "Geometry",
    "OpDef",
    "Pattern",
    "Reduction",
    "check_arity",
    "check_attrs",
    "execute",
    "flops",
    "get_op",
    "infer_type",
]
