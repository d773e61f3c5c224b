"""Red team against the sandbox itself: each learner kernel isolated, as root and as not root.

Every test here attacks from inside a sandboxed kernel (started exactly as the grader starts
them) and checks the guarantee that attack breaks when the sandbox is weaker. The ``userns``
tests run the same attacks with the grader as an unprivileged user (a fresh uid, no home, no
sudo), so "grading as a non-root user" is tested for real, not assumed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import sandbox_harness
from sandbox_harness import SandboxedKernel, battery, ended, kill_from_outside

from grader.sandbox.execute import why_it_ended
from grader.sandbox.modes import Limits, sandbox_mode

ROOT = Path(__file__).resolve().parents[2]
needs_root = pytest.mark.skipif(
    sandbox_mode() != "root", reason="the root-mode sandbox needs root and namespaces"
)
pytestmark = pytest.mark.skipif(
    sandbox_mode() is None and os.geteuid() != 0,
    reason="this machine cannot sandbox kernels (no namespaces)",
)


@pytest.fixture(scope="module")
def as_root():
    if sandbox_mode() != "root":
        pytest.skip("the root-mode sandbox needs root and namespaces")
    return battery(str(ROOT))


def _world_python() -> str | None:
    """An interpreter a user without a home can run, of this venv's Python version."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        real = Path(os.path.realpath(candidate))
        if real.exists() and all(p.stat().st_mode & 0o001 for p in (real, *real.parents)):
            return candidate
    return None


