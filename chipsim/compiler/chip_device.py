"""``chipsim.device``: an eager device on a simulated chip that can also run jitted functions.

The runtime's :class:`~chipsim.runtime.device.ChipDevice` runs instructions and knows no
compiler (the compiler sits above it); this is where the two meet: the device is handed
:func:`~chipsim.compiler.pipeline.compile` for the graphs of ``@chipsim.jit`` functions.

Example:
    >>> import chipsim as cs
    >>> @cs.jit
    ... def f(x):
    ...     return (x + 1) * 2
    >>> with cs.device("edge-npu") as dev:
    ...     f(cs.tensor([1.0, 2.0])).numpy().tolist()
    [4.0, 6.0]
    >>> [k.name for k in next(iter(dev.programs.values())).kernels]
    ['fused_add_mul']
"""

from __future__ import annotations

from chipsim.compiler.pipeline import compile
from chipsim.hw.chip import Chip
from chipsim.runtime.device import ChipDevice, make_device


def device(
    name_or_chip: str | Chip = "edge-npu", *, functional: bool = True, double_buffer: bool = True
) -> ChipDevice:
    """An eager device on a simulated chip; use it as ``with chipsim.device("edge-npu") as dev:``.

    Every op runs at once as one kernel; a jitted function's graph is compiled with
    ``chipsim.compile`` (once per graph) and runs as one program.

    Args:
        name_or_chip: a preset name (see :func:`chipsim.chips`) or a :class:`Chip`.
        functional: compute values (``False``: timing only).
        double_buffer: let each kernel overlap DMA with compute.
    """
    return make_device(
        name_or_chip, functional=functional, double_buffer=double_buffer, compiler=compile
    )
