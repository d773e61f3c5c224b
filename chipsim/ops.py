"""The op functions, one per public op of the registry: ``chipsim.ops.relu(x)``,
``chipsim.ops.sum(x, axes=-1)``, ``chipsim.ops.conv2d(x, w, stride=2)``...

Each is built from its :class:`~chipsim.ir.ops.OpDef` by :mod:`chipsim.frontend.functions`
(its tensor inputs, then its attributes with their defaults), works eagerly and while tracing,
and is also a method of every tensor (``x.relu()``). An op added to the registry is here at
once: this module lists no op by hand (nor does the API page, which is generated from it).

Example:
    >>> import chipsim as cs
    >>> cs.ops.relu(cs.tensor([-1.0, 2.0])).numpy()
    array([0., 2.], dtype=float32)
    >>> "relu" in cs.ops.__all__ and cs.ops.relu.__name__
    'relu'
"""

from chipsim.frontend.functions import FUNCTIONS

globals().update(FUNCTIONS)

__all__ = sorted(FUNCTIONS)  # pyright: ignore[reportUnsupportedDunderAll]
