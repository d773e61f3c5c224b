"""Is an answer the same computation? The equivalence check every timed answer passes first.

A valid program differs from the reference interpreter (:func:`chipsim.ir.interpret`) only
by rounding: tiled matmuls sum in another order. The grader runs the answer's program on
random inputs and compares every output with the interpreter's, within tolerances relative to
the output's scale; a graph that amplifies rounding past them (an exp of an exp overflowing
float32) is judged against the rounding of a program the grader trusts.

Example:
    >>> import numpy as np
    >>> want = [np.array([1.0, 2.0, np.nan])]
    >>> first_mismatch(want, [np.array([1.001, 2.0, np.nan])]) is None
    True
    >>> first_mismatch(want, [np.array([1.0, 2.5, np.nan])])
    (0, (1,))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from chipsim.i18n import tr

#: Tolerances of the numerical-equivalence check, relative to the output's scale: a valid
#: program only differs by rounding (tiled matmuls sum in another order), while a wrong one
#: is off by far more.
RTOL, ATOL = 1e-2, 1e-2


def random_inputs(graph: Any, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(v.shape) * 0.5).astype(v.dtype.numpy) for v in graph.inputs]


def mismatch(graph: Any, prog: Any, trusted: Callable[[], Any] | None = None) -> str:
    """Empty when the program matches the reference interpreter on random inputs.

    ``trusted``: makes a program the grader trusts (the reference's), run only when ``prog``
    differs. A graph can amplify float32 rounding past the tolerances (an exp of an exp of a
    matmul reaches 1e35, where two valid summation orders differ by up to 10%); the trusted
    program's own difference from the interpreter then says how far a valid program may be
    (:func:`first_mismatch`)."""
    from chipsim.ir import interpret

    args = random_inputs(graph)
    got, _ = prog.run(*args)
    want = interpret(graph, *args)
    first = first_mismatch(want, got)
    if first is not None and trusted is not None:
        first = first_mismatch(want, got, trusted().run(*args)[0])
    return "" if first is None else not_equivalent(first[0])


def not_equivalent(k: int) -> str:
    return tr(
        "output {k} differs from the reference interpreter on random inputs: "
        "the answer is not numerically equivalent",
        k=k,
    )


#: The widest relative tolerance a trusted program's rounding may open (:func:`first_mismatch`):
#: past it a graph's values say nothing, and an answer off by a quarter is wrong anyway.
MAX_RTOL = 0.25


def first_mismatch(
    want: list, got: list, trusted: list | None = None
) -> tuple[int, tuple[int, ...]] | None:
    """``(output, element)`` of the first value outside the tolerances, or None.

    With ``trusted`` (a trusted program's outputs on the same inputs), an output's relative
    tolerance widens to twice the trusted program's largest relative difference from
    ``want`` (at most :data:`MAX_RTOL`), elements where the two disagree on being finite
    (float32 overflowed there, or not, by rounding) are not compared, and an element within
    that tolerance of the trusted program's is right whatever the interpreter says
    (on a graph that amplifies rounding, how far the interpreter lands from every compiled
    program depends on numpy's own summation order, which changes between its versions)."""
    for k, (w, g) in enumerate(zip(want, got, strict=True)):
        # NaN/inf on random inputs (log of a negative) must match in place; scale from finite values
        finite = np.abs(w[np.isfinite(w)])
        scale = max(1.0, float(np.max(finite, initial=0.0)))
        g = np.asarray(g, np.float64)
        rtol, compared = RTOL, True
        if trusted is not None:
            t = np.asarray(trusted[k], np.float64)
            both = np.isfinite(w) & np.isfinite(t)
            off = np.abs(t[both] - w[both]) / (np.abs(w[both]) + ATOL * scale)
            rtol = min(MAX_RTOL, max(RTOL, 2 * float(np.max(off, initial=0.0))))
            compared = np.isfinite(w) == np.isfinite(t)
            compared &= ~np.isclose(g, t, rtol=rtol, atol=ATOL * scale, equal_nan=True)
        bad = ~np.isclose(g, w, rtol=rtol, atol=ATOL * scale, equal_nan=True) & compared
        if bad.any():
            return k, tuple(int(i) for i in np.argwhere(bad)[0])
    return None
