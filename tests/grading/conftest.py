"""Every test here is marked ``grading`` (slow end-to-end nbgrader runs live here):
skip them with ``pytest -m "not grading"``."""

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/grading/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.grading)


@pytest.fixture
def grader_gives(monkeypatch, tmp_path):
    """As the grader does for a kernel: write the hidden instances' data of ``parts`` (bound
    to their seeds) and point the kernel at it; returns the file."""
    from grader.problems import data as problem_data

    def give(parts):
        path = tmp_path / f"hidden-{len(list(tmp_path.glob('hidden-*')))}.json"
        problem_data.write(list(parts), path)
        monkeypatch.setenv(problem_data.HIDDEN_FILE_ENV, str(path))
        return path

    return give
