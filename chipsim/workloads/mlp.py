"""A small MLP written as plain tensor code: the computation of the memory workloads.

The same functions run eagerly on a device (every tensor allocated as it is made) and trace
into a graph for :func:`chipsim.compile`, so :mod:`chipsim.workloads.memory` can compare the
two on exactly the same computation.

* :func:`mlp_params` — seeded weights and biases;
* :func:`mlp_forward` — the forward pass;
* :func:`mlp_train_step` — one step of gradient descent, freeing saved tensors as autograd does.

Example:
    >>> import numpy as np
    >>> params = mlp_params((4, 8, 2))
    >>> [p.shape for p in params]
    [(4, 8), (8,), (8, 2), (2,)]
    >>> from chipsim import tensor
    >>> mlp_forward(tensor(np.ones((3, 4), np.float32)), *map(tensor, params)).shape
    (3, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from chipsim.frontend.functions import where


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
