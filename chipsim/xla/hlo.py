"""Read XLA's optimised HLO text: computations, instructions, and the kernels of the entry.

``jax.jit(f).lower(...).compile().as_text()`` prints the module XLA will run after all its
passes. Its *spelling* changes between XLA versions — fusion names (``fusion.3``,
``broadcast_maximum_fusion``, ``ynn_fusion``), whether operands carry their types, which
instructions keep source metadata — so nothing here matches a name. It reads the structure
every version shares:

* a computation is a header line ending in ``{`` (``ENTRY`` marks the one that runs), its
  instructions, and a line ``}``;
* an instruction is ``[ROOT] %name = <type> <opcode>(<operands>), <attributes>``;
* a ``fusion`` (or ``call``, ``while``, ``conditional``, ...) names the computations it runs
  with ``calls=``, ``to_apply=``, ``body=``, ``branch_computations={...}`` and the like;
* ``metadata={op_name="jit(f)/scope/add"}`` says which traced operation an instruction came
  from, when XLA kept it.

A *kernel* of the entry computation is one of its instructions that does work: everything
but parameters, constants, bitcasts and tuple plumbing. An entry instruction that calls a
fused computation is one kernel, however many instructions that computation holds.

Example:
    >>> text = '''HloModule jit_f
    ... %fused (p: f32[4]) -> f32[4] {
    ...   %p = f32[4]{0} parameter(0)
    ...   %c = f32[] constant(1)
    ...   %b = f32[4]{0} broadcast(%c), dimensions={}
    ...   ROOT %a = f32[4]{0} add(%p, %b), metadata={op_name="jit(f)/add"}
    ... }
    ... ENTRY %main (x: f32[4]) -> f32[4] {
    ...   %x = f32[4]{0} parameter(0)
    ...   ROOT %fusion = f32[4]{0} fusion(%x), kind=kLoop, calls=%fused
    ... }'''
    >>> module = parse_hlo(text)
    >>> [(k.name, k.opcodes) for k in module.kernels()]
    [('fusion', ('add',))]
    >>> module.entry.instructions[-1].nbytes
    16
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

#: Entry instructions that move no data and run no code: they are not kernels.
FREE_OPCODES = frozenset(
    {
        "parameter",
        "constant",
        "bitcast",
        "get-tuple-element",
        "tuple",
        "after-all",
        "opt-barrier",
        "partition-id",
        "replica-id",
    }
)
#: Instructions inside a fused computation that only shape data for the others (a scalar
#: broadcast, a reinterpretation): left out of a kernel's list of operations.
PLUMBING_OPCODES = FREE_OPCODES | {"broadcast", "reshape", "iota"}

#: Bytes per element of HLO's element types (``pred`` is one byte).
ELEMENT_BYTES = {
    "pred": 1,
    "s8": 1,
    "u8": 1,
    "s16": 2,
    "u16": 2,
    "f16": 2,
    "bf16": 2,
    "s32": 4,
    "u32": 4,
    "f32": 4,
    "s64": 8,
    "u64": 8,
    "f64": 8,
    "c64": 8,
    "c128": 16,
}

_NAME = r"%?([\w.\-]+)"
_INSTRUCTION = re.compile(r"^\s*(ROOT\s+)?" + _NAME + r"\s*=\s*(.*)$")
_HEADER = re.compile(r"^(ENTRY\s+)?" + _NAME + r"\b.*\{\s*$")
_ARRAY = re.compile(r"\b([a-z]+\d*)\[([\d,\s]*)\]")
_CALLED = re.compile(
    r"\b(?:calls|to_apply|body|condition|true_computation|false_computation|"
    r"called_computations|branch_computations)=(\{[^}]*\}|%?[\w.\-]+)"
)
_OP_NAME = re.compile(r'\bop_name="([^"]*)"')
_FUSION_KIND = re.compile(r"\bkind=(k\w+)")


@dataclass(frozen=True, slots=True)
class Instruction:
    """One HLO instruction: ``name = type opcode(operands), attributes``.

    Attributes:
        name: the instruction's name (without ``%``).
        opcode: ``add``, ``dot``, ``fusion``, ...
        type_text: the result type as printed (``f32[64,1]{1,0}``, or a tuple).
        operands: the names of the instructions it reads.
        calls: the computations it runs (a fusion's body, a reduction's combiner, ...).
        op_names: the source operations XLA's metadata names (``jit(f)/add``), if any.
        fusion_kind: ``kLoop``, ``kInput``, ``kOutput``, ``kCustom``... for a fusion.
        root: whether it is its computation's result.
    """

    name: str
    opcode: str
    type_text: str
    operands: tuple[str, ...]
    calls: tuple[str, ...]
    op_names: tuple[str, ...]
    fusion_kind: str = ""
    root: bool = False

    @property
    def nbytes(self) -> int:
        """Bytes of the result (summed over a tuple's arrays)."""
        return sum(
            ELEMENT_BYTES.get(dt, 4) * math.prod(int(d) for d in dims.split(",") if d.strip())
            for dt, dims in _ARRAY.findall(self.type_text)
        )


@dataclass(frozen=True, slots=True)
class Computation:
    """A named list of instructions; ``entry`` is the one the executable runs."""

    name: str
    instructions: tuple[Instruction, ...]
    entry: bool = False


@dataclass(frozen=True, slots=True)
class Kernel:
    """A working instruction of the entry computation, with everything it runs inside.

    Attributes:
        name: the entry instruction's name (XLA's own; it differs between versions).
        opcode: ``fusion``, ``dot``, ``convolution``, ``copy``, ...
        fusion_kind: the fusion's kind (``kLoop``...), empty for an instruction on its own.
        opcodes: the operations it computes, in order: its own opcode, or for a fusion the
            opcodes inside (broadcasts, reshapes and parameters left out).
        op_names: the source operations named in the metadata of the instruction and of
            the computing instructions it runs.
        nbytes: bytes of its result.
        operands: the entry instructions it reads.
    """

    name: str
    opcode: str
    fusion_kind: str
    opcodes: tuple[str, ...]
    op_names: tuple[str, ...]
    nbytes: int
    operands: tuple[str, ...]


@dataclass(frozen=True)
class HloModule:
    """A parsed HLO module (see :func:`parse_hlo`)."""

    name: str
    computations: dict[str, Computation]

    @property
    def entry(self) -> Computation:
        for c in self.computations.values():
            if c.entry:
                return c
        raise ValueError("the HLO module has no ENTRY computation")

    def called(self, instr: Instruction) -> Iterator[Instruction]:
        """Every instruction ``instr`` runs inside called computations, depth first."""
        for name in instr.calls:
            comp = self.computations.get(name)
            if comp is None:
                continue
            for inner in comp.instructions:
                yield inner
                yield from self.called(inner)

    def kernels(self) -> list[Kernel]:
        """The entry's working instructions in the order XLA scheduled them."""
        out = []
        for instr in self.entry.instructions:
            if instr.opcode in FREE_OPCODES:
                continue
            inner = list(self.called(instr))
            if instr.opcode == "fusion":
                opcodes = tuple(i.opcode for i in inner if i.opcode not in PLUMBING_OPCODES)
            else:
                opcodes = (instr.opcode,)
            # what an inner bitcast or broadcast says it came from is where its *input* was
            # made (a fusion reading a matmul's result): only computing instructions count
            working = (i for i in inner if i.opcode not in PLUMBING_OPCODES)
            names = instr.op_names + tuple(n for i in working for n in i.op_names)
            out.append(
                Kernel(
                    instr.name,
                    instr.opcode,
                    instr.fusion_kind,
                    opcodes,
                    tuple(dict.fromkeys(names)),
                    instr.nbytes,
                    instr.operands,
                )
            )
        return out

    def live_peak(self) -> int:
        """The most bytes of the entry's intermediate results alive at once in XLA's schedule
        (the order of the entry's instructions): a lower bound on the temp buffer of XLA's
        buffer assignment, as :attr:`~chipsim.passes.memory.MemoryPlan.lower_bound` is for
        chipsim's arena.

        An intermediate is a kernel's result that is not the module's result; it lives from
        its kernel to the last kernel that reads it (through bitcasts and tuple elements,
        which share its bytes). Parameters and constants are not intermediates.
        """
        entry = self.entry.instructions
        step = {instr.name: t for t, instr in enumerate(entry)}
        root = next((i for i in entry if i.root), entry[-1])
        outputs = set(root.operands) | {root.name} if root.opcode == "tuple" else {root.name}
        owner: dict[str, str] = {}  # an alias -> the instruction whose bytes it shares
        for instr in entry:
            if instr.opcode in ("bitcast", "get-tuple-element") and instr.operands:
                owner[instr.name] = owner.get(instr.operands[0], instr.operands[0])
        last: dict[str, int] = {}
        for t, instr in enumerate(entry):
            for name in instr.operands:
                source = owner.get(name, name)
                last[source] = max(last.get(source, -1), t)
        lives = [
            (step[i.name], last.get(i.name, step[i.name]), i.nbytes)
            for i in entry
            if i.opcode not in FREE_OPCODES
            and i.name not in outputs
            and owner.get(i.name, i.name) not in outputs
        ]
        return max(
            (sum(n for a, b, n in lives if a <= t <= b) for t in range(len(entry))), default=0
        )


def _matching(text: str, start: int) -> int:
    """Index just past the bracket that closes the one at ``text[start]``."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = []
    in_string = False
    for i in range(start, len(text)):
        ch = text[i]
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            in_string = not in_string
        elif in_string:
            continue
        elif ch in pairs:
            stack.append(pairs[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
    raise ValueError(f"unbalanced brackets in HLO text: {text[start : start + 80]!r}")


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets and strings."""
    parts, depth, start, in_string = [], 0, 0, False
    for i, ch in enumerate(text):
        if ch == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def readable(text: str) -> str:
    """The computations of an HLO module without what only tools read: the module header,
    the source-location tables, and each instruction's ``metadata``, ``backend_config`` and
    ``frontend_attributes``."""
    keep = []
    inside = False
    for line in text.splitlines():
        stripped = line.strip()
        if not inside and _HEADER.match(stripped) and not stripped.startswith("HloModule"):
            inside = True
        if inside:
            for key in ("metadata", "backend_config", "frontend_attributes"):
                while (at := line.find(f", {key}=")) >= 0:
                    start = at + len(f", {key}=")
                    end = _matching(line, start) if line[start : start + 1] == "{" else start
                    if end == start:  # a quoted or bare value: up to the next ", "
                        nxt = line.find(", ", start)
                        end = len(line) if nxt < 0 else nxt
                    line = line[:at] + line[end:]
            keep.append(line)
        if inside and stripped == "}":
            inside = False
            keep.append("")
    return "\n".join(keep).strip() + "\n"


def parse_instruction(line: str) -> Instruction | None:
    """One instruction line, or None when the line is not an instruction."""
    match = _INSTRUCTION.match(line)
    if not match:
        return None
    root, name, rest = bool(match.group(1)), match.group(2), match.group(3).strip()
    if rest.startswith("("):  # a tuple type
        end = _matching(rest, 0)
        type_text, rest = rest[:end], rest[end:].lstrip()
    else:
        type_text, _, rest = rest.partition(" ")
    opcode_match = re.match(r"([\w\-]+)\(", rest)
    if not opcode_match:
        return None
    opcode = opcode_match.group(1)
    open_at = opcode_match.end() - 1
    close = _matching(rest, open_at)
    operands = []
    for part in _split_top(rest[open_at + 1 : close - 1]):
        ref = re.search(r"%([\w.\-]+)\s*$", part) or re.search(r"([A-Za-z_][\w.\-]*)\s*$", part)
        if ref and not re.fullmatch(r"[\d.eE+\-]+|true|false|inf|nan", ref.group(1)):
            operands.append(ref.group(1))
    attributes = rest[close:]
    calls: list[str] = []
    for value in _CALLED.findall(attributes):
        calls.extend(n.strip().lstrip("%") for n in value.strip("{}").split(",") if n.strip())
    op_names = tuple(
        part for text in _OP_NAME.findall(attributes) for part in text.split(";") if part
    )
    kind = _FUSION_KIND.search(attributes)
    return Instruction(
        name,
        opcode,
        type_text,
        tuple(operands),
        tuple(calls),
        op_names,
        kind.group(1) if kind and opcode == "fusion" else "",
        root,
    )


def parse_hlo(text: str) -> HloModule:
    """Parse the text of an HLO module (``compiled.as_text()``).

    Lines outside computations (the module header, the source-location tables newer
    versions print) are skipped.

    Raises:
        ValueError: no ENTRY computation was found, or a computation never closes.
    """
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    module_name = first.split()[1].rstrip(",") if first.startswith("HloModule") else "module"
    computations: dict[str, Computation] = {}
    current: tuple[str, bool, list[Instruction]] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if current is None:
            header = _HEADER.match(stripped)
            if header and " = " not in stripped.split("(")[0] and not stripped.startswith("HloM"):
                current = (header.group(2), bool(header.group(1)), [])
            continue
        if stripped == "}":
            name, entry, instructions = current
            computations[name] = Computation(name, tuple(instructions), entry)
            current = None
            continue
        instr = parse_instruction(line)
        if instr is not None:
            current[2].append(instr)
    if current is not None:
        raise ValueError(f"HLO computation {current[0]} never closes with '}}'")
    module = HloModule(module_name, computations)
    module.entry  # noqa: B018 -- raises if there is none
    return module
