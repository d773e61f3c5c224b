"""The grader's remaining holes, each closed: links anywhere in a submission, collection from a
hub's exchange, odd folders, other accounts' temp folders, outputs that dodge the budget, a
notebook (or a run) that never ends, a non-root instructor's private files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from grading_course import course_env, make_course, nbgrader, submit_notebook

from grader.gradebook.ledger import check_submission, submission_digest
from grader.sandbox import files
from grader.sandbox.outputs import OutputBudget, size


def _submission(tmp_path: Path) -> Path:
    folder = tmp_path / "submitted" / "ada" / "fusion"
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), folder / "fusion.ipynb")
    return folder


# -- 1. links followed as root ----------------------------------------------------------------
def test_a_link_anywhere_in_a_submission_refuses_it(tmp_path):
    folder = _submission(tmp_path)
    (folder / "deep" / "deeper").mkdir(parents=True)
    os.symlink("/work/solutions/fusion/fusion.ipynb", folder / "deep" / "deeper" / "copy.ipynb")
    assert "deep/deeper/copy.ipynb is a link" in check_submission(folder)
    os.unlink(folder / "deep" / "deeper" / "copy.ipynb")
    os.mkfifo(folder / "deep" / "pipe")
    assert "deep/pipe is a special file" in check_submission(folder)
    os.unlink(folder / "deep" / "pipe")
    assert check_submission(folder) == ""


def test_a_learner_folder_that_is_a_link_is_refused(tmp_path):
    folder = _submission(tmp_path)
    os.symlink(folder.parent, tmp_path / "submitted" / "eve")
    assert "is a link" in check_submission(tmp_path / "submitted" / "eve" / "fusion")


def test_collect_from_a_hubs_exchange_copies_no_link(tmp_path):
    """nbgrader's collect as configured by the course (SafeCollect): a submission that is a
    link to the instructor's files is refused; in a real one, links are left out."""
    course = make_course(tmp_path)
    assert nbgrader(course, "generate_assignment", "fusion", "--force").returncode == 0
    exchange = tmp_path / "exchange"
    inbound = exchange / "chipsim-ch4" / "inbound"
    inbound.mkdir(parents=True)
    honest = inbound / "ada+fusion+2026-12-03 10:00:00.000000 UTC+abc"
    honest.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), honest / "fusion.ipynb")
    os.symlink(course / "gradebook" / "hidden_instances.key", honest / "key.txt")
    os.symlink(
        course / "solutions" / "fusion", inbound / "eve+fusion+2026-12-03 10:00:00.000000 UTC+x"
    )
    done = nbgrader(course, "collect", "fusion", f"--Exchange.root={exchange}")
    assert done.returncode == 0, done.stderr
    got = course / "gradebook" / "submitted"
    assert (got / "ada" / "fusion" / "fusion.ipynb").is_file()
    assert not (got / "ada" / "fusion" / "key.txt").exists()
    assert not (got / "eve" / "fusion" / "fusion.ipynb").exists()
    assert "not collected" in done.stderr and "left out key.txt: a link" in done.stderr


# -- 6. a folder named like a notebook ----------------------------------------------------------
def test_a_folder_named_like_a_notebook_stops_nothing(tmp_path):
    folder = _submission(tmp_path)
    (folder / "scratch.ipynb").mkdir()
    (folder / "scratch.ipynb" / "notes.txt").write_text("mine")
    assert check_submission(folder) == ""
    assert len(submission_digest(folder, "grader")) == 64  # no IsADirectoryError


def test_the_digest_covers_the_files_beside_the_notebook(tmp_path):
    folder = _submission(tmp_path)
    before = submission_digest(folder, "g")
    (folder / "helpers.py").write_text("X = 1\n")
    assert submission_digest(folder, "g") != before  # a changed helper is regraded


# -- 7. another account's folder in the shared temp folder ---------------------------------------
def test_a_views_folder_made_first_by_someone_else_does_not_stop_grading(tmp_path, monkeypatch):
    import tempfile

    from grader.sandbox import view

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    squatted = tmp_path / f"chipsim-views-{os.geteuid()}"
    squatted.mkdir(mode=0o777)
    view._views_base.cache_clear()
    view.grading_view.cache_clear()
    try:
        for built, package in view.grading_view("fusion"):
            assert built.is_dir() and built.name == package.name
            assert squatted not in built.parents
            assert stat.S_IMODE(built.parent.parent.stat().st_mode) == 0o700
    finally:
        view._views_base.cache_clear()
        view.grading_view.cache_clear()


