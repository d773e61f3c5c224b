"""Fixtures for the translation tests: locales/editions.py loaded as a module."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def editions():
    """``locales/editions.py`` (editions, catalogue tools) under the name tests/book uses."""
    name = "chipsim_locales_editions"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "locales" / "editions.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
