"""The commands behind make grade, feedback, exercises and grade-mine (the course root).

``python -m grader.cli grade`` (from the course root):

1. checks that this machine can sandbox learners' kernels (:mod:`grader.sandbox.modes`: as
   root, or with unprivileged user namespaces) and stops with advice when it cannot, unless
   ``--unsafe-no-sandbox`` says the notebooks are trusted;
2. copies ``grading/demo_submissions`` into ``gradebook/submitted`` when that is empty
   (``--no-demo`` to skip), so the command can be tried at once;
3. autogrades every submission in parallel (:mod:`grader.gradebook.pool`) with a progress
   bar;
4. writes ``gradebook/grades.csv`` and ``gradebook/score_distribution.png``
   (:mod:`grader.gradebook.report`).

With ``--shard i/N`` it grades only shard ``i`` of ``N`` (:mod:`grader.gradebook.shards`; N
such processes, on N machines sharing the course folder and one gradebook database named by
``GRADEBOOK_URL``, grade the class once), copies no demo submissions and exports nothing:
when every shard has finished, one plain ``grade`` (which regrades nothing) exports.

``python -m grader.cli feedback`` runs ``nbgrader generate_feedback`` for every assignment
and checks that each HTML page carries its pictures.

``python -m grader.cli release`` (``make exercises``) generates the release into the
grader's own folder and publishes it to ``exercises/``, refusing to overwrite a learner's
edits (:mod:`grader.course.release`).

``python -m grader.cli mine --me NAME`` (``make grade-mine``) grades a learner's own
notebooks: for each assignment the one they worked on (``my-work/`` or ``exercises/``, said
which), copied, never written; then their feedback pages.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from chipsim.errors import ChipsimError
from grader.course import release
from grader.gradebook import pool as parallel
from grader.gradebook import report
from grader.gradebook.db import db_url, describe
from grader.gradebook.jobs import check_student_id
from grader.gradebook.shards import Shard
from grader.problems.parts import ASSIGNMENTS
from grader.sandbox import files
from grader.sandbox.modes import sandbox_mode, why_no_sandbox

#: How each sandbox mode isolates a kernel, for the instructor.
MODES = {
    "root": "each kernel in its own namespaces, as a uid of its own",
    "userns": "each kernel in its own user, mount, PID and network namespaces (not root)",
}


def grade(args: argparse.Namespace) -> int:
    """``make grade``: autograde every submission in parallel, then export the grades."""
    return grade_run(args).code


@dataclass(frozen=True)
class Graded:
    """How a grading run ended: its exit code; why each (student, assignment) it did not grade
    was not graded (``None``: the run stopped before grading anything); which it skipped as
    unchanged since they were graded (their grade and feedback stand)."""

    code: int
    not_graded: dict[tuple[str, str], str] | None = None
    skipped: frozenset[tuple[str, str]] = frozenset()


def grade_run(args: argparse.Namespace) -> Graded:
    """:func:`grade`, saying how the run ended (:class:`Graded`)."""
    course = Path(args.course).resolve()
    try:
        shard = Shard.parse(args.shard) if args.shard else None
    except ChipsimError as exc:
        print(exc, file=sys.stderr)
        return Graded(2)
    mode = sandbox_mode()
    extra = [f"--GuardedExecute.memory_bytes={args.memory_gib << 30}"]
    if mode is None and not args.unsafe_no_sandbox:
        print(why_no_sandbox(), file=sys.stderr)
        return Graded(2)
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
    notebook_seconds = getattr(args, "notebook_seconds", 0)
    extra += [f"--GuardedExecute.notebook_seconds={notebook_seconds}"] if notebook_seconds else []
    try:
        run = parallel.grade_all(
            course, workers=args.workers, force=args.force, extra=extra, shard=shard,
            seconds=getattr(args, "seconds", None) or None,
        )  # fmt: skip
    except ChipsimError as exc:
        print(f"grading stopped: {exc}", file=sys.stderr)
        return Graded(1)
    for out in run.outcomes:
        if out.returncode != 0:
            print(f"nbgrader failed for {out.job.student}/{out.job.assignment}:\n{out.log}")
    if run.skipped:
        names = ", ".join(f"{j.student}/{j.assignment}" for j in run.skipped)
        print(f"{len(run.skipped)} unchanged since they were graded, skipped: {names}")
    not_graded = run.not_graded()
    skipped = frozenset((j.student, j.assignment) for j in run.skipped)
    if shard:
        for (student, assignment), why in sorted(not_graded.items()):
            print(f"NOT graded: {student}/{assignment}: {why}")
        print(run.summary.line(f"shard {shard}"))
        print("When every shard has finished, export the grades with `make grade` (no SHARD): "
              "it regrades nothing and writes gradebook/grades.csv.")  # fmt: skip
        return Graded(1 if not_graded else 0, not_graded, skipped)
    rows = report.collect(db_url(course), not_graded)
    have = {(r.student, r.assignment) for r in rows}
    rows += [report.Row(s, a, "", 0.0, 0.0, f"not graded: {why}")
             for (s, a), why in sorted(not_graded.items()) if (s, a) not in have]  # fmt: skip
    csv = report.write_csv(rows, course / "gradebook" / "grades.csv")
    png = report.plot_distribution(rows, course / "gradebook" / "score_distribution.png")
    flags = write_flags(course)
    n = run.summary.graded
    print(f"{n} notebook{'' if n == 1 else 's'} graded; grades: {csv}; distribution: {png}")
    for student, (total, top) in report.totals(rows).items():
        print(f"  {student:20} {total:7.3f} / {top:g} points")
    if flags:
        print(f"{flags} static flag(s) for you to look at (no effect on scores): "
              f"{course / 'gradebook' / 'flags.csv'}")  # fmt: skip
    for (student, assignment), why in sorted(not_graded.items()):
        print(f"NOT graded: {student}/{assignment}: {why}")
    print(run.summary.line())
    return Graded(1 if not_graded else 0, not_graded, skipped)


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


def publish_release(args: argparse.Namespace) -> int:
    """``make exercises``: generate the release, then publish it to ``exercises/``."""
    course = Path(args.course).resolve()
    names = args.assignments or list(ASSIGNMENTS)
    for name in names:
        cmd = parallel.nbgrader_command(course, "generate_assignment", name, "--force")
        done = parallel._run(course, cmd, None)
        if done.returncode != 0:
            print(done.stdout + done.stderr, file=sys.stderr)
            return 1
    try:
        written = release.publish(course, names)
    except release.LearnerFilesError as exc:
        print(f"make exercises: {exc}", file=sys.stderr)
        return 2
    print("released:", ", ".join(written))
    return 0


def grade_mine(args: argparse.Namespace) -> int:
    """``make grade-mine``: grade the learner's own notebooks; never write them."""
    course = Path(args.course).resolve()
    try:
        me = check_student_id(args.me)
    except ChipsimError as exc:
        print(f"make grade-mine: {exc}", file=sys.stderr)
        return 2
    chosen = [c for c in release.learner_notebooks(course, ASSIGNMENTS) if c.path is not None]
    if not chosen:
        print("make grade-mine: no notebook found in my-work/ or exercises/", file=sys.stderr)
        return 2
    for choice in chosen:  # a copy of the learner's folder, links and special files left out
        target = course / "gradebook" / "submitted" / me / choice.assignment
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        copied = files.copy_tree(choice.path.parent, target, skip=(".ipynb",), dotfiles=False)
        shutil.copyfile(choice.path, target / f"{choice.assignment}.ipynb")
        print(f"{choice.assignment}: {choice.why}")
        for why in copied.skipped:
            print(f"  not copied: {why}")
    args.no_demo, args.shard = True, ""
    run = grade_run(args)
    code = run.code
    if code not in (0, 1):
        return code
    feedback_code = feedback(args)
    if feedback_code == PICTURES_LOST:
        print("Your feedback pages were made, but some lost their pictures (listed above).")
    elif feedback_code:
        print("No new feedback pages: they could not be made (see above).")
        return code or feedback_code
    for choice in chosen:
        page = course / "gradebook" / "feedback" / me / choice.assignment
        html = page / (choice.assignment + ".html")
        if run.not_graded is None or (me, choice.assignment) in run.not_graded:
            earlier = (
                f"; the page there is from an earlier grading: {html}" if html.exists() else ""
            )
            print(f"No new feedback on {choice.assignment}: it was NOT graded this time"
                  f" (see above){earlier}")  # fmt: skip
        elif (me, choice.assignment) in run.skipped:
            print(f"Your feedback on {choice.assignment} (unchanged: your notebook is as it was"
                  f" when graded last): {html}")  # fmt: skip
        else:
            print(f"Your feedback on {choice.assignment} (new): {html}")
    for line in language_notes(course, me, [c.assignment for c in chosen]):
        print(line)
    print(
        "A changed notebook meets hidden instances drawn anew for it, so an open challenge's"
        " points can move a little even when nothing got worse (the fusion challenge's hardly"
        " move: they come from its fixed benchmark; book: Exercises, How scoring works)."
    )
    return code or feedback_code


