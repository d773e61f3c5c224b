"""The op registry: one :class:`OpDef` per op, the only place an op's behaviour is written.

An op declares, once:

* its **meaning** — shape/dtype inference (``infer``) and numpy semantics (``compute``);
* its **work** — FLOPs, bytes read and written, and how many vector issue slots each element
  takes on a SIMD unit (``vector_slots``);
* how it **tiles** — which inputs follow the output's rows when a kernel runs a block of rows
  at a time, or ``None`` if an output row needs other rows (``rows``); whether it is a
  reduction (how many independent reductions the scalar unit combines, ``reduction``) or a
  contraction for the matrix units (its ``(batch, m, k, n)``, ``contraction``, and how a
  blocked kernel slices its operands, ``geometry``);
* its **Python signature** — the tensor inputs (``inputs``) and the attributes
  (``attrs``) of the public function ``chipsim.<name>(...)``, which the front end builds from
  this record (so a new op is usable eagerly, traced and compiled without another edit).

It says nothing about time: cycles come from a chip's ISA cost functions. The code generator,
the fusion passes and the front end read every trait from here; none of them names an op.
To add an op, write its ``OpDef`` in one module of this package (any module here is imported,
see ``chipsim/ir/ops/__init__.py``) and give it ``examples``: the conformance tests run every
op's examples through the interpreter, the code generator on every chip and the row tiling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np

from chipsim.errors import IRError, ShapeError
from chipsim.i18n import N_
from chipsim.ir.attrs import Attrs
from chipsim.ir.dtypes import to_storage
from chipsim.ir.types import TensorType


class Pattern(IntEnum):
    """How an op's output elements depend on its inputs; fusion rules are stated in these.

    The order is the fusion lattice: a group's pattern is the largest of its members'.
    """

    ELEMENTWISE = 0  # out[i] = f(in[i])
    BROADCAST = 1  # out[i] = f(a[bcast(i)], b[bcast(i)])
    INJECTIVE = 2  # each output element comes from one input element (reshape, transpose...)
    REDUCTION = 3  # an output element combines many input elements (sum, softmax...)
    CONTRACTION = 4  # matmul / conv: compute-heavy, can take an elementwise epilogue
    OPAQUE = 5  # never fused

    def __str__(self) -> str:
        return self.name.lower()


#: The pattern classes' names as printed (``str(pattern)``): marked for the catalogue, shown
#: through ``tr(str(pattern))`` in tables (graph cost table, model summary).
PATTERN_NAMES = (
    N_("elementwise"),
    N_("broadcast"),
    N_("injective"),
    N_("reduction"),
    N_("contraction"),
    N_("opaque"),
)


@dataclass(frozen=True)
class AttrSpec:
    """An attribute an op accepts: whether it is required, its default, and a checker.

    ``check`` returns the normalised value or raises ``ValueError`` with a reason.
    """

    required: bool = False
    default: Any = None
    check: Callable[[Any], Any] | None = None
    doc: str = ""


@dataclass(frozen=True, slots=True)
class Contraction:
    """A contraction as the matrix units see it: ``batch`` products of (m, k) x (k, n)."""

    batch: int
    m: int
    k: int
    n: int


@dataclass(frozen=True, slots=True)
class Reduction:
    """A reduction as the vector units see it.

    The SIMD lanes each hold a partial result of every one of ``count`` independent
    reductions; the scalar unit folds the lanes together, ``passes`` times per reduction
    (softmax and layernorm reduce twice: a max then a sum, a mean then a variance).
    """

    count: int
    passes: int = 1


Axis = int | str | None  # an output axis, "k" (the inner dimension) or None (taken whole)


@dataclass(frozen=True, slots=True)
class Geometry:
    """How a blocked contraction's output is tiled and how its two operands follow the tiles.

    Every operand dimension follows an output axis (an ``int``), the inner dimension
    (``"k"``) or nothing (``None``: always taken whole). For ``C[b, m, n] = A[b, m, k] @
    B[b, k, n]`` the maps are ``A: (0, 1, "k")``, ``B: (0, "k", 2)``.

    Attributes:
        maps: the axis maps of the two operands.
        row_axis: the output axis of the rows (M; the images of a conv), or None.
        col_axis: the output axis of the columns (N; a conv's output channels), or None.
        batch_axes: output axes computed one index at a time (a batched matmul's batch).
        k: the size of the inner dimension (a conv's input channels).
        row_unit: rows per tensor-core tile along ``row_axis`` (a conv's rows are whole
            images, so 1); 0 means the chip's tensor-core tile height.
    """

    maps: tuple[tuple[Axis, ...], tuple[Axis, ...]]
    row_axis: int | None
    col_axis: int | None
    batch_axes: tuple[int, ...]
    k: int
    row_unit: int = 0


@dataclass(frozen=True, slots=True)
class Example:
    """Input types and attributes on which an op is tested (and shown in the docs).

    ``low`` bounds the random test values from below (``log`` needs positive inputs).
    """

    inputs: tuple[TensorType, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    low: float | None = None


InferFn = Callable[[Sequence[TensorType], Attrs], TensorType]
ComputeFn = Callable[[Sequence[np.ndarray], Attrs], np.ndarray]
FlopsFn = Callable[[Sequence[TensorType], TensorType, Attrs], int]
RowsFn = Callable[[Sequence[TensorType], TensorType, Attrs], "tuple[bool, ...] | None"]
ReductionFn = Callable[[Sequence[TensorType], TensorType, Attrs], Reduction]
ContractionFn = Callable[[Sequence[TensorType], TensorType, Attrs], Contraction]
GeometryFn = Callable[[Sequence[TensorType], TensorType, Attrs], "Geometry | None"]
RetileFn = Callable[[Attrs, TensorType], Attrs]


def same_rows(ins: Sequence[TensorType], out: TensorType, attrs: Attrs) -> tuple[bool, ...]:
    """The default row rule of elementwise and broadcast ops: row ``i`` of the output needs
    row ``i`` of every input of the output's rank and row count; other inputs (a bias that
    broadcasts) are needed whole by every tile."""
    rows = out.shape[0]
    return tuple(t.rank == out.rank and t.shape[0] == rows for t in ins)


def no_flops(ins: Sequence[TensorType], out: TensorType, attrs: Attrs) -> int:
    return 0


def per_element(n: int) -> FlopsFn:
    """FLOPs of an op that does ``n`` operations per output element."""
    return lambda ins, out, attrs: n * out.numel


@dataclass(frozen=True)
class OpDef:
    """Everything chipsim knows about one op (see the module docstring).

    Attributes:
        name: the op's name in graphs and the name of its public function.
        pattern: its :class:`Pattern`, which the fusion rules read.
        arity: ``(min, max)`` number of tensor inputs; ``max`` None means any number.
        infer: input types and attributes -> output type; raises :class:`ShapeError`.
        compute: the numpy semantics (inputs in their storage dtypes).
        flops: useful floating-point operations for given types.
        attrs: the attributes it accepts, in the order of the public function's parameters.
        doc: one line, shown by ``help(chipsim.<name>)`` and the op reference page.
        inputs: names of the public function's tensor parameters (beyond ``arity[0]`` they
            are optional); with ``variadic`` the one parameter is a sequence of tensors.
        moves_data: False for views (reshape) that share their input's bytes.
        vector_slots: SIMD issue slots per element; cheap arithmetic takes one, functions
            computed by polynomial sequences several. A slot never does more than two FLOPs.
        rows: for each input, True if a block of output rows needs only the same block of
            that input's rows, False if it needs the input whole; None when an output row
            needs other rows (a reduction over axis 0, a transpose that moves it).
        reduction: for reductions, what the scalar unit combines (None otherwise).
        contraction: for contractions, the matrix products it is made of (None otherwise).
        geometry: for contractions, how a blocked kernel slices the operands.
        retile: the attributes for computing only a block of the output's rows (an op whose
            attributes name the output shape, like reshape, needs the block's shape).
        examples: types and attributes the conformance tests run the op on.
        public: whether ``chipsim.<name>`` exists (``constant`` has no function).
        is_constant: the op holds data known when the graph is built (``constant``): not
            work, never a kernel's own, placed as a weight.
    """

    name: str
    pattern: Pattern
    arity: tuple[int, int | None]
    infer: InferFn
    compute: ComputeFn
    flops: FlopsFn
    attrs: dict[str, AttrSpec] = field(default_factory=dict)
    doc: str = ""
    inputs: tuple[str, ...] = ("x",)
    variadic: bool = False
    moves_data: bool = True
    vector_slots: int = 1
    rows: RowsFn = same_rows
    reduction: ReductionFn | None = None
    contraction: ContractionFn | None = None
    geometry: GeometryFn | None = None
    retile: RetileFn | None = None
    examples: tuple[Example, ...] = ()
    public: bool = True
    is_constant: bool = False

    def bytes_read(self, in_types: Sequence[TensorType]) -> int:
        return sum(t.nbytes for t in in_types) if self.moves_data else 0

    def bytes_written(self, out_type: TensorType) -> int:
        return out_type.nbytes if self.moves_data else 0

    def row_inputs(
        self, in_types: Sequence[TensorType], out_type: TensorType, attrs: Attrs
    ) -> tuple[bool, ...] | None:
        """:attr:`rows` for these types (None also for a scalar output: it has no rows)."""
        if out_type.rank == 0:
            return None
        flags = self.rows(in_types, out_type, check_attrs(self, attrs))
        if flags is not None and len(flags) != len(in_types):  # a registry bug
            raise IRError(f"{self.name}: rows() gave {len(flags)} flags for {len(in_types)} inputs")
        return None if flags is None else tuple(flags)

    def vector_elements(self, in_types: Sequence[TensorType], out_type: TensorType) -> int:
        """Elements the SIMD unit streams: a reduction reads its whole input, others write
        their output."""
        if self.reduction is not None and in_types:
            return max(in_types[0].numel, 1)
        return max(out_type.numel, 1)

    def tile_attrs(self, attrs: Attrs, out_type: TensorType) -> Attrs:
        """The attributes for computing ``out_type`` (a block of the output's rows)."""
        return attrs if self.retile is None else self.retile(attrs, out_type)


OPS: dict[str, OpDef] = {}


def register(opdef: OpDef) -> OpDef:
    """Add ``opdef`` to :data:`OPS` (each name once)."""
    if opdef.name in OPS:
        raise IRError(f"op {opdef.name!r} is registered twice")
    lo, hi = opdef.arity
    if opdef.public and not opdef.variadic and len(opdef.inputs) != (hi if hi is not None else lo):
        raise IRError(f"op {opdef.name!r}: name one public input per possible operand")
    OPS[opdef.name] = opdef
    return opdef


def get_op(name: str) -> OpDef:
    """The :class:`OpDef` for ``name``; an unknown name raises a helpful :class:`IRError`."""
    try:
        return OPS[name]
    except KeyError:
        close = [k for k in OPS if k.startswith(name[:3])] if isinstance(name, str) else []
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise IRError(f"unknown op {name!r}.{hint} Known ops: {', '.join(sorted(OPS))}") from None


def check_attrs(opdef: OpDef, attrs: Attrs) -> Attrs:
    """Validate ``attrs`` against the op's specs; return them with defaults filled in."""
    for key in attrs:
        if key not in opdef.attrs:
            allowed = ", ".join(opdef.attrs) or "none"
            raise IRError(f"{opdef.name}: unknown attribute {key!r} (allowed: {allowed})")
    out: dict[str, Any] = {}
    for key, spec in opdef.attrs.items():
        if key not in attrs:
            if spec.required:
                raise IRError(f"{opdef.name}: missing required attribute {key!r} ({spec.doc})")
            out[key] = spec.default
            continue
        value = attrs[key]
        if value is None and spec.default is None and not spec.required:
            out[key] = None  # an explicit None means "use the default"
            continue
        if spec.check is not None:
            try:
                value = spec.check(value)
            except (ValueError, TypeError) as exc:
                raise IRError(f"{opdef.name}: bad attribute {key}={attrs[key]!r}: {exc}") from None
        out[key] = value
    return Attrs(out)


def check_arity(opdef: OpDef, n: int) -> None:
    lo, hi = opdef.arity
    if n < lo or (hi is not None and n > hi):
        want = f"{lo}" if lo == hi else f"{lo}..{hi if hi is not None else 'any'}"
        raise IRError(f"{opdef.name} takes {want} input(s), got {n}")


def infer_type(op: str, in_types: Sequence[TensorType], attrs: Attrs) -> TensorType:
    """Check arity and attributes, then infer the result type of ``op``."""
    opdef = get_op(op)
    check_arity(opdef, len(in_types))
    full = check_attrs(opdef, attrs)
    try:
        return opdef.infer(in_types, full)
    except ShapeError as exc:
        raise ShapeError(f"{op}: {exc}") from None


def execute(
    op: str, arrays: Sequence[np.ndarray], attrs: Attrs, out_type: TensorType
) -> np.ndarray:
    """Run ``op`` with numpy and return its result in the storage of ``out_type``."""
    opdef = get_op(op)
    full = check_attrs(opdef, attrs)
    with np.errstate(all="ignore"):
        result = np.asarray(opdef.compute(arrays, full))
    result = to_storage(result, out_type.dtype)
    if result.shape != out_type.shape:  # a registry bug, never a user error
        raise IRError(f"{op} produced shape {result.shape}, expected {out_type.shape}")
    return result


def flops(op: str, in_types: Sequence[TensorType], out_type: TensorType, attrs: Attrs) -> int:
    opdef = get_op(op)
    return int(opdef.flops(in_types, out_type, check_attrs(opdef, attrs)))


# -- attribute checkers shared by the op modules -----------------------------------------------
def int_tuple(value: Any) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if not isinstance(value, tuple) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise ValueError("expected a tuple of ints")
    return value


def optional_axes(value: Any) -> tuple[int, ...] | None:
    return None if value is None else int_tuple(value)


def an_int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError("expected an int")
    return value


def a_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected True or False")
    return value


def a_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("expected a number")
    return float(value)


def normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ShapeError(f"axis {axis} is out of range for a rank-{rank} tensor")
    return axis % max(rank, 1)
