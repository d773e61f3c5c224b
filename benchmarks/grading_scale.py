"""Grading a class with shards: 1, 2 and 4 shard processes, against PostgreSQL and sqlite.

    .venv/bin/python benchmarks/grading_scale.py [--submissions 200] [--shards 1 2 4]
        [--backends postgresql sqlite] [--out results.jsonl]

Builds a temporary course (private chipsim copy, sandboxed kernels), submits the demo
learners' notebooks round-robin as ``submissions / 3`` learners x the course's three
assignments, and grades the whole class once per (backend, shard count): N processes
``python -m grader.cli grade --shard k/N --workers 1`` started together (N machines of one
core each, on one box), against a fresh gradebook each time: a new database on a throw-away
PostgreSQL server (``tests/grading/scale_postgres.py``: Debian's server binaries, loopback
port, removed at the end) or a fresh sqlite file. Wall time runs from the start of the first
process to the end of the last (start-up, entering the assignments and every shard's grading
included). After each run the audit log must show every notebook graded exactly once.

``--records N`` instead times the grading records alone: N claim + record cycles (what a
shard does per notebook, besides nbgrader's own writes) against each backend.

Prints a Markdown row per run (appended as JSON to ``--out`` as it finishes) and, at the end,
the arithmetic for a class of 1,000 at a deadline from the best measured seconds per notebook
per core.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "grading"))

from grading_course import NO_SANDBOX, course_env, make_sandbox_course, nbgrader  # noqa: E402
from scale_postgres import BINARIES, Server  # noqa: E402

from grader.gradebook.db import default_url, normalize  # noqa: E402
from grader.gradebook.records import Store  # noqa: E402
from grader.problems.parts import ASSIGNMENTS  # noqa: E402


def setup(tmp: Path, submissions: int) -> Path:
    course = make_sandbox_course(tmp)
    for name in ASSIGNMENTS:
        done = nbgrader(course, "generate_assignment", name, "--force")
        assert done.returncode == 0, done.stderr
    demos = sorted((ROOT / "grading" / "demo_submissions").glob("*/*/*.ipynb"))
    for assignment in ASSIGNMENTS:
        nbs = [p for p in demos if p.parent.name == assignment]
        for k in range(submissions // len(ASSIGNMENTS)):
            folder = course / "gradebook" / "submitted" / f"learner{k:04d}" / assignment
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(nbs[k % len(nbs)], folder / f"{assignment}.ipynb")
    return course


def fresh(course: Path, backend: str, server: Server | None) -> str:
    """A fresh gradebook: its URL (and no autograded notebooks, no ledger copy)."""
    gradebook = course / "gradebook"
    for name in ("autograded", "feedback"):
        shutil.rmtree(gradebook / name, ignore_errors=True)
    for name in ("gradebook.db", "graded.json"):
        (gradebook / name).unlink(missing_ok=True)
    return server.new_database() if backend == "postgresql" else default_url(gradebook)


def run(course: Path, url: str, shards: int) -> float:
    env = {**course_env(course), "GRADEBOOK_URL": url}
    cmd = [sys.executable, "-m", "grader.cli", "grade", "--no-demo", "--workers", "1"]
    cmd += ["--unsafe-no-sandbox"] if NO_SANDBOX else []
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [*cmd, "--shard", f"{k}/{shards}"],
            cwd=course,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        for k in range(shards)
    ]
    outs = [p.communicate()[0] for p in procs]
    wall = time.perf_counter() - start
    for p, out in zip(procs, outs, strict=True):
        assert p.returncode == 0, out[-3000:]
    return wall


def check_once(url: str, submissions: int) -> None:
    log = Counter(key for key, _, _ in Store(normalize(url)).gradings())
    assert len(log) == submissions and set(log.values()) == {1}, log.most_common(3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--submissions", type=int, default=200)
    ap.add_argument("--shards", type=int, nargs="+", default=[4, 2, 1])
    ap.add_argument("--backends", nargs="+", default=["postgresql", "sqlite"])
    ap.add_argument("--out", type=Path, default=None, help="append each row as JSON here")
    ap.add_argument("--records", type=int, default=0, help="time N claim + record cycles")
    args = ap.parse_args()
    args.submissions -= args.submissions % len(ASSIGNMENTS)  # whole learners: one of each
    if not args.records and args.submissions == 0:
        ap.error(f"--submissions: at least {len(ASSIGNMENTS)}, one notebook per assignment")
    if args.records:
        records(args.records, args.backends)
        return
    if "postgresql" in args.backends and not BINARIES:
        sys.exit("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
    tmp = Path(tempfile.mkdtemp(prefix="chipsim-scale-"))
    server = Server(BINARIES[-1].parent) if "postgresql" in args.backends else None
    rows = []
    try:
        if server:
            server.init()
            server.start()
        course = setup(tmp, args.submissions)
        print(f"cores: {os.cpu_count()}, load: {os.getloadavg()[0]:.2f}", flush=True)
        print("| backend | shard processes | notebooks | wall s | notebooks/s | s / notebook |")
        print("|---|---|---|---|---|---|", flush=True)
        for shards in args.shards:
            for backend in args.backends:
                url = fresh(course, backend, server)
                load = os.getloadavg()[0]
                wall = run(course, url, shards)
                check_once(url, args.submissions)
                row = {
                    "backend": backend, "shards": shards, "notebooks": args.submissions,
                    "wall_s": round(wall, 1), "load_before": round(load, 2),
                    "load_after": round(os.getloadavg()[0], 2),
                }  # fmt: skip
                rows.append(row)
                n = args.submissions
                print(f"| {backend} | {shards} | {n} | {wall:.1f} | {n / wall:.2f} | "
                      f"{wall / n:.2f} |", flush=True)  # fmt: skip
                if args.out:
                    with args.out.open("a") as f:
                        f.write(json.dumps(row) + "\n")
        deadline(rows, os.cpu_count() or 1)
    finally:
        if server:
            server.remove()
        shutil.rmtree(tmp, ignore_errors=True)


def records(n: int, backends: list[str]) -> None:
    """Milliseconds per notebook of the claims and ledger, one process, per backend."""
    tmp = Path(tempfile.mkdtemp(prefix="chipsim-records-"))
    server = Server(BINARIES[-1].parent) if "postgresql" in backends else None
    try:
        if server:
            server.init()
            server.start()
        for backend in backends:
            url = normalize(server.new_database()) if backend == "postgresql" else default_url(tmp)
            store = Store(url)
            store.create()
            start = time.perf_counter()
            for k in range(n):
                assert store.claim(f"learner{k}/fusion", "bench", lease=60)
                store.entry(f"learner{k}/fusion")
                store.record(f"learner{k}/fusion", "d", "graded", owner="bench")
            ms = 1000 * (time.perf_counter() - start) / n
            print(f"{backend}: {ms:.2f} ms per notebook (claim, check, record; {n} notebooks, "
                  f"load {os.getloadavg()[0]:.1f})")  # fmt: skip
    finally:
        if server:
            server.remove()
        shutil.rmtree(tmp, ignore_errors=True)


def deadline(rows: list[dict], cores: int) -> None:
    """1,000 learners x one notebook per assignment in 10 minutes: how many machines?"""
    if not rows:
        return
    best = min(rows, key=lambda r: r["wall_s"] * min(r["shards"], cores) / r["notebooks"])
    per_core = best["wall_s"] * min(best["shards"], cores) / best["notebooks"]
    notebooks, seconds = 1000 * len(ASSIGNMENTS), 540  # ten minutes, less a shard's start-up
    core_seconds = notebooks * per_core
    print(
        f"\nbest: {best['backend']}, {best['shards']} shard(s): {per_core:.2f} core-seconds per "
        f"notebook. 1,000 learners x {len(ASSIGNMENTS)} notebooks = {notebooks} notebooks = "
        f"{core_seconds:,.0f} core-seconds; in {seconds} s of grading per core (ten minutes, less "
        f"a shard's start-up) that is {core_seconds / seconds:.1f} "
        f"cores busy: {-(-core_seconds // (seconds * 8)):.0f} machines of 8 cores, "
        f"{-(-core_seconds // (seconds * 16)):.0f} of 16."
    )


if __name__ == "__main__":
    main()
