"""The chipsim-sandbox kernel: who it runs as, its limits, what it can reach."""

from __future__ import annotations

import json
import os

import pytest
from grading_course import course_env, make_sandbox_course

from chipsim.grading.sandbox import KERNEL_NAME, Limits, can_drop_privileges, lock_down

PROBE = """
import json, os, resource, chipsim, numpy as np
out = {"uid": os.getuid(), "as": resource.getrlimit(resource.RLIMIT_AS)[0],
       "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
       "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[0]}
try:
    with open(os.path.join(os.environ["HOME"], "big.bin"), "wb") as f:
        f.write(b"x" * (2 << 20))
    out["big_file"] = "written"
except OSError as e:
    out["big_file"] = os.strerror(e.errno)
for key, path in (("solutions", SOLUTIONS), ("gradebook", GRADEBOOK)):
    try:
        open(path).read()
        out[key] = "read"
    except OSError as e:
        out[key] = type(e).__name__
try:
    open(chipsim.__file__, "a").close()
    out["write_chipsim"] = "written"
except OSError as e:
    out["write_chipsim"] = type(e).__name__
try:
    hog = [np.zeros(2**31) for _ in range(4)]
    out["alloc"] = "allocated"
except MemoryError:
    out["alloc"] = "MemoryError"
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    from jupyter_client.manager import start_new_kernel

    limits = Limits(3 << 30, 300, file_bytes=1 << 20)
    course = make_sandbox_course(tmp_path_factory.mktemp("sandbox"), limits)
    (course / "gradebook").mkdir()
    (course / "gradebook" / "gradebook.db").write_text("secret")
    lock_down(course)
    old = dict(os.environ)
    os.environ.update(course_env(course))
    try:
        km, kc = start_new_kernel(kernel_name=KERNEL_NAME, cwd=str(course / "gradebook"))
        lines = []
        hook = lambda m: lines.append(m["content"].get("text", ""))  # noqa: E731
        code = (
            f"SOLUTIONS = {str(course / 'solutions' / 'fusion' / 'fusion.ipynb')!r}\n"
            f"GRADEBOOK = {str(course / 'gradebook' / 'gradebook.db')!r}\n" + PROBE
        )
        kc.execute_interactive(code, timeout=120, output_hook=hook)
        km.shutdown_kernel(now=True)
    finally:
        os.environ.clear()
        os.environ.update(old)
    return json.loads("".join(lines).strip().splitlines()[-1])


def test_kernel_runs_under_the_limits(probe):
    assert probe["as"] == 3 << 30 and probe["cpu"] == 300
    assert probe["alloc"] == "MemoryError"
    assert probe["fsize"] == 1 << 20 and probe["big_file"] == "File too large"


def test_kernel_is_unprivileged_when_grading_as_root(probe):
    if not can_drop_privileges():
        pytest.skip("not root: the kernel keeps the grader's user (limits only)")
    assert probe["uid"] != 0
    assert probe["solutions"] == "PermissionError"
    assert probe["gradebook"] == "PermissionError"
    assert probe["write_chipsim"] == "PermissionError"
