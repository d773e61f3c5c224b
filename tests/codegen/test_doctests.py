"""The examples in the docstrings of the code generator, runtime, hardware and placement run
and print what they say (a stale example is a bug a learner copies)."""

import doctest
import importlib

import pytest

MODULES = [
    "chipsim.codegen.block_sizes",
    "chipsim.codegen.blocked",
    "chipsim.codegen.contraction",
    "chipsim.codegen.dma",
    "chipsim.codegen.kernel",
    "chipsim.codegen.lower",
    "chipsim.codegen.planning",
    "chipsim.codegen.streaming",
    "chipsim.codegen.units",
    "chipsim.hw.allocator",
    "chipsim.hw.simulator",
    "chipsim.ir.graph",
    "chipsim.passes.placement",
    "chipsim.runtime.device",
    "chipsim.runtime.program",
    "chipsim.runtime.report",
    "chipsim.workloads.eager",
    "chipsim.workloads.footprint",
    "chipsim.workloads.memory",
    "chipsim.workloads.mlp",
    "chipsim.workloads.overfusion",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