#: The languages' names in the grader's English lines.
LANGUAGE_NAMES = {"en": "English", "zh_CN": "Chinese"}


def language_notes(course: Path, me: str, assignments: list[str]) -> list[str]:
    """What to say when ``CHIPSIM_LANG`` asks for a language some feedback does not speak: a
    page speaks the language the learner's kernel spoke when the notebook last ran, which the
    grader keeps (:func:`grader.feedback.page.page_language`); grading cannot change it."""
    import nbformat

    from chipsim.i18n import ENV_VAR, spoken
    from grader.feedback.page import page_language

    asked = spoken(os.environ.get(ENV_VAR))
    if asked is None:
        return []
    notes = []
    for assignment in assignments:
        graded = course / "gradebook" / "autograded" / me / assignment / f"{assignment}.ipynb"
        if not graded.is_file():
            continue
        spoke = page_language(nbformat.read(graded, as_version=4))
        if spoke != asked:
            notes.append(
                f"{ENV_VAR}={asked}, but your feedback on {assignment} is in "
                f"{LANGUAGE_NAMES.get(spoke, spoke)}: feedback "
                "speaks the language your notebook's kernel spoke when you last ran it (book: "
                f"Exercises). Run the notebook again with {ENV_VAR}={asked} (e.g. `{ENV_VAR}="
                f"{asked} make lab`), save it, then `make grade-mine`."
            )
    return notes


