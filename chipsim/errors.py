"""One exception hierarchy for everything chipsim raises on purpose.

Every message names the node, tensor, field or line at fault and says what to do next.
Catch :class:`ChipsimError` to catch them all.
"""

from __future__ import annotations


class ChipsimError(Exception):
    """Base class of every error chipsim raises deliberately."""


class IRError(ChipsimError):
    """A graph is malformed (bad op, arity, attribute, type, order, ...)."""


class ShapeError(IRError):
    """Shape or dtype inference failed for an op."""


class SerializationError(ChipsimError):
    """A JSON/CSV/TOML document could not be read into a chipsim object."""


class TraceError(ChipsimError):
    """Python code did something that cannot be captured in a static graph."""


class ExecutionError(ChipsimError):
    """Running a graph or program failed; the message names the node or instruction."""


class PassError(ChipsimError):
    """A compiler pass failed or produced invalid IR."""


class ChipConfigError(ChipsimError):
    """A chip description is invalid; the message names the field."""


class SimulationError(ChipsimError):
    """The simulated chip was asked to do something impossible (e.g. out-of-bounds access)."""


class OutOfMemoryError(SimulationError):
    """A memory ran out; the message says how much was free and how fragmented it was."""


class PlanError(ChipsimError):
    """A memory plan is invalid (overlap of live tensors, misalignment, ...)."""


class PartitionError(ChipsimError):
    """A fusion partition is invalid (missing node, non-convex group, ...)."""