# -- 10. outputs that dodged the budget ---------------------------------------------------------
def test_an_outputs_size_counts_its_metadata_and_mime_names():
    fat = {"output_type": "display_data", "data": {"text/plain": "x"},
           "metadata": {"junk": "y" * 100_000}}  # fmt: skip
    names = {"output_type": "display_data", "data": {"m" * 100_000: "x"}, "metadata": {}}
    assert size(fat) > 100_000 and size(names) > 100_000
    budget = OutputBudget(cell_bytes=50_000, notebook_bytes=500_000)
    budget.start_cell()
    assert "cut the output" in budget.admit(fat)["text"]


def test_a_display_update_is_charged_for_every_output_it_rewrites():
    budget = OutputBudget(cell_bytes=10 << 20, notebook_bytes=1 << 20)
    update = {"output_type": "display_data", "data": {"text/plain": "z" * 200_000}, "metadata": {}}
    assert budget.admit_update(update, copies=2)  # 400 kB of 1 MiB
    assert not budget.admit_update(update, copies=5)  # another 1 MB: dropped


@pytest.mark.parametrize(
    ("language", "said"), [("en", "lines of output left out"), ("zh_CN", "略去")]
)
def test_a_long_print_never_pushes_the_graders_note_out_of_the_feedback(language, said):
    """nbgrader's cap on printed lines kept the first 1,000 and cut the rest, the grader's note
    at the cell's end with them; the course's keeps both ends and says, in the learner's
    language, how much it left out."""
    from grader.course.limit_output import LimitOutput
    from grader.sandbox.outputs import note

    nb = nbformat.v4.new_notebook()
    nb.metadata["chipsim"] = {"language": language}
    cell = nbformat.v4.new_code_cell("for k in range(3000): print(k)")
    printed = "".join(f"{k}\n" for k in range(3000))
    cell.outputs = [
        nbformat.v4.new_output("stream", text=printed[:5000]),
        nbformat.v4.new_output("stream", text=printed[5000:]),
        nbformat.v4.new_output("display_data", data={"text/plain": "a figure"}),
        nbformat.from_dict(
            note("the grader ignored {n} unreadable message(s) from the kernel", language, n=2)
        ),  # fmt: skip
    ]
    nb.cells = [cell]
    nb, _ = LimitOutput(max_lines=1000).preprocess(nb, {})
    outs = nb.cells[0].outputs
    lines = "".join(o.text for o in outs if o.output_type == "stream").splitlines()
    assert len(lines) == 1000, len(lines)
    assert lines[:3] == ["0", "1", "2"] and lines[-2] == "2999", lines[-3:]
    assert lines[-1] == note("the grader ignored {n} unreadable message(s) from the kernel",
                             language, n=2)["text"].strip()  # fmt: skip
    (cut,) = [line for line in lines if said in line]
    assert "2002" in cut and "1000" in cut, cut  # 3,001 lines, 999 kept around the marker
    assert [o.output_type for o in outs].count("display_data") == 1


# -- 12. a notebook that never ends, and a run that never ends ----------------------------------
def test_a_notebook_has_a_wall_clock_budget_for_that_learner_only(tmp_path):
    from grader.sandbox.execute import GuardedExecute

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print('started')")]
    nb.cells += [
        nbformat.v4.new_code_cell(f"import time; time.sleep(3); print({k})") for k in range(8)
    ]
    ex = GuardedExecute(sandbox=False, allow_unsandboxed=True, notebook_seconds=15, timeout=60)
    ex.config.HiddenInstances.secret_file = str(tmp_path / "key")
    nb, _ = ex.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    texts = ["".join(str(o.get("text", o.get("evalue", ""))) for o in c.outputs) for c in nb.cells]
    assert texts[0].strip() == "started"
    assert "ran out of time" in texts[-1] and "7" not in texts[-1], texts


@pytest.mark.parametrize(("named", "spoken"), [("klingon", "en"), ("zh", "zh_CN")])
def test_the_kernel_speaks_the_language_the_grader_remembered(tmp_path, named, spoken):
    """The kernel is told the language the grader's own notes use, never the metadata's raw
    text: run without :class:`RememberLanguage` before it (which drops unknown names), a name
    chipsim does not speak would make every translated message in the kernel raise."""
    from grader.sandbox.execute import GuardedExecute

    nb = nbformat.v4.new_notebook()
    nb.metadata["chipsim"] = {"language": named}
    nb.cells = [
        nbformat.v4.new_code_cell("from chipsim.i18n import current_language; current_language()")
    ]
    ex = GuardedExecute(sandbox=False, allow_unsandboxed=True, timeout=60)
    ex.config.HiddenInstances.secret_file = str(tmp_path / "key")
    nb, _ = ex.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    (out,) = nb.cells[0].outputs
    assert out.get("data", {}).get("text/plain") == repr(spoken), out


