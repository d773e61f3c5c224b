"""The instructor's commands behind ``make grade`` and ``make feedback``.

``python -m chipsim.grading.cli grade`` (from the course root):

1. checks that this machine can sandbox learners' kernels (:mod:`.sandbox`: as root, or with
   unprivileged user namespaces) and stops with advice when it cannot, unless
   ``--unsafe-no-sandbox`` says the notebooks are trusted;
2. copies ``grading/demo_submissions`` into ``gradebook/submitted`` when that is empty
   (``--no-demo`` to skip), so the command can be tried at once;
3. autogrades every submission in parallel (:mod:`.parallel`) with a progress bar;
4. writes ``gradebook/grades.csv`` and ``gradebook/score_distribution.png`` (:mod:`.report`).

With ``--shard i/N`` it grades only shard ``i`` of ``N`` (:mod:`.shards`; N such processes,
on N machines sharing the course folder and one gradebook database named by
``GRADEBOOK_URL``, grade the class once), copies no demo submissions and exports nothing:
when every shard has finished, one plain ``grade`` (which regrades nothing) exports.

``python -m chipsim.grading.cli feedback`` runs ``nbgrader generate_feedback`` for every
assignment and checks that each HTML page carries its pictures.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from chipsim.errors import ChipsimError
from chipsim.grading import parallel, report
from chipsim.grading.gradebook_db import db_url, describe
from chipsim.grading.sandbox import sandbox_mode, why_no_sandbox
from chipsim.grading.shards import Shard

#: How each sandbox mode isolates a kernel, for the instructor.
MODES = {
    "root": "each kernel in its own namespaces, as a uid of its own",
    "userns": "each kernel in its own user, mount, PID and network namespaces (not root)",
}


def grade(args: argparse.Namespace) -> int:
    course = Path(args.course).resolve()
    try:
        shard = Shard.parse(args.shard) if args.shard else None
    except ChipsimError as exc:
        print(exc, file=sys.stderr)
        return 2
    mode = sandbox_mode()
    extra = [f"--GuardedExecute.memory_bytes={args.memory_gib << 30}"]
    if mode is None and not args.unsafe_no_sandbox:
        print(why_no_sandbox(), file=sys.stderr)
        return 2
    if mode is None:
        print("WARNING: grading WITHOUT a sandbox (--unsafe-no-sandbox): a notebook can read "
              "the solutions and rewrite grades. Only for notebooks you trust.")  # fmt: skip
        extra.append("--GuardedExecute.allow_unsandboxed=True")
    else:
        print(f"sandbox: {MODES[mode]}")
    print(f"gradebook: {describe(db_url(course))}" + (f", shard {shard}" if shard else ""))
    if not args.no_demo and not shard:
        n = parallel.copy_demo_submissions(course, course / "grading" / "demo_submissions")
        if n:
            print(f"gradebook/submitted was empty: copied {n} demo submissions")
    extra += [f"--GuardedExecute.timeout={args.timeout}"] if args.timeout else []
    try:
        run = parallel.grade_all(
            course, workers=args.workers, force=args.force, extra=extra, shard=shard
        )
    except ChipsimError as exc:
        print(f"grading stopped: {exc}", file=sys.stderr)
        return 1
    for out in run.outcomes:
        if out.returncode != 0:
            print(f"nbgrader failed for {out.job.student}/{out.job.assignment}:\n{out.log}")
    if run.skipped:
        names = ", ".join(f"{j.student}/{j.assignment}" for j in run.skipped)
        print(f"{len(run.skipped)} unchanged since they were graded, skipped: {names}")
    not_graded = run.not_graded()
    if shard:
        for (student, assignment), why in sorted(not_graded.items()):
            print(f"NOT graded: {student}/{assignment}: {why}")
        print(run.summary.line(f"shard {shard}"))
        print("When every shard has finished, export the grades with `make grade` (no SHARD): "
              "it regrades nothing and writes gradebook/grades.csv.")  # fmt: skip
        return 1 if not_graded else 0
    rows = report.collect(db_url(course), not_graded)
    have = {(r.student, r.assignment) for r in rows}
    rows += [report.Row(s, a, "", 0.0, 0.0, f"not graded: {why}")
             for (s, a), why in sorted(not_graded.items()) if (s, a) not in have]  # fmt: skip
    csv = report.write_csv(rows, course / "gradebook" / "grades.csv")
    png = report.plot_distribution(rows, course / "gradebook" / "score_distribution.png")
    flags = write_flags(course)
    print(f"{len(run.outcomes)} notebooks graded; grades: {csv}; distribution: {png}")
    for student, total in report.totals(rows).items():
        print(f"  {student:20} {total:7.3f}")
    if flags:
        print(f"{flags} static flag(s) for you to look at (no effect on scores): "
              f"{course / 'gradebook' / 'flags.csv'}")  # fmt: skip
    for (student, assignment), why in sorted(not_graded.items()):
        print(f"NOT graded: {student}/{assignment}: {why}")
    print(run.summary.line())
    return 1 if not_graded else 0


def write_flags(course: Path) -> int:
    """``gradebook/flags.csv``: what the graded notebooks' static scan and sandbox noted."""
    import csv

    import nbformat

    rows = []
    for path in sorted((course / "gradebook" / "autograded").glob("*/*/*.ipynb")):
        notes = nbformat.read(path, as_version=4).metadata.get("chipsim", {})
        who = (path.parent.parent.name, path.parent.name)
        for flag in notes.get("flags", []):
            rows.append([*who, flag["part"], flag["cell"], flag["line"], flag["what"]])
        for gid in notes.get("restored", []):
            rows.append([*who, gid, "", "", "test cell restored (it was changed or deleted)"])
        if notes.get("sandbox") == "none":
            rows.append([*who, "", "", "", "graded WITHOUT a sandbox"])
    with (course / "gradebook" / "flags.csv").open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["student", "assignment", "part", "cell", "line", "what"])
        out.writerows(rows)
    return len(rows)


