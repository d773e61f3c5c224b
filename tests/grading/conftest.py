"""Every test here is marked ``grading`` (slow end-to-end nbgrader runs live here):
skip them with ``pytest -m "not grading"``."""

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/grading/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.grading)
