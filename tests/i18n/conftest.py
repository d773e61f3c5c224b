"""Fixtures for the translation tests: locales/editions.py and locales/catalogues.py."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

LOCALES = Path(__file__).resolve().parents[2] / "locales"


def _load(name: str):
    if str(LOCALES) not in sys.path:
        sys.path.insert(0, str(LOCALES))
    return importlib.import_module(name)


@pytest.fixture(scope="session")
def editions():
    """``locales/editions.py``: the book's editions."""
    return _load("editions")


@pytest.fixture(scope="session")
def catalogues():
    """``locales/catalogues.py``: templates, catalogue updates and checks."""
    return _load("catalogues")


@pytest.fixture
def english_by_default(monkeypatch):
    """English unless a test chooses: no CHIPSIM_LANG from the environment, no language left
    set by an earlier test (a module opts in with ``pytestmark``)."""
    from chipsim import i18n

    monkeypatch.delenv("CHIPSIM_LANG", raising=False)
    i18n.set_language(None)
    yield
    i18n.set_language(None)