@pytest.fixture(scope="module")
def as_user(request):
    """The battery with the grader running as uid 4243 (user namespaces, no root at all)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("becoming another user needs root and setpriv")
    python = _world_python()
    if python is None:
        pytest.skip("no Python of this version that another user may run")
    # (not under pytest's folder, which other pytest runs on this machine may clean up)
    home = Path(tempfile.mkdtemp(prefix="chipsim-user-"))
    os.chown(home, 4243, 4243)
    request.addfinalizer(lambda: shutil.rmtree(home, ignore_errors=True))
    site = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]
    env = {
        "HOME": str(home),
        "TMPDIR": str(home),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "grading"), str(ROOT), *site]),
    }
    user = ["setpriv", "--reuid=4243", "--regid=4243", "--clear-groups", python]
    probe = "from grader.sandbox.modes import sandbox_mode; print(sandbox_mode())"
    mode = subprocess.run([*user, "-c", probe], env=env, cwd=home, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    if mode.stdout.strip() != "userns":
        pytest.skip(f"user namespaces are not available to a plain user here ({mode.stdout!r})")
    cmd = [*user, str(Path(sandbox_harness.__file__)), str(ROOT)]
    done = subprocess.run(cmd, env=env, cwd=home, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    facts["mode"] = "userns"
    return facts


@pytest.fixture(params=["root", "userns"])
def facts(request, as_root, as_user):
    return as_root if request.param == "root" else as_user


# -- mechanism 5: the kernel sees nothing of the course but the package view -------------------
def test_the_course_is_invisible(facts):
    for k in ("a", "b"):
        seen = facts[k]
        assert seen["solutions"] == seen["gradebook"] == seen["git"] == "FileNotFoundError"
        assert seen["git_show"] not in ("0",)  # no repository to show solutions from
        # where the course was, only the packages' views (and the venv, if it lives there)
        assert set(json.loads(seen["course"].replace("'", '"'))) <= {"chipsim", "grader", ".venv"}


def test_the_package_is_read_only(facts):
    assert facts["a"]["write_package"] in ("OSError", "PermissionError")


# -- mechanism 3: learners are isolated from each other -------------------------------------------
def test_a_kernel_cannot_see_another_kernels_files(facts):
    for key in ("other_run_dir", "other_connection"):
        assert facts["a"][key] == "FileNotFoundError", key
    # where the grader keeps connection files, the kernel finds (at most) its own scratch
    assert facts["connection_name"] not in facts["a"]["jupyter_runtime"]


def test_a_kernel_sees_only_its_own_processes_and_no_network(facts):
    for k in ("a", "b"):
        assert facts[k]["pid"] == 2 and facts[k]["pids"][0] == 1 and max(facts[k]["pids"]) < 50
        assert facts[k]["signal_grader"] == "ProcessLookupError"
        assert facts[k]["tcp_to_grader"] in ("OSError", "ConnectionRefusedError")


def test_a_kernel_cannot_kill_another_kernel_or_the_grader(facts):
    assert "killed" not in facts["a_kills_b"]
    assert facts["b_alive_after"] == "42"


def test_every_process_a_kernel_started_ends_with_it(facts):
    assert facts["sleepers_left"] == []  # 20 setsid daemons, gone with their kernel
    assert facts["b_forks_after"] == "0"  # and the other kernel still starts processes


def test_scratch_is_private_and_nothing_is_left_on_the_host(facts):
    assert facts["a"]["own_scratch"] == "0o700" and facts["a"]["tmp"][0].startswith(".")
    assert facts["run_dirs_left"] == []


@needs_root
def test_as_root_each_kernel_has_a_uid_of_its_own(as_root):
    a, b = as_root["a"], as_root["b"]
    assert a["uid"] != 0 and b["uid"] != 0 and a["uid"] != b["uid"]
    assert a["groups"] == [] and a["gid"] == a["uid"]


# -- mechanism 4: nothing learner-writable is trusted by root ---
def test_the_kernel_cannot_swap_its_sockets_for_links(facts):
    assert facts["a"]["lock_sockets"] == "OSError"  # read-only once the sockets exist
    assert facts["a"]["plant_link"] == "OSError"


# -- mechanism 9: the status says how a kernel ended -----------------------------------------------
@needs_root
def test_status_tells_a_signal_an_exit_and_a_limit_apart():
    killed = ended("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert killed["signal_name"] == "SIGKILL" and killed["wall_s"] < 30
    assert "not by one of the grader's limits" in why_it_ended(killed)
    exited = ended("import os; os._exit(3)")
    assert exited["exit_code"] == 3 and "exited with code 3" in why_it_ended(exited)
    spun = ended("while True: pass", Limits(cpu_seconds=2))
    assert "used all its CPU time (2 s)" in why_it_ended(spun)
    outside = kill_from_outside()
    assert outside["signal_name"] == "SIGKILL" and "ran for more than" not in why_it_ended(outside)


@needs_root
def test_limits_apply_inside():
    k = SandboxedKernel(Limits(3 << 30, 300, file_bytes=1 << 20))
    try:
        got = k.facts(
            "import json, os, resource, numpy as np\n"
            "out = {'as': resource.getrlimit(resource.RLIMIT_AS)[0],\n"
            "       'cpu': resource.getrlimit(resource.RLIMIT_CPU)[0]}\n"
            "try:\n    open('/tmp/big', 'wb').write(b'x' * (2 << 20)); out['big'] = 'written'\n"
            "except OSError as e:\n    out['big'] = os.strerror(e.errno)\n"
            "try:\n    hog = [np.ones(2**31) for _ in range(4)]; out['alloc'] = 'allocated'\n"
            "except MemoryError:\n    out['alloc'] = 'MemoryError'\n"
            "print(json.dumps(out))"
        )
    finally:
        k.stop()
    assert got == {"as": 3 << 30, "cpu": 300, "big": "File too large", "alloc": "MemoryError"}


# -- mechanism 6: no sandbox, no grading (unless the instructor says so) ---
def test_grading_refuses_without_a_sandbox(monkeypatch, capsys):
    from grader import cli
    from grader.sandbox import execute

    monkeypatch.setattr(cli, "sandbox_mode", lambda: None)
    assert cli.main(["grade", "--course", "/nonexistent", "--no-demo"]) == 2
    assert "cannot isolate" in capsys.readouterr().err
    monkeypatch.setattr(execute, "sandbox_mode", lambda: None)
    with pytest.raises(execute.SandboxError, match="unsafe-no-sandbox"):
        execute.GuardedExecute().preprocess(None, {})


def test_run_folders_of_killed_graders_are_swept(tmp_path, monkeypatch):
    from grader.sandbox import modes as sandbox

    monkeypatch.setattr(sandbox, "run_base", lambda: tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    left = tmp_path / f"chipsim-k-{dead.pid}-abc"
    (left / "ipc").mkdir(parents=True)
    mine = tmp_path / f"chipsim-k-{os.getpid()}-def"
    mine.mkdir()
    os.symlink(tmp_path, tmp_path / f"chipsim-k-{dead.pid}-link")
    assert sandbox.sweep_run_dirs() == [left]
    assert mine.exists() and (tmp_path / f"chipsim-k-{dead.pid}-link").is_symlink()


# -- a submission is more than its notebook: its plain files are in the kernel's home -----------
def test_the_submissions_own_files_are_in_the_kernels_working_folder(tmp_path):
    """A ``helpers.py`` beside the notebook is imported as on the learner's machine."""
    from grader.sandbox.files import copy_tree

    mine = tmp_path / "submission"
    (mine / "data").mkdir(parents=True)
    (mine / "helpers.py").write_text("ANSWER = 42\n")
    (mine / "data" / "table.txt").write_text("x\n")
    os.symlink("/etc/passwd", mine / "stolen.txt")
    copied = copy_tree(mine, tmp_path / "files", skip=(".ipynb",), dotfiles=False)
    assert copied.skipped == ["stolen.txt: a link"]
    k = SandboxedKernel(files=tmp_path / "files")
    try:
        got = k.run(
            "import os, helpers\nprint(helpers.ANSWER, open('data/table.txt').read().strip(),"
            " os.path.exists('stolen.txt'))"
        )
    finally:
        k.stop()
    assert got == "42 x False"