#: :func:`feedback`'s exit code when the pages were made but some lost their pictures.
PICTURES_LOST = 3


def feedback(args: argparse.Namespace) -> int:
    """``make feedback``: every feedback page; 1 when nbgrader could not make them,
    :data:`PICTURES_LOST` when some lost the pictures their graded notebooks hold."""
    course = Path(args.course).resolve()
    jobs = parallel.find_jobs(course)
    for name in sorted({j.assignment for j in jobs}):
        cmd = parallel.nbgrader_command(course, "generate_feedback", name, "--force")
        done = parallel._run(course, cmd, None)
        if done.returncode != 0:
            print(done.stdout + done.stderr)
            return 1
    pages = sorted((course / "gradebook" / "feedback").glob("*/*/*.html"))
    print(f"{len(pages)} feedback pages under gradebook/feedback/<student>/<assignment>/")
    lost = pictureless(course, pages)
    if lost:
        print("pages WITHOUT the pictures their graded notebooks hold:",
              ", ".join(str(p) for p in lost))  # fmt: skip
        return PICTURES_LOST
    return 0


def pictureless(course: Path, pages: list[Path]) -> list[Path]:
    """The feedback pages that lost their pictures: a page without one whose autograded
    notebook holds one (a part answered exactly, or nothing scored, draws none: not lost)."""
    import nbformat

    lost = []
    for page in pages:
        if "<img" in page.read_text():
            continue
        student, assignment = page.parent.parent.name, page.parent.name
        graded = course / "gradebook" / "autograded" / student / assignment / page.name
        graded = graded.with_suffix(".ipynb")
        if not graded.exists():
            continue
        nb = nbformat.read(graded, as_version=4)
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
        if any("image/png" in o.get("data", {}) for o in outputs):
            lost.append(page)
    return lost


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m grader.cli")
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="autograde every submission in parallel, export grades")
    g.add_argument("--course", default=".")
    g.add_argument("--workers", type=int, default=None, help="default: all cores")
    g.add_argument("--force", action="store_true", help="regrade graded notebooks")
    g.add_argument("--no-demo", action="store_true", help="do not copy the demo submissions")
    g.add_argument("--timeout", type=int, default=0, help="seconds per cell (default: config)")
    g.add_argument(
        "--memory-gib", type=int, default=4, help="memory per kernel (all its processes)"
    )
    g.add_argument("--notebook-seconds", type=int, default=0,
                   help="wall-clock seconds per notebook (default: config, 1200)")  # fmt: skip
    g.add_argument("--seconds", type=float, default=0,
                   help="time budget of this run: no notebook starts after it")  # fmt: skip
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
    r = sub.add_parser("release", help="generate the release and publish it to exercises/")
    r.add_argument("--course", default=".")
    r.add_argument("assignments", nargs="*", help="default: every assignment")
    m = sub.add_parser("mine", help="grade your own notebooks and write your feedback")
    m.add_argument("--course", default=".")
    m.add_argument("--me", default="me", help="your name in the gradebook (default: me)")
    for name, kwargs in (("--workers", {"type": int, "default": None}),
                         ("--timeout", {"type": int, "default": 0}),
                         ("--memory-gib", {"type": int, "default": 4})):  # fmt: skip
        m.add_argument(name, **kwargs)
    m.add_argument("--force", action="store_true")
    m.add_argument("--unsafe-no-sandbox", action="store_true", help="(implied: your own work)")
    args = ap.parse_args(argv)
    if args.command == "mine":
        args.unsafe_no_sandbox = True  # a learner's own notebooks: trusted
        return grade_mine(args)
    commands = {"grade": grade, "feedback": feedback, "release": publish_release}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