def test_a_grading_run_has_a_time_budget(tmp_path, monkeypatch):
    from grader.gradebook.pool import grade_all

    course = make_course(tmp_path)
    for student in ("ada", "ben"):
        submit_notebook(course, "fusion", student, nbformat.v4.new_notebook())
    monkeypatch.setenv("PATH", course_env(course)["PATH"])  # nbgrader's alembic
    run = grade_all(course, seconds=1e-9, env=course_env(course), progress=False)
    assert not run.outcomes
    assert len(run.rejected) == 2 and all("ran out of time" in why for _, why in run.rejected)


# -- 13. a non-root instructor's files are private -----------------------------------------------
def test_the_course_config_locks_solutions_and_gradebook_down_as_any_user():
    import tempfile

    shared = Path(tempfile.mkdtemp(dir="/tmp", prefix="chipsim-lockdown-"))
    shared.chmod(0o755)  # a folder another account can reach (pytest's own are private)
    course = make_course(shared)
    for name in ("solutions", "gradebook"):
        (course / name).chmod(0o755)
    code = (
        "import runpy, sys; sys.argv = ['x']; "
        "runpy.run_path('nbgrader_config.py', {'get_config': lambda: __import__('traitlets')"
        ".config.Config()})"
    )
    user = [] if os.geteuid() else ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    if user:  # as root: run it as an ordinary account, the instructor, owning the course
        subprocess.run(["chown", "-R", "65534:65534", str(course)], check=True)
    done = subprocess.run([*user, sys.executable, "-c", code], cwd=course,
                          env=course_env(course), capture_output=True, text=True)  # fmt: skip
    try:
        assert done.returncode == 0, done.stderr[-2000:]
        for name in ("solutions", "gradebook"):
            assert stat.S_IMODE((course / name).stat().st_mode) == 0o700, name
    finally:
        subprocess.run(["rm", "-rf", str(shared)], check=False)


# -- the one home of safe copying ---------------------------------------------------------------
def test_copy_tree_never_follows_a_link_and_keeps_to_its_budget(tmp_path):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.py").write_text("a")
    (src / "sub" / "b.bin").write_bytes(b"x" * 1000)
    os.symlink("/etc", src / "etc")
    done = files.copy_tree(src, tmp_path / "dst", max_bytes=500)
    assert done.copied == ["a.py"]
    assert "etc: a link" in done.skipped and any("sub/b.bin" in s for s in done.skipped)
    assert not (tmp_path / "dst" / "etc").exists()


# -- issue 21, trap 1: a course command never writes what a learner wrote ---------------------
def test_publishing_the_release_refuses_to_overwrite_a_learners_edits(tmp_path):
    from grader.course.release import LearnerFilesError, learner_notebooks, publish

    course = tmp_path / "course"
    (course / "exercises" / "fusion").mkdir(parents=True)
    (course / "gradebook" / "release" / "fusion").mkdir(parents=True)
    released = course / "gradebook" / "release" / "fusion" / "fusion.ipynb"
    released.write_text('{"release": 1}')
    mine = course / "exercises" / "fusion" / "fusion.ipynb"
    mine.write_text('{"release": 0}')
    git = ["git", "-C", str(course), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(course)], check=True)
    subprocess.run([*git, "add", "exercises"], check=True)
    subprocess.run([*git, "commit", "-qm", "release 0"], check=True)
    assert publish(course, ["fusion"]) == ["exercises/fusion/fusion.ipynb"]  # untouched: updated
    assert mine.read_text() == '{"release": 1}'
    mine.write_text('{"release": 1, "my answer": 42}')  # the learner works in exercises/
    with pytest.raises(LearnerFilesError, match="exercises/fusion/fusion.ipynb has changes"):
        publish(course, ["fusion"])
    assert mine.read_text() == '{"release": 1, "my answer": 42}'
    (course / "my-work" / "fusion").mkdir(parents=True)
    fetched = course / "my-work" / "fusion" / "fusion.ipynb"
    fetched.write_text('{"release": 1}')  # the Assignments tab's blank copy: not your work
    choice = learner_notebooks(course, ["fusion"])[0]
    assert choice.path == mine and choice.why == "your work is exercises/fusion/fusion.ipynb"
    fetched.write_text('{"fetched": 1}')
    choice = learner_notebooks(course, ["fusion"])[0]
    assert "both my-work/fusion/fusion.ipynb and exercises/fusion/fusion.ipynb" in choice.why
