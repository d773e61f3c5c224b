"""Autograde throughput: the demo learners' notebooks of every assignment, 1 worker vs all.

    .venv/bin/python benchmarks/autograde_throughput.py [--students 20] [--workers N]
    .venv/bin/python benchmarks/autograde_throughput.py --students 8 --per-assignment

Builds a temporary course (private chipsim copy, sandbox kernel), submits the demo learners'
notebooks (``grading/demo_submissions``: blank, partial, strong, full) round-robin under
``--students`` student ids per assignment, and grades them twice with
:func:`grader.gradebook.pool.grade_all`: one worker, then one per core. Prints a Markdown
row per run: notebooks, workers, wall seconds, seconds per notebook, speed-up.
``--per-assignment`` then grades each assignment's notebooks alone with one worker: where
the time goes. Targets: >= 1.8x on 2 cores, < 10 s per submission notebook.

``--kernel-starts N`` instead times N sandboxed kernels (start, ``import chipsim``, shut
down), the sandbox's own cost per notebook.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "grading"))

from grading_course import course_env, make_sandbox_course, nbgrader  # noqa: E402

from grader.gradebook.pool import grade_all  # noqa: E402
from grader.problems.parts import ASSIGNMENTS  # noqa: E402


def setup(tmp: Path, students: int) -> Path:
    course = make_sandbox_course(tmp)
    for name in ASSIGNMENTS:
        done = nbgrader(course, "generate_assignment", name, "--force")
        assert done.returncode == 0, done.stderr
    demos = sorted((ROOT / "grading" / "demo_submissions").glob("*/*/*.ipynb"))
    by_assignment: dict[str, list[Path]] = {}
    for p in demos:
        by_assignment.setdefault(p.parent.name, []).append(p)
    for assignment, nbs in by_assignment.items():
        for k in range(students):
            folder = course / "gradebook" / "submitted" / f"s{k:02d}" / assignment
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(nbs[k % len(nbs)], folder / f"{assignment}.ipynb")
    return course


def run(course: Path, workers: int, assignments: list[str] | None = None) -> tuple[int, float]:
    for sub in ("autograded",):
        shutil.rmtree(course / "gradebook" / sub, ignore_errors=True)
    start = time.perf_counter()
    result = grade_all(course, workers=workers, assignments=assignments, force=True,
                       env=course_env(course), progress=True)  # fmt: skip
    wall = time.perf_counter() - start
    assert result.ok, [o.log for o in result.outcomes if o.returncode]
    return len(result.outcomes), wall


def kernel_starts(n: int) -> None:
    from sandbox_harness import SandboxedKernel

    def one() -> float:
        start = time.perf_counter()
        kernel = SandboxedKernel()
        kernel.run("import chipsim")
        kernel.stop()
        return time.perf_counter() - start

    one()  # the first builds the grading view
    times = sorted(one() for _ in range(n))
    shown = " ".join(f"{t:.2f}" for t in times)
    print(
        f"sandboxed kernel start + import chipsim + stop: {shown} s; median {times[n // 2]:.2f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=20)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--kernel-starts", type=int, default=0, help="time N sandboxed kernels")
    ap.add_argument("--per-assignment", action="store_true",
                    help="also grade each assignment alone with one worker")  # fmt: skip
    args = ap.parse_args()
    if args.kernel_starts:
        kernel_starts(args.kernel_starts)
        return
    tmp = Path(tempfile.mkdtemp(prefix="chipsim-bench-"))
    try:
        course = setup(tmp, args.students)
        n1, t1 = run(course, 1)
        nn, tn = run(course, args.workers)
        print("| notebooks | workers | wall s | s / notebook | speed-up |")
        print("|---|---|---|---|---|")
        print(f"| {n1} | 1 | {t1:.1f} | {t1 / n1:.2f} | 1.00 |")
        print(f"| {nn} | {args.workers} | {tn:.1f} | {tn / nn:.2f} | {t1 / tn:.2f} |")
        if args.per_assignment:
            print("\n| assignment | notebooks | workers | wall s | s / notebook |")
            print("|---|---|---|---|---|")
            for name in ASSIGNMENTS:
                n, t = run(course, 1, [name])
                print(f"| {name} | {n} | 1 | {t:.1f} | {t / n:.2f} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
