"""chipsim.target: the memory levels (one enum) and the Chip protocol the passes are typed
against."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

import chipsim as cs
from chipsim.hw import get_chip
from chipsim.target import LEVELS, Chip, Level


def test_a_level_is_its_name_in_every_way_that_shows():
    assert LEVELS == (Level.DRAM, Level.SRAM, Level.REG)
    assert [str(lv) for lv in LEVELS] == ["dram", "sram", "reg"]
    assert {"dram": 1}[Level.DRAM] == 1 and {Level.SRAM: 2}["sram"] == 2
    assert repr(Level.REG) == "'reg'" and f"{Level.DRAM:>5}" == " dram"
    assert json.dumps({Level.SRAM: Level.DRAM}) == '{"sram": "dram"}'
    assert Level("sram") is Level.SRAM


@pytest.mark.parametrize("name", cs.chips())
def test_every_preset_is_a_chip_to_the_passes(name):
    assert isinstance(get_chip(name), Chip)


def test_a_stand_in_needs_every_field():
    assert not isinstance(SimpleNamespace(name="x", sram=SimpleNamespace(capacity_bytes=1)), Chip)


def test_compiled_programs_place_tensors_on_levels():
    prog = cs.compile(lambda x: (x + 1).relu(), __import__("numpy").zeros(64, "float32"))
    assert {slot.level for slot in prog.placement.slots.values()} <= set(LEVELS)
    assert all(isinstance(slot.level, Level) for slot in prog.placement.slots.values())
    assert all(isinstance(o.level, Level) for i in prog.instructions for o in (*i.srcs, *i.dsts))
