"""The SRAM working-set estimate and how the rule pass respects it (without the code
generator's own rule, in the share of SRAM kernels get: half)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from chipsim.errors import PassError
from chipsim.passes.fusion import max_tile_rows, rule_fusion, working_set_bytes

from . import graphs as G


def chip(capacity: int) -> SimpleNamespace:
    return SimpleNamespace(sram=SimpleNamespace(capacity_bytes=capacity))


def test_working_set_of_linear_relu_by_hand() -> None:
    g = G.linear_relu()  # x f32[8,16] @ W f32[16,32] + b f32[32], relu
    group = (1, 3, 4)
    weight = 16 * 32 * 4
    per_row = (16 + 32 + 32 + 32) * 4  # x, matmul out, add out, relu out
    bias = 32 * 4  # one row: counted whole
    assert working_set_bytes(g, group, 1) == weight + bias + per_row
    assert working_set_bytes(g, group, 8) == weight + bias + 8 * per_row
    assert working_set_bytes(g, group, 100) == working_set_bytes(g, group, 8)  # only 8 rows


def test_max_tile_rows_is_the_largest_that_fits() -> None:
    g = G.linear_relu()
    group = (1, 3, 4)
    per_row = (16 + 32 + 32 + 32) * 4
    base = working_set_bytes(g, group, 1) - per_row  # W and the one-row bias
    assert max_tile_rows(g, group, base + 3 * per_row) == 3
    assert max_tile_rows(g, group, base + 3 * per_row - 1) == 2
    assert max_tile_rows(g, group, base + per_row - 1) is None
    assert max_tile_rows(g, group, 10**9) == 8


def test_reference_splits_a_group_that_does_not_fit() -> None:
    g = G.linear_relu()
    assert len(rule_fusion(g, chip(10**6))) == 1
    # the weight alone (2 KiB) plus one row of each tensor fits; W + bias + 4 rows does not
    small = chip(2 * working_set_bytes(g, (1,), 1))  # kernels' tiles get half of SRAM
    partition = rule_fusion(g, small)
    assert str(partition) == "matmul: %2\nfused_add_relu: %4 %5"
    assert rule_fusion(g, sram_budget=1).groups == ((1,), (3,), (4,))


def test_sram_budget_overrides_chip_and_bad_chip_is_named() -> None:
    g = G.linear_relu()
    assert len(rule_fusion(g, chip(1), sram_budget=10**6)) == 1
    with pytest.raises(PassError, match="chip.sram.capacity_bytes"):
        rule_fusion(g, object())
