"""Measure the learner's own GPU host: ``python -m chipsim calibrate --gpu-host``.

The host part of a GPU's per-op time (:class:`~chipsim.hw.HostProfile`) is the machine's, so
it is measured where it runs: with PyTorch on this machine's GPU, the way LLMCompass timed its
A100 (the call, then ``torch.cuda.synchronize()``, from the host clock; best of many calls):

* ``sync_us``: ``synchronize()`` alone, the GPU idle;
* ``framework_us``: a framework kernel (``torch.neg`` on one element) + sync, less the sync
  and the chip's own launch latency (``launch.device_cycles``);
* ``library_us``: a vendor-library call (a 16 x 16 ``torch.matmul``), likewise;
* ``wrapper_us``: a call through a Python-level wrapper (a ``torch.autograd.Function``), and
  half of it after the launch (``wrapper_overlap_us``; no timing separates the halves).

Without PyTorch or a GPU there is nothing to time: :func:`measure_gpu_host` says so. The
timing takes ``torch`` and a clock as arguments, so it is tested without a GPU.

Example:
    >>> import chipsim
    >>> gpu = chipsim.chip("datacenter-gpu")
    >>> t = {"sync": 5.0, "neg": 20.0, "matmul": 30.0, "wrapped": 50.0}  # us, call + sync
    >>> host_from_timings(t, gpu).framework_us  # 20 - 5 (sync) - 6 (the chip's launch latency)
    9.0
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import chipsim
from chipsim.errors import ChipsimError
from chipsim.hw import HostProfile


def _best_us(fn: Callable[[], Any], sync: Callable[[], Any], clock: Callable[[], float],
             calls: int) -> float:  # fmt: skip
    best = float("inf")
    for _ in range(calls):
        sync()
        start = clock()
        fn()
        sync()
        best = min(best, clock() - start)
    return best * 1e6


def time_host_calls(torch: Any, calls: int = 200, clock: Callable[[], float] = time.perf_counter):
    """Best host-clock microseconds of each probe call followed by a synchronisation."""
    cuda = torch.cuda
    one = torch.ones(1, device="cuda")
    a = torch.ones(16, 16, device="cuda", dtype=torch.float16)

    class Wrapped(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return torch.neg(x)

    def nothing() -> None:
        return None

    probes = {
        "sync": nothing,
        "neg": lambda: torch.neg(one),
        "matmul": lambda: torch.matmul(a, a),
        "wrapped": lambda: Wrapped.apply(one),
    }
    for fn in probes.values():  # warm up: first calls load kernels and libraries
        fn()
    cuda.synchronize()
    return {k: _best_us(fn, cuda.synchronize, clock, calls) for k, fn in probes.items()}


def host_from_timings(
    t: dict[str, float], chip: chipsim.Chip, name: str = "this-host"
) -> HostProfile:
    """The host profile the probe timings say (see the module doc), against ``chip``'s launch
    latency; every dispatch at least 0.5 us."""
    device_us = chip.launch.device_cycles / chip.clock_hz * 1e6
    sync = t["sync"]

    def dispatch(key: str) -> float:
        return round(max(0.5, t[key] - sync - device_us), 2)

    wrapper = dispatch("wrapped")
    return HostProfile(
        name,
        "measured by python -m chipsim calibrate --gpu-host",
        framework_us=dispatch("neg"),
        library_us=dispatch("matmul"),
        wrapper_us=wrapper,
        wrapper_overlap_us=round(wrapper / 2, 2),
        sync_us=round(sync, 2),
    )


def measure_gpu_host(chip: str | chipsim.Chip = "datacenter-gpu", torch: Any = None,
                     calls: int = 200) -> HostProfile:  # fmt: skip
    """Time this machine's GPU host with PyTorch (see the module doc).

    Raises:
        ChipsimError: PyTorch is not installed, or it sees no CUDA device.
    """
    if torch is None:
        try:
            import torch  # noqa: PLC0415 -- optional: only this command needs it
        except ImportError:
            raise ChipsimError(
                "measuring a GPU host needs PyTorch with a CUDA GPU; PyTorch is not installed "
                "here (pip install torch on a machine with a GPU, then run this again)"
            ) from None
    if not torch.cuda.is_available():
        raise ChipsimError("measuring a GPU host needs a CUDA GPU; PyTorch sees none here")
    return host_from_timings(time_host_calls(torch, calls), chipsim.chip(chip))
