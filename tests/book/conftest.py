"""Fixtures for the book build tests: the strict build runs once per session."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def load_bookbuild():
    """Import tests/book/bookbuild.py under one shared name (also used by tests/browser)."""
    name = "chipsim_tests_bookbuild"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).with_name("bookbuild.py")
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


bookbuild = load_bookbuild()


@pytest.fixture(scope="session")
def book(tmp_path_factory):
    """The strict build of the whole book (built once per pytest session)."""
    return bookbuild.build_book(tmp_path_factory.getbasetemp() / "book-build")
