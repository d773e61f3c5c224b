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

Every function returns plain data; :func:`plot_memory_over_time` draws one comparison.

Example:
    >>> cmp = training_loop(steps=2, batch=16, dims=(32, 64, 8))
    >>> cmp.static.total_bytes < cmp.eager.peak_reserved
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsim.compiler import compile as compile_graph
from chipsim.errors import OutOfMemoryError
from chipsim.frontend.eager import Tensor
from chipsim.frontend.functions import where
from chipsim.frontend.tracing import trace
from chipsim.hw.allocator import MemorySample
from chipsim.hw.chip import Chip, get_chip
from chipsim.i18n import N_, tr
from chipsim.passes.memory.liveness import align_up
from chipsim.passes.placement import ALIGN
from chipsim.runtime.device import ChipDevice


def _aligned(n: int) -> int:
    return align_up(n, ALIGN)


# -- the computations (plain tensor code: runs eagerly and traces) ------------------------------
def mlp_params(dims: Sequence[int], seed: int = 0) -> list[np.ndarray]:
    """Weights and biases ``[W1, b1, W2, b2, ...]`` of an MLP with layer widths ``dims``."""
    rng = np.random.default_rng(seed)
    params: list[np.ndarray] = []
    for din, dout in zip(dims[:-1], dims[1:], strict=True):
        params.append((rng.normal(size=(din, dout)) / np.sqrt(din)).astype(np.float32))
        params.append(np.zeros(dout, np.float32))
    return params


def mlp_forward(x: Any, *params: Any) -> Any:
    """relu(x @ W + b) per layer, no activation after the last one."""
    h = x
    layers = len(params) // 2
    for i in range(layers):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < layers - 1:
            h = h.relu()
    return h


def mlp_train_step(x: Any, target: Any, *params: Any, lr: float = 0.01) -> list[Any]:
    """One step of gradient descent on the squared error; returns the new parameters.

    Written like autograd runs it: the forward pass saves its activations, the backward pass
    walks the layers in reverse and drops each saved tensor once it has been used (so an
    eager run frees them in that order).
    """
    layers = len(params) // 2
    saved_in: list[Any] = []  # the input of each layer (for dW)
    saved_pre: list[Any] = []  # each pre-activation (for the relu mask)
    h = x
    for i in range(layers):
        saved_in.append(h)
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < layers - 1:
            saved_pre.append(h)
            h = h.relu()
    grad = (h - target) * (2.0 / float(np.prod(h.shape)))
    del h
    new: list[Any] = [None] * len(params)
    for i in reversed(range(layers)):
        if i < layers - 1:
            grad = where(saved_pre[i] > 0.0, grad, 0.0)
            saved_pre[i] = None
        d_w = saved_in[i].T @ grad
        saved_in[i] = None
        d_b = grad.sum(axes=(0,))
        if i > 0:
            grad = grad @ params[2 * i].T
        new[2 * i] = params[2 * i] - d_w * lr
        new[2 * i + 1] = params[2 * i + 1] - d_b * lr
        del d_w, d_b
    return new


# -- results ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class EagerMemory:
    """What the caching allocator saw during an eager run.

    Attributes:
        peak_allocated: most bytes held by live tensors at once.
        peak_reserved: most bytes taken from DRAM in segments (live tensors + cache).
        max_fragmentation: worst share of the cache outside its largest free block.
        history: one sample per malloc/free (event, allocated, reserved, largest free block).
        oom: the :class:`OutOfMemoryError` message if the run failed, else ``None``.
    """

    peak_allocated: int
    peak_reserved: int
    max_fragmentation: float
    history: tuple[MemorySample, ...]
    oom: str | None = None

    def fragmentation(self) -> list[float]:
        """Fragmentation after every allocator event (0 when nothing is cached)."""
        out = []
        for s in self.history:
            cached = s.reserved - s.allocated
            out.append(0.0 if cached <= 0 else 1.0 - min(s.largest_free, cached) / cached)
        return out


