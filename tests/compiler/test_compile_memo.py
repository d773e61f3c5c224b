"""Compiling again reuses the kernels it lowered before, and gives exactly what a fresh compile
gives (``chipsim.codegen.link``'s memo; ``chipsim.hw.chip``'s chips read from files)."""

from __future__ import annotations

import json
import os

import pytest

import chipsim as cs
import chipsim.codegen.link as link
from chipsim.hw import get_chip
from chipsim.hw.chip import Chip
from chipsim.workloads.blocks import transformer_graph

# fusion strategies and planners that move kernels and addresses between compiles
VARIANTS = [
    (fusion, planner)
    for fusion in (None, "elementwise", "reference")
    for planner in ("greedy_by_size", "first_fit", None)
]


def _said(program) -> list:
    """What a program says: its instructions (they compare by identity) and its times."""
    text = [(str(i), i.work, i.hw_ops, i.flops, i.kernel, i.label) for i in program.instructions]
    report = program.report
    return [text, report.cycles, [(k.name, k.cycles) for k in report.kernels]]


@pytest.mark.parametrize("chip", ["edge-npu", "datacenter-gpu"])
def test_a_search_of_compiles_gives_what_fresh_compiles_give(chip, monkeypatch):
    graph = transformer_graph(3, seq=48, d=32, ff=96, act="gelu", extra=0.5)
    remembered = []
    for _ in range(2):  # the second round hits the memo on every kernel
        for fusion, planner in VARIANTS:
            remembered.append(_said(cs.compile(graph, chip=chip, fusion=fusion, planner=planner)))
    fresh = []
    for _ in range(2):
        for fusion, planner in VARIANTS:
            monkeypatch.setattr(link, "_LINKED", {})  # nothing remembered
            fresh.append(_said(cs.compile(graph, chip=chip, fusion=fusion, planner=planner)))
    assert remembered == fresh


def test_compiling_again_shares_the_lowered_kernels_and_only_those(monkeypatch):
    graph = transformer_graph(4, seq=32, d=32, ff=64, act="relu")
    first = cs.compile(graph, fusion="reference")
    again = cs.compile(graph, fusion="reference")
    kernels = [i for i in first.instructions if i.kernel != "load_inputs"]
    assert kernels and all(any(i is j for j in again.instructions) for i in kernels)
    other = cs.compile(graph, fusion="reference", planner=None)  # other addresses
    moved = {k.name for k, o in zip(first.kernels, other.kernels, strict=True)
             if k.location != o.location}  # fmt: skip
    assert moved, "the two planners should place some tensors differently"
    shared = {i.kernel for i in other.instructions if any(i is j for j in first.instructions)}
    assert not moved & shared
    monkeypatch.setattr(link, "_LINKED", {})
    assert not set(map(id, cs.compile(graph, fusion="reference").instructions)) & set(
        map(id, first.instructions)
    )


def test_the_memo_is_bounded_by_the_instructions_it_holds(monkeypatch):
    monkeypatch.setattr(link, "_LINKED", {})
    monkeypatch.setattr(link, "_linked_size", 0)
    monkeypatch.setattr(link, "_LINKED_LIMIT", 50)
    graph = transformer_graph(5, seq=32, d=32, ff=64, act="tanh")
    for fusion in (None, "elementwise", "reference"):
        cs.compile(graph, fusion=fusion)
        assert link._linked_size <= 50
        held = sum(len(v) if isinstance(v, tuple) else 1 for v in link._LINKED.values())
        assert held == link._linked_size


def test_a_chip_file_written_again_is_read_again(tmp_path):
    path = tmp_path / "mine.json"
    data = get_chip("edge-npu").to_dict()
    path.write_text(json.dumps(data))
    chip = get_chip(str(path))
    assert get_chip(str(path)) is chip  # read once
    data["dram"]["capacity_bytes"] = 2 * chip.dram.capacity_bytes
    path.write_text(json.dumps(data))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a later write
    assert get_chip(str(path)).dram.capacity_bytes == 2 * chip.dram.capacity_bytes
    assert isinstance(get_chip("edge-npu"), Chip) and get_chip("edge-npu") is get_chip("edge-npu")
