"""``LimitOutput``: nbgrader's cap on a cell's printed lines, keeping the cell's last lines.

nbgrader's own ``LimitOutput`` keeps a cell's first ``max_lines`` lines of printed output and
ends them with "... Output truncated ...", in English. What the grader adds to a cell comes
last (:func:`grader.sandbox.outputs.note`: why output was dropped, why a cell was stopped), so
a learner's long print would push it past the cut, out of the feedback. This one keeps the
first half and the last half of the lines, and says how many were left out between them, in
the learner's language (:func:`grader.scoring.grade.remembered_language`). Tracebacks are
nbgrader's to shorten, as before.

Registered in ``nbgrader_config.py`` in nbgrader's place, after ``RescoreAnswers``.

Example:
    >>> import nbformat
    >>> cell = nbformat.v4.new_code_cell()
    >>> cell.outputs = [nbformat.v4.new_output("stream", text="".join(f"{k}\\n" for k in range(9)))]
    >>> limit = LimitOutput(max_lines=5)
    >>> limit._language = "en"
    >>> print(limit._limit_stream_output(cell).outputs[0].text, end="")
    0
    1
    [... 5 lines of output left out here: a cell shows at most 5 ...]
    7
    8
"""

from __future__ import annotations

from typing import Any

from nbgrader.preprocessors import LimitOutput as NbgraderLimitOutput

from chipsim.i18n import ENGLISH, N_
from grader.sandbox.outputs import note
from grader.scoring.grade import remembered_language

LEFT_OUT = N_("... {n} lines of output left out here: a cell shows at most {limit} ...")


class LimitOutput(NbgraderLimitOutput):
    """See the module docstring."""

    _language = ENGLISH

    def preprocess(self, nb: Any, resources: Any) -> Any:
        self._language = remembered_language(nb)
        return super().preprocess(nb, resources)

    def _limit_stream_output(self, cell: Any) -> Any:
        if self.max_lines < 0 or cell.cell_type != "code":
            return cell
        # every printed line, with the output it came from (a line keeps its own newline)
        lines = [
            (k, line)
            for k, out in enumerate(cell.outputs)
            if out.output_type == "stream"
            for line in out.text.splitlines(keepends=True)
        ]
        if len(lines) <= self.max_lines:
            return cell
        keep = max(self.max_lines - 1, 0)  # one line says what was left out
        head, tail = (keep + 1) // 2, keep // 2
        cut = len(lines) - head - tail
        # said as every note of the grader's is said, in the output the kept head ends in
        said = note(LEFT_OUT, self._language, n=cut, limit=self.max_lines)["text"]
        where, last = lines[head - 1] if head else (lines[0][0], "\n")
        marker = (where, said if last.endswith("\n") else "\n" + said)
        kept = [*lines[:head], marker, *lines[len(lines) - tail :]]
        texts: dict[int, str] = {}
        for k, line in kept:
            texts[k] = texts.get(k, "") + line
        outputs = []
        for k, out in enumerate(cell.outputs):
            if out.output_type != "stream":
                outputs.append(out)
            elif k in texts:
                out.text = texts[k]
                outputs.append(out)
        cell.outputs = outputs
        return cell
