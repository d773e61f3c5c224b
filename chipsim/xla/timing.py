"""Wall time on this machine: a graph eagerly with numpy, and compiled by XLA (``jax.jit``).

* **eager** — :func:`numpy_eager`: every node is one call of the op's numpy semantics (the
  op registry's ``compute``), one after the other, each result a fresh array: what an eager
  framework does on a CPU, minus its dispatch machinery;
* **compiled** — ``jax.jit`` of :func:`~chipsim.xla.bridge.to_jax`'s function, called with
  the weights already on the device, waiting for each result (``block_until_ready``).

:func:`measure_wall` times both in a fresh Python process pinned to ``threads`` cores, with
numpy's BLAS limited to as many threads (default one core: ``cpu-simd`` models one core, and
a shared machine's other cores are not ours), alternating eager and compiled samples so that
both see the same load. A sample is the mean of enough calls to last ``min_sample_s``; the
result keeps every sample, so a reader can quote the median and the spread.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> import numpy as np
    >>> b = GraphBuilder(); x = b.input((4,), f32)
    >>> g = b.build(b.op("mul", b.op("add", x, b.const(1.0)), b.const(2.0)))
    >>> numpy_eager(g)(np.ones(4, np.float32))[0].tolist()
    [4.0, 4.0, 4.0, 4.0]
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chipsim.errors import ChipsimError
from chipsim.ir.graph import Graph
from chipsim.ir.ops import check_attrs, get_op
from chipsim.ir.serialize import graph_from_json, graph_to_json
from chipsim.xla.bridge import load_jax, to_jax

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


#: One eager call: ``(op name, compute, input values, checked attrs, output value)``.
Step = tuple[str, Callable[..., np.ndarray], tuple, Mapping[str, Any], Any]


def eager_steps(graph: Graph) -> tuple[dict[Any, np.ndarray], list[Step]]:
    """``graph`` as an eager run sees it: its constants' arrays (value -> array, made once)
    and one step per other node, in order, its op's numpy semantics (the registry's
    ``compute``) with attributes checked. :func:`numpy_eager` runs the steps;
    :func:`numpy_op_seconds` times them one by one."""
    consts: dict[Any, np.ndarray] = {}
    steps: list[Step] = []
    for node in graph.nodes:
        if node.is_constant:
            consts[node.output] = node.attrs["value"].array()
        else:
            opdef = get_op(node.op)
            attrs = check_attrs(opdef, node.attrs)
            steps.append((node.op, opdef.compute, tuple(node.inputs), attrs, node.output))
    return consts, steps


def numpy_eager(graph: Graph) -> Callable[..., list[np.ndarray]]:
    """``graph`` as a Python function of numpy calls, one per node (constants made once)."""
    consts, steps = eager_steps(graph)

    def run(*arrays: np.ndarray) -> list[np.ndarray]:
        env = dict(consts)
        env.update(zip(graph.inputs, arrays, strict=True))
        for _op, compute, inputs, attrs, out in steps:
            env[out] = compute([env[v] for v in inputs], attrs)
        return [env[v] for v in graph.outputs]

    return run


def numpy_op_seconds(
    graph: Graph,
    arrays: list[np.ndarray] | None = None,
    calls: int = 5,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Seconds of :func:`numpy_eager`'s calls, operator by operator: for each op name, the sum
    over its nodes of the node's best of ``calls`` calls (in this process, with its BLAS
    threads, on the inputs as the eager run computes them; ``arrays`` default to zeros).
    Where an eager run's time goes, to hold beside a simulated eager run's kernels;
    :func:`measure_wall` reports it for every graph (``WallTimes.per_op``)."""
    consts, steps = eager_steps(graph)
    env = dict(consts)
    inputs = arrays or [np.zeros(v.shape, v.dtype.numpy) for v in graph.inputs]
    env.update(zip(graph.inputs, inputs, strict=True))
    seconds: dict[str, float] = {}
    for op, compute, inputs_of, attrs, out in steps:
        args = [env[v] for v in inputs_of]
        best = math.inf
        for _ in range(calls):
            start = clock()
            env[out] = compute(args, attrs)
            best = min(best, clock() - start)
        seconds[op] = seconds.get(op, 0.0) + best
    return seconds


@dataclass(frozen=True)
class WallTimes:
    """Measured seconds per call of one graph, eager and compiled, every sample kept.

    Attributes:
        eager: seconds per eager call, one value per sample.
        compiled: seconds per ``jax.jit`` call, one value per sample.
        compile_seconds: XLA's compile time (tracing, passes, code generation), once.
        threads: the BLAS / XLA threads the measuring process used.
        per_op: the eager road one operator at a time, in the same process
            (:func:`numpy_op_seconds`: op name -> seconds), after the samples.
    """

    eager: tuple[float, ...]
    compiled: tuple[float, ...]
    compile_seconds: float
    threads: int
    per_op: Mapping[str, float] = field(default_factory=dict)

    @staticmethod
    def _quartiles(values: tuple[float, ...]) -> tuple[float, float, float]:
        q = statistics.quantiles(values, n=4, method="inclusive")
        return q[0], statistics.median(values), q[2]

    @property
    def eager_median(self) -> float:
        return statistics.median(self.eager)

    @property
    def compiled_median(self) -> float:
        return statistics.median(self.compiled)

    @property
    def speedup(self) -> float:
        """Median eager time / median compiled time."""
        return self.eager_median / self.compiled_median

    def speedup_range(self) -> tuple[float, float]:
        """The speed-up between the quartiles: (eager q1 / compiled q3, eager q3 / compiled q1)."""
        e1, _, e3 = self._quartiles(self.eager)
        c1, _, c3 = self._quartiles(self.compiled)
        return e1 / c3, e3 / c1

    def spread(self) -> float:
        """The larger relative interquartile range of the two: (q3 - q1) / median."""
        out = 0.0
        for values in (self.eager, self.compiled):
            q1, med, q3 = self._quartiles(values)
            out = max(out, (q3 - q1) / med)
        return out


