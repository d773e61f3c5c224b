"""Write grading/demo_submissions/: a handful of realistic learners for trying `make grade`.

    .venv/bin/python grading/make_demo_submissions.py

Learners (every assignment): ``ada_blank`` (the released notebook, untouched),
``ben_partial`` (the first two parts), ``cai_strong`` (three parts, and a valid but simple
challenge answer, plus debugging prints), ``dee_full`` (the reference solution). Built from
``exercises/`` and ``solutions/`` so they stay in step with the notebooks.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "grading" / "demo_submissions"
ASSIGNMENTS = ("fusion", "memory_planning", "instruction_generation")

#: A valid but simple challenge answer per assignment (reuses the learner's own part-2/3 code).
SIMPLE_CHALLENGE = {
    "fusion": "def my_fusion(graph, chip):\n    print('using my chain pass')\n"
    "    return fuse_chains(graph, chip)\n",
    "memory_planning": "def my_planner(records, alignment=64):\n    print('first fit for now')\n"
    "    return first_fit_plan(records, alignment)\n",
    "instruction_generation": "def my_kernel(kb):\n    print('my part 3 kernel for now')\n"
    "    return double_buffer(kb)\n",
}


def _solution_ids(nb) -> list[str]:
    return [
        c.metadata["nbgrader"]["grade_id"]
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"
    ]


def learner(released, solution, solved: int, challenge: str | None):
    """The released notebook with the first ``solved`` solution cells from the solution."""
    nb = nbformat.from_dict(released)
    sources = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in solution.cells}
    ids = _solution_ids(solution)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in ids[:solved]:
            cell.source = sources[gid]
        elif gid == ids[-1] and challenge:
            cell.source = challenge
    return nb


def main() -> None:
    for name in ASSIGNMENTS:
        released = nbformat.read(ROOT / "exercises" / name / f"{name}.ipynb", 4)
        solution = nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", 4)
        people = {
            "ada_blank": learner(released, solution, 0, None),
            "ben_partial": learner(released, solution, 2, None),
            "cai_strong": learner(released, solution, 3, SIMPLE_CHALLENGE[name]),
            "dee_full": learner(released, solution, 4, None),
        }
        for student, nb in people.items():
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs, cell.execution_count = [], None
            folder = OUT / student / name
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, folder / f"{name}.ipynb")
    print(f"wrote {len(list(OUT.glob('*/*/*.ipynb')))} notebooks under {OUT}")


if __name__ == "__main__":
    main()
