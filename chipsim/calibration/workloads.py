"""The workloads a measurement can name, written once for every backend.

A workload is a function of an *ops namespace* and input tensors. The same function runs on
numpy (:data:`NUMPY`, to time this machine) and on a simulated chip (:class:`ChipOps`, to
simulate it), so measured and simulated times always describe the same computation, call
for call: one numpy call is one eager chipsim op.

Example:
    >>> import numpy as np
    >>> x = np.array([[-1.0, 2.0]], np.float32)
    >>> WORKLOADS["chain"](NUMPY, x).tolist()   # relu((x + 1) * 2)
    [[0.0, 6.0]]
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

import chipsim
from chipsim.hw import Instr


def _softmax_composed(ops: Any, x: Any) -> Any:
    """Softmax as five eager calls (max, sub, exp, sum, div), as numpy code writes it."""
    e = ops.exp(ops.sub(x, ops.max(x, -1, True)))
    return ops.div(e, ops.sum(e, -1, True))


def _rmsnorm_llama(ops: Any, x: Any) -> Any:
    """Hugging Face's LlamaRMSNorm in eager PyTorch, kernel for kernel: x.to(f32), pow(2),
    mean, + eps, rsqrt, *, .to(bf16), then the f32 weight times it (an f32 result: its traffic,
    read bf16 and write f32, is the cast's; the weight's few bytes are left out)."""
    h = ops.cast(x, chipsim.f32)
    r = ops.rsqrt(ops.add(ops.mean(ops.mul(h, h), -1, True), 1e-6))
    return ops.cast(ops.cast(ops.mul(h, r), chipsim.bf16), chipsim.f32)


WORKLOADS: dict[str, Callable[..., Any]] = {
    # one op each: the published A100 rows
    "matmul": lambda ops, a, b: ops.matmul(a, b),
    "softmax": lambda ops, x: ops.softmax(x),
    "layernorm": lambda ops, x: ops.layernorm(x),
    "gelu": lambda ops, x: ops.gelu(x),
    "rmsnorm": lambda ops, x: ops.rmsnorm(x),
    "rmsnorm_llama": _rmsnorm_llama,
    # this machine's calibration and held-out programs
    "add": lambda ops, x, y: ops.add(x, y),
    "exp": lambda ops, x: ops.exp(x),
    "chain": lambda ops, x: ops.relu(ops.mul(ops.add(x, 1.0), 2.0)),
    "softmax_composed": _softmax_composed,
}

NUMPY = SimpleNamespace(
    matmul=np.matmul,
    add=np.add,
    sub=np.subtract,
    mul=np.multiply,
    div=np.divide,
    exp=np.exp,
    relu=lambda x: np.maximum(x, 0),
    max=lambda x, axis, keepdims: np.max(x, axis=axis, keepdims=keepdims),
    sum=lambda x, axis, keepdims: np.sum(x, axis=axis, keepdims=keepdims),
)
"""The numpy calls the CPU workloads are timed with (one call = one eager kernel)."""


def workload(name: str) -> Callable[..., Any]:
    """The workload function called ``name``; the error lists the known ones."""
    try:
        return WORKLOADS[name]
    except KeyError:
        raise KeyError(
            f"unknown workload {name!r}; known: {', '.join(WORKLOADS)} "
            f"(add it to chipsim.calibration.workloads.WORKLOADS)"
        ) from None


def synchronize(dev: Any) -> int:
    """Wait for the simulated chip, as ``torch.cuda.synchronize()`` does; the host's clock.

    Uses ``dev.synchronize()`` where the device has one; otherwise runs the same host
    ``sync`` instruction that ``download`` runs (timing-only devices cannot download).
    """
    sync = getattr(dev, "synchronize", None)
    if callable(sync):
        sync()
    else:
        dev.sim.run([Instr("sync", "host", label="synchronize")])
    return dev.cycles


class ChipOps:
    """The chipsim functions as an ops namespace; ``synchronous`` waits after every call.

    A CPU running numpy computes each call before returning (the host *is* the chip), so
    CPU workloads are simulated with ``synchronous=True``; a GPU queues kernels ahead.
    """

    def __init__(self, dev: Any, synchronous: bool = False) -> None:
        self._dev = dev
        self._synchronous = synchronous

    def __getattr__(self, name: str) -> Callable[..., Any]:
        fn = getattr(chipsim.ops, name)

        def call(*args: Any) -> Any:
            if name in ("max", "sum", "mean"):  # numpy's (x, axis, keepdims) -> chipsim's
                x, axis, keepdims = args
                out = fn(x, axis, keepdims=keepdims)
            else:
                out = fn(*args)
            if self._synchronous:
                synchronize(self._dev)
            return out

        return call