@dataclass(frozen=True, slots=True)
class StaticMemory:
    """The footprint of the compiled program(s): fixed before the run, constant during it.

    Attributes:
        weights_bytes: parameters (graph inputs or constants), each 64-byte aligned.
        io_bytes: the other inputs and the outputs.
        arena_bytes: the memory plan's activation arena (largest over the programs).
        arena_lower_bound: peak live activation bytes; no plan can do better.
        programs: how many programs were compiled (one per shape bucket).
        dram_peak: highest DRAM address any program touches, measured by simulating it
            (weights, inputs, outputs, the spilled part of the arena, kernel scratch).
    """

    weights_bytes: int
    io_bytes: int
    arena_bytes: int
    arena_lower_bound: int
    programs: int = 1
    dram_peak: int = 0

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.io_bytes + self.arena_bytes


@dataclass(frozen=True, slots=True)
class MemoryComparison:
    """Eager (dynamic) versus compiled (static) memory for one workload on one chip."""

    workload: str
    chip: str
    eager: EagerMemory
    static: StaticMemory
    details: dict[str, Any]

    @property
    def ratio(self) -> float:
        """Static total / eager peak reserved (below 1: the static plan needs less)."""
        return self.static.total_bytes / self.eager.peak_reserved

    def as_dict(self) -> dict[str, Any]:
        """Plain numbers for tables (the history is left out)."""
        return {
            "workload": self.workload,
            "chip": self.chip,
            "eager_peak_allocated": self.eager.peak_allocated,
            "eager_peak_reserved": self.eager.peak_reserved,
            "eager_max_fragmentation": round(self.eager.max_fragmentation, 4),
            "eager_oom": self.eager.oom,
            "static_weights": self.static.weights_bytes,
            "static_io": self.static.io_bytes,
            "static_arena": self.static.arena_bytes,
            "static_arena_lower_bound": self.static.arena_lower_bound,
            "static_total": self.static.total_bytes,
            "static_programs": self.static.programs,
            "static_dram_peak": self.static.dram_peak,
            "static_over_eager_reserved": round(self.ratio, 4),
            "static_over_eager_allocated": round(
                self.static.total_bytes / self.eager.peak_allocated, 4
            ),
            **self.details,
        }


def _eager_memory(dev: ChipDevice, oom: str | None = None) -> EagerMemory:
    alloc = dev.allocator
    mem = EagerMemory(alloc.peak_allocated, alloc.peak_reserved, 0.0, tuple(alloc.history), oom)
    return dataclasses.replace(mem, max_fragmentation=max(mem.fragmentation(), default=0.0))


def _static_memory(programs: Sequence[Any], n_weights: int) -> StaticMemory:
    """Footprint of programs that run one at a time and share their first ``n_weights`` inputs.

    Weights are counted once; inputs/outputs and the arena are the largest of any program
    (a server reserves room for its largest bucket up front).
    """
    weights = io = arena = bound = peak = 0
    for prog in programs:
        peak = max(peak, prog.report.peak_bytes["dram"])  # the simulator checks the bounds
        g = prog.graph
        w = sum(_aligned(v.type.nbytes) for v in g.inputs[:n_weights])
        w += sum(
            _aligned(n.type.nbytes)
            for n in g.nodes
            if n.op == "constant" and prog.placement.level(n.output) == "dram"
        )
        weights = max(weights, w)
        rest = [*g.inputs[n_weights:], *g.outputs]
        io = max(io, sum(_aligned(v.type.nbytes) for v in dict.fromkeys(rest)))
        arena = max(arena, prog.plan.arena_size)
        bound = max(bound, prog.plan.lower_bound)
    return StaticMemory(weights, io, arena, bound, len(programs), peak)


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
        oom = f"request {served} ({rows[served]} rows): {err}"
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
