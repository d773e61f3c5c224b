"""``make lab``'s Assignments tab works on a learner's own machine: list, fetch, validate, submit.

The test starts JupyterLab as ``make lab`` does (``CHIPSIM_LOCAL_EXCHANGE`` set) on a copy of
the course and drives the nbgrader endpoints the Assignments tab calls. The same steps clicked
in Chromium: tests/browser/test_assignments_tab.py (which uses the ``lab`` fixture here).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from grading_course import ROOT, make_course

from grader.course.local_exchange import ENV

BIN = Path(sys.executable).parent
TOKEN = "chipsim-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("lab"))
    shutil.copytree(ROOT / "exercises", course / "exercises")
    port = _free_port()
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    env["PYTHONPATH"] = str(course / "pkg")
    env[ENV] = str(course / "gradebook" / "exchange")
    env["HOME"] = str(course)  # the learner's own identity, nothing of ours
    cmd = [str(BIN / "jupyter"), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1"]
    cmd += [f"--IdentityProvider.token={TOKEN}", f"--notebook-dir={course}", "--allow-root"]
    log = (course / "lab.log").open("w")
    proc = subprocess.Popen(cmd, cwd=course, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        yield base, course
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def call(base: str, path: str, data: dict | None = None, timeout: int = 300):
    url = f"{base}{path}"
    body = None
    if data is not None:
        body = urllib.parse.urlencode(data).encode()
    req = urllib.request.Request(url, data=body, headers={"Authorization": f"token {TOKEN}"})
    if body is not None:
        xsrf = "x"
        req.add_header("Cookie", f"_xsrf={xsrf}")
        req.add_header("X-XSRFToken", xsrf)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def test_assignments_tab_lists_fetches_validates_and_submits(lab):
    base, course = lab
    listed = call(base, "/assignments?course_id=chipsim-ch4")
    assert listed["success"], listed
    released = {a["assignment_id"] for a in listed["value"] if a["status"] == "released"}
    assert released == {"fusion", "memory_planning", "instruction_generation"}
    assert (course / "gradebook" / "exchange" / "chipsim-ch4" / "outbound" / "fusion").is_dir()

    fetched = call(
        base, "/assignments/fetch", {"course_id": "chipsim-ch4", "assignment_id": "fusion"}
    )
    assert fetched["success"], fetched
    notebook = course / "my-work" / "fusion" / "fusion.ipynb"
    assert notebook.is_file()

    checked = call(base, "/assignments/validate", {"path": "my-work/fusion/fusion.ipynb"})
    assert checked["success"], checked
    report = checked["value"]
    assert len(report["failed"]) == 4  # the untouched release fails every part, truthfully

    submitted = call(
        base, "/assignments/submit", {"course_id": "chipsim-ch4", "assignment_id": "fusion"}
    )
    assert submitted["success"], submitted
    inbound = list((course / "gradebook" / "exchange" / "chipsim-ch4" / "inbound").iterdir())
    assert len(inbound) == 1 and "+fusion+" in inbound[0].name