def pin_to_cores(threads: int) -> None:
    """Run this process (and every thread XLA starts later) on ``threads`` cores, where the
    system allows it (Linux); 0 leaves it alone. XLA sizes its thread pools by the cores a
    process may use, so this limits XLA whatever its version's flags are called."""
    if threads > 0 and hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, set(cores[:threads]))


def _sample(fn: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def _calls_for(fn: Callable[[], Any], min_sample_s: float) -> int:
    """Calls that make one sample last ``min_sample_s`` (one warm-up call first)."""
    fn()
    once = _sample(fn, 1)
    return max(1, min(10_000, int(min_sample_s / max(once, 1e-7)) + 1))


def _time_graph(graph: Graph, samples: int, min_sample_s: float) -> dict[str, Any]:
    """In the measuring process: eager and compiled samples of one graph, alternating."""
    jax = load_jax()
    jg = to_jax(graph)
    args = jg.example_args()
    eager = numpy_eager(graph)
    inputs = args[: len(graph.inputs)]
    start = time.perf_counter()
    jitted = jax.jit(jg.fn)
    device_args = [jax.device_put(a) for a in args]
    jax.block_until_ready(jitted(*device_args))
    compile_seconds = time.perf_counter() - start

    def run_eager() -> Any:
        return eager(*inputs)

    def run_compiled() -> Any:
        return jax.block_until_ready(jitted(*device_args))

    got, want = np.asarray(run_compiled()), run_eager()[0]
    error = float(np.max(np.abs(got - want))) / max(1.0, float(np.max(np.abs(want))))
    if error > 1e-3:  # relative to the output's scale: float32 sums in another order
        raise ChipsimError(
            f"graph {graph.name}: jax.jit and numpy differ by {error:.2g} (relative to the "
            "largest output); a JAX translation in chipsim.xla.bridge.jax_ops() is wrong"
        )
    n_eager = _calls_for(run_eager, min_sample_s)
    n_compiled = _calls_for(run_compiled, min_sample_s)
    eager_s, compiled_s = [], []
    for _ in range(samples):
        eager_s.append(_sample(run_eager, n_eager))
        compiled_s.append(_sample(run_compiled, n_compiled))
    per_op = numpy_op_seconds(graph, list(inputs))
    return {
        "eager": eager_s,
        "compiled": compiled_s,
        "compile_seconds": compile_seconds,
        "per_op": per_op,
    }


def measure_wall(
    graphs: Mapping[str, Graph],
    *,
    samples: int = 15,
    min_sample_s: float = 0.01,
    threads: int = 1,
) -> dict[str, WallTimes]:
    """Time every graph eagerly and compiled in a fresh process (see the module docstring).

    Raises:
        ChipsimError: the measuring process failed; its error output is in the message.
    """
    env = dict(os.environ)
    if threads > 0:
        for var in THREAD_VARIABLES:
            env[var] = str(threads)
    with tempfile.TemporaryDirectory(prefix="chipsim-xla-") as tmp:
        names = list(graphs)
        for k, name in enumerate(names):
            Path(tmp, f"{k}.json").write_text(graph_to_json(graphs[name]), encoding="utf-8")
        args = [sys.executable, "-m", "chipsim.xla.timing", tmp, str(len(names))]
        args += [str(samples), str(min_sample_s), str(threads)]
        proc = subprocess.run(args, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ChipsimError(
            f"timing with numpy and jax.jit failed (exit code {proc.returncode}): "
            f"{proc.stderr.strip()[-2000:]}"
        )
    rows = json.loads(proc.stdout)
    return {
        name: WallTimes(
            tuple(r["eager"]), tuple(r["compiled"]), r["compile_seconds"], threads, r["per_op"]
        )
        for name, r in zip(names, rows, strict=True)
    }


def _main(argv: list[str]) -> int:
    """The measuring process: ``DIR COUNT SAMPLES MIN_SAMPLE_S THREADS``; prints JSON rows."""
    folder, count, samples, min_sample_s, threads = argv
    pin_to_cores(int(threads))
    rows = []
    for k in range(int(count)):
        graph = graph_from_json(Path(folder, f"{k}.json").read_text(encoding="utf-8"))
        rows.append(_time_graph(graph, int(samples), float(min_sample_s)))
    sys.stdout.write(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
