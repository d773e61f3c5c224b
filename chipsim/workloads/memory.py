"""Static versus dynamic memory: the same computation, planned ahead or allocated on the fly.

Two workloads run twice each:

* **eager** — op by op on a :class:`~chipsim.runtime.ChipDevice`; every tensor gets a block
  from the caching allocator (:mod:`chipsim.hw.allocator`) when it is made and gives it back
  when Python drops it. We read the allocator's history: *allocated* bytes (live tensors),
  *reserved* bytes (segments taken from DRAM, live tensors plus the cache) and fragmentation.
* **static** — the same Python function traced and compiled with :func:`chipsim.compile`;
  the memory plan fixes every activation's offset before the run, so the footprint is known
  in advance and constant over time: weights + inputs/outputs + the activation arena.

Neither side updates weights in place: the eager step makes new weight tensors and the
compiled step writes them as outputs, so both hold old and new weights at the end of a step.

The workloads:

* :func:`training_loop` — forward and backward-like temporaries of an MLP, several steps;
* :func:`inference_service` — many requests whose number of rows (batch x sequence length)
  is drawn from a seeded distribution; the compiled side pads each request to a power-of-two
  bucket and compiles one program per bucket (the static way to serve varying shapes);
* :func:`out_of_memory_case` — the service on an edge NPU whose DRAM is cut down (with
  :func:`dataclasses.replace`) so that the static plan fits but the eager allocator fails.

Every function returns plain data (a :class:`~chipsim.workloads.footprint.MemoryComparison`);
:func:`plot_memory_over_time` draws one comparison. The MLP they run is in
:mod:`chipsim.workloads.mlp`.

Example:
    >>> cmp = training_loop(steps=2, batch=16, dims=(32, 64, 8))
    >>> cmp.static.total_bytes < cmp.eager.peak_reserved
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from chipsim.compiler import compile as compile_graph
from chipsim.errors import OutOfMemoryError
from chipsim.frontend.eager import Tensor
from chipsim.frontend.tracing import trace
from chipsim.hw.chip import Chip, get_chip
from chipsim.i18n import N_, tr
from chipsim.runtime.device import ChipDevice
from chipsim.workloads.footprint import MemoryComparison, _eager_memory, _static_memory
from chipsim.workloads.mlp import mlp_forward, mlp_params, mlp_train_step


# -- workload 1: a training loop ----------------------------------------------------------------
def training_loop(
    chip: str | Chip = "edge-npu",
    *,
    steps: int = 4,
    batch: int = 64,
    dims: Sequence[int] = (256, 512, 512, 10),
    seed: int = 0,
) -> MemoryComparison:
    """An MLP trained for ``steps`` steps, eagerly and as one compiled step (see module doc).

    Each step gets a fresh input batch and target (uploaded, as from a data loader); the
    parameters of step ``k + 1`` are the outputs of step ``k``.
    """
    target_chip = get_chip(chip)
    rng = np.random.default_rng(seed)
    params0 = mlp_params(dims, seed)
    x0 = rng.normal(size=(batch, dims[0])).astype(np.float32)
    t0 = rng.normal(size=(batch, dims[-1])).astype(np.float32)

    dev = ChipDevice(target_chip, functional=False)
    oom = None
    try:
        params = [Tensor.from_numpy(p, device=dev) for p in params0]
        for _ in range(steps):
            x = Tensor.from_numpy(x0, device=dev)
            t = Tensor.from_numpy(t0, device=dev)
            params = mlp_train_step(x, t, *params)
            del x, t
        del params
    except OutOfMemoryError as err:
        oom = str(err)
    eager = _eager_memory(dev, oom)

    def step(x: Any, t: Any, *ps: Any) -> list[Any]:
        return mlp_train_step(x, t, *ps)

    # trace with the parameters first so that they are the graph's first inputs
    graph = trace(lambda *a: step(a[-2], a[-1], *a[:-2]), *params0, x0, t0)
    program = compile_graph(graph, chip=target_chip)
    static = _static_memory([program], n_weights=len(params0))
    details = {
        "steps": steps,
        "batch": batch,
        "dims": tuple(dims),
        "eager_kernels_per_step": len(dev.spans) // steps if steps else 0,
        "compiled_kernels": len(program.kernels),
    }
    return MemoryComparison(N_("training loop (MLP)"), target_chip.name, eager, static, details)


# -- workload 2: an inference service with varying shapes ---------------------------------------
def request_rows(requests: int, seed: int = 0) -> list[int]:
    """Rows (batch x sequence length) of each request: batch 1..8, sequence 8..128 tokens."""
    rng = np.random.default_rng(seed)
    batch = rng.integers(1, 9, size=requests)
    seq = np.minimum(128, np.maximum(8, rng.geometric(1 / 48, size=requests)))
    return [int(b * s) for b, s in zip(batch, seq, strict=False)]


def bucket(rows: int) -> int:
    """The power-of-two bucket a request is padded to (at least 16 rows)."""
    return max(16, 1 << (rows - 1).bit_length())


def inference_service(
    chip: str | Chip = "edge-npu",
    *,
    requests: int = 60,
    dims: Sequence[int] = (128, 512, 128),
    seed: int = 0,
) -> MemoryComparison:
    """A long-running MLP service: ``requests`` requests of varying rows (see module doc).

    Eagerly, the weights are uploaded once and every request allocates its own activations;
    the allocator never empties its cache (as in a real server). Compiled, each request is
    padded to its bucket and run by that bucket's program (compiled once).
    """
    target_chip = get_chip(chip)
    rows = request_rows(requests, seed)
    params0 = mlp_params(dims, seed)

    dev = ChipDevice(target_chip, functional=False)
    oom, served = None, 0
    try:
        params = [Tensor.from_numpy(p, device=dev) for p in params0]
        for r in rows:
            x = Tensor.from_numpy(np.zeros((r, dims[0]), np.float32), device=dev)
            y = mlp_forward(x, *params)
            del x, y
            served += 1
    except OutOfMemoryError as err:
        oom = tr("request {n} ({rows} rows): {error}", n=served, rows=rows[served], error=err)
    eager = _eager_memory(dev, oom)

    buckets = sorted(dict.fromkeys(bucket(r) for r in rows))
    programs = [
        compile_graph(
            trace(lambda *a: mlp_forward(a[-1], *a[:-1]), *params0, np.zeros((b, dims[0]), "f4")),
            chip=target_chip,
        )
        for b in buckets
    ]
    static = _static_memory(programs, n_weights=len(params0))
    padded = sum(bucket(r) for r in rows)
    details = {
        "requests": requests,
        "served_eagerly": served,
        "rows_min": min(rows),
        "rows_max": max(rows),
        "buckets": tuple(buckets),
        "padding_overhead": round(padded / sum(rows) - 1.0, 4),
    }
    return MemoryComparison(N_("inference service (MLP)"), target_chip.name, eager, static, details)


# -- the out-of-memory case ---------------------------------------------------------------------
def small_dram_chip(capacity_bytes: int, base: str | Chip = "edge-npu") -> Chip:
    """``base`` with its DRAM cut to ``capacity_bytes`` (everything else unchanged)."""
    chip = get_chip(base)
    dram = dataclasses.replace(chip.dram, capacity_bytes=int(capacity_bytes))
    return dataclasses.replace(chip, name=f"{chip.name}-{capacity_bytes >> 20}MiB", dram=dram)


def out_of_memory_case(
    capacity_bytes: int = 6 << 20, *, requests: int = 60, seed: int = 0
) -> MemoryComparison:
    """The inference service on an edge NPU with only ``capacity_bytes`` of DRAM.

    With the default 6 MiB the compiled programs fit (about 4.5 MiB, checked by simulating
    each on the small chip), but the eager allocator's cached, fragmented blocks run the chip
    out of memory part-way; ``eager.oom`` holds the error message, which says how much memory
    was free but fragmented.
    """
    chip = small_dram_chip(capacity_bytes)
    cmp = inference_service(chip, requests=requests, seed=seed)
    details = dict(cmp.details, dram_capacity=capacity_bytes)
    return dataclasses.replace(cmp, workload=N_("inference service, small DRAM"), details=details)


# -- the picture --------------------------------------------------------------------------------
def plot_memory_over_time(cmp: MemoryComparison, ax: Any = None) -> Any:
    """Eager allocated and reserved bytes per allocator event, and the static footprint.

    Returns the matplotlib Axes (one figure: three lines, MiB over allocator events).
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3.5))
    events = [s.event for s in cmp.eager.history]
    mib = 1 / 2**20
    ax.plot(events, [s.reserved * mib for s in cmp.eager.history], label=tr("eager: reserved"))
    ax.plot(events, [s.allocated * mib for s in cmp.eager.history], label=tr("eager: allocated"))
    ax.axhline(
        cmp.static.total_bytes * mib,
        color="black",
        linestyle="--",
        label=tr("static plan (weights + I/O + arena)"),
    )
    if cmp.eager.oom:
        ax.axvline(events[-1] if events else 0, color="red", linestyle=":", label=tr("eager OOM"))
    ax.set_xlabel(tr("allocator event (malloc or free)"))
    ax.set_ylabel(tr("DRAM (MiB)"))
    ax.set_title(
        tr(
            "{workload} on {chip}: static / eager reserved = {ratio:.2f}",
            workload=tr(cmp.workload),
            chip=cmp.chip,
            ratio=cmp.ratio,
        )
    )
    ax.legend(loc="upper left", fontsize="small")
    return ax