def test_a_font_list_in_both_matplotlib_folders_starts_the_kernel(tmp_path, monkeypatch):
    """With ``MPLCONFIGDIR`` set, the grader's font list of one name is in both of matplotlib's
    folders: the kernel gets one copy (the ``MPLCONFIGDIR`` one, which matplotlib reads first)
    and starts (a second copy stopped every kernel with "File exists")."""
    home, config = tmp_path / "home", tmp_path / "mplconfig"
    (home / ".cache" / "matplotlib").mkdir(parents=True)
    config.mkdir()
    name = "fontlist-v999.json"  # a name of its own: a real list of the grader stays as it is
    (home / ".cache" / "matplotlib" / name).write_text('{"from": "cache"}')
    (config / name).write_text('{"from": "MPLCONFIGDIR"}')
    monkeypatch.setenv("HOME", str(home))  # (not the real ~/.cache, which other runs share)
    monkeypatch.setenv("MPLCONFIGDIR", str(config))
    k = SandboxedKernel()
    try:
        got = k.run(f"print(open('/tmp/.matplotlib/{name}').read())")
    finally:
        k.stop()
    assert got == '{"from": "MPLCONFIGDIR"}'


# -- limits for the kernel's whole process tree, not only per process --------------------------
@needs_root
def test_memory_is_limited_for_the_kernels_whole_tree():
    """Three processes of 600 MiB each, under a 1 GiB limit: each alone is within the
    per-process limit, together they are not. Where the machine gives control groups, the
    kernel's tree is stopped at 1 GiB; the grading log says which limits applied."""
    k = SandboxedKernel(Limits(memory_bytes=1 << 30, cpu_seconds=300))
    applied = k.run_dir.limits_applied
    try:
        if "cgroup" not in applied:
            pytest.skip(f"no control group on this machine: {applied or 'per-process only'}")
        got = k.run(
            "import subprocess, sys\n"
            'hog = \'import time; b = bytearray(600 << 20); b[::4096] = b"x" * len(b[::4096]);'
            " time.sleep(30)'\n"
            "ps = [subprocess.Popen([sys.executable, '-c', hog]) for _ in range(3)]\n"
            "print(sorted(p.wait() for p in ps))",
            timeout=180,
        )
    finally:
        status = k.stop()
    assert "memory 1 GiB" in applied
    codes = [int(c) for c in got.strip("[]").split(",")] if got.startswith("[") else []
    killed = status.get("oom_killed") or any(c < 0 for c in codes) or "Dead" in got
    assert killed, (got, status)
