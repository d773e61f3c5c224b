"""``make lab``'s Assignments tab in Chromium: a learner lists, fetches, validates and submits.

JupyterLab is started as ``make lab`` starts it (the project-local exchange,
``CHIPSIM_LOCAL_EXCHANGE``) on a copy of the course, by the ``lab`` fixture of
tests/grading/test_grading_local_exchange.py, which also drives the same steps through the
HTTP endpoints. Here a real browser clicks nbgrader's Assignment List: Fetch on ``fusion``,
Validate on the fetched notebook (the untouched release fails every part, and the dialog says
so), then Submit (the Submitted list gains the entry, and the exchange's inbound holds it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
from test_grading_local_exchange import TOKEN, lab  # noqa: E402, F401  (lab is a fixture)

pytestmark = pytest.mark.grading  # starts JupyterLab: slow, like the end-to-end grading tests

TIMEOUT = 120_000  # ms; JupyterLab's first load on a busy 2-core machine is slow


@pytest.fixture
def assignments(lab, page):  # noqa: F811  (the imported fixture)
    """The Assignment List panel of a freshly loaded JupyterLab, and the course folder."""
    base, course = lab
    page.goto(f"{base}/lab?token={TOKEN}", timeout=TIMEOUT)
    page.get_by_text("Nbgrader", exact=True).first.click(timeout=TIMEOUT)
    page.get_by_text("Assignment List", exact=True).first.click()
    page.locator("#released_assignments_list").get_by_text("memory_planning").first.wait_for(
        timeout=TIMEOUT
    )
    return page, course


def test_the_tab_lists_every_assignment(assignments, tmp_path):
    page, _ = assignments
    released = page.locator("#released_assignments_list")
    page.screenshot(path=str(tmp_path / "assignments.png"))
    text = released.inner_text()
    assert all(a in text for a in ("fusion", "memory_planning", "instruction_generation"))
    assert "does not exist" not in page.locator("body").inner_text()
    assert page.errors == [], page.errors


def test_fetch_validate_submit_by_clicking(assignments, tmp_path):
    page, course = assignments
    released = page.locator("#released_assignments_list .list_item", has_text="fusion")
    released.get_by_role("button", name="Fetch").click()

    fetched = page.locator("#fetched_assignments_list > .list_item", has_text="fusion")
    fetched.first.wait_for(timeout=TIMEOUT)
    assert (course / "my-work" / "fusion" / "fusion.ipynb").is_file()
    page.screenshot(path=str(tmp_path / "fetched.png"))

    fetched.locator("a.assignment-notebooks-link").first.click()  # show its notebooks
    validate = fetched.get_by_role("button", name="Validate")
    validate.click()
    dialog = page.locator(".jp-Dialog", has_text="Validation Results")
    dialog.wait_for(timeout=TIMEOUT)
    message = dialog.locator("#validation-message")
    page.screenshot(path=str(tmp_path / "validated.png"))
    # The untouched release is blank: Validate must say so (it used to report success).
    assert "validation-failed" in message.get_attribute("class")
    assert message.get_by_text("The following cell failed:").count() == 4
    dialog.get_by_role("button", name="Ok").click()
    dialog.wait_for(state="detached")
    assert "btn-danger" in validate.get_attribute("class")

    fetched.get_by_role("button", name="Submit").click()
    submitted = page.locator("#submitted_assignments_list > .list_item", has_text="fusion")
    submitted.first.wait_for(timeout=TIMEOUT)
    page.screenshot(path=str(tmp_path / "submitted.png"))
    assert page.locator("#submitted_assignments_list_placeholder").is_hidden()
    inbound = course / "gradebook" / "exchange" / "chipsim-ch4" / "inbound"
    assert [p.name for p in inbound.iterdir() if "+fusion+" in p.name], list(inbound.iterdir())
    assert page.errors == [], page.errors