def feedback(args: argparse.Namespace) -> int:
    course = Path(args.course).resolve()
    jobs = parallel.find_jobs(course)
    for name in sorted({j.assignment for j in jobs}):
        cmd = parallel.nbgrader_command(course, "generate_feedback", name, "--force")
        done = parallel._run(course, cmd, None)
        if done.returncode != 0:
            print(done.stdout + done.stderr)
            return 1
    pages = sorted((course / "gradebook" / "feedback").glob("*/*/*.html"))
    scored = {(r.student, r.assignment) for r in report.collect(db_url(course)) if r.score}
    bare = [p for p in pages if "<img" not in p.read_text()]
    blank = [p for p in bare if (p.parent.parent.name, p.parent.name) not in scored]
    print(f"{len(pages)} feedback pages under gradebook/feedback/<student>/<assignment>/")
    if blank:
        names = ", ".join(f"{p.parent.parent.name}/{p.parent.name}" for p in blank)
        print(f"no pictures where nothing scored (nothing to draw): {names}")
    if len(bare) > len(blank):
        print("pages WITHOUT pictures:", ", ".join(str(p) for p in bare if p not in blank))
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m chipsim.grading.cli")
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="autograde every submission in parallel, export grades")
    g.add_argument("--course", default=".")
    g.add_argument("--workers", type=int, default=None, help="default: all cores")
    g.add_argument("--force", action="store_true", help="regrade graded notebooks")
    g.add_argument("--no-demo", action="store_true", help="do not copy the demo submissions")
    g.add_argument("--timeout", type=int, default=0, help="seconds per cell (default: config)")
    g.add_argument("--memory-gib", type=int, default=4, help="address space per kernel")
    g.add_argument(
        "--shard",
        default=os.environ.get("SHARD", ""),
        help="grade only shard INDEX/COUNT of the learners, e.g. 0/4 (default: $SHARD, or all)",
    )
    g.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="grade even where kernels cannot be isolated (trusted notebooks only)",
    )
    f = sub.add_parser("feedback", help="nbgrader generate_feedback for every assignment")
    f.add_argument("--course", default=".")
    args = ap.parse_args(argv)
    return grade(args) if args.command == "grade" else feedback(args)


if __name__ == "__main__":
    sys.exit(main())
