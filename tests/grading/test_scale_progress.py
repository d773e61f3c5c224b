"""A shard's progress bar (counts, failures, rate) and the summary it ends with."""

from __future__ import annotations

import io
import re

from grader.gradebook.progress import Progress, Summary


def test_the_bar_counts_graded_and_failed_and_shows_a_rate_in_a_log_every_tenth():
    log = io.StringIO()  # not a terminal (a Kubernetes pod's log): one line per tenth
    bar = Progress(20, label="shard 1/4", stream=log)
    for k in range(20):
        bar.step(f"s{k}/fusion", ok=k != 3)
    lines = log.getvalue().splitlines()
    assert len(lines) == 11  # the first, then one per tenth: not one per notebook
    assert lines[-1].startswith("shard 1/4 [" + "#" * 20 + "] 20/20 graded, 1 failed |")
    assert re.search(r"\| \d+\.\d\d notebooks/s \| ~0 s left \| s19/fusion$", lines[-1])
    assert "failed" not in lines[0]  # the first line was drawn before s3 failed
    # one notebook says too little of the rest: no time left until a few are graded
    assert "time left: estimating" in lines[0] and "s left" not in lines[0]
    assert all("estimating" not in line for line in lines[2:])


def test_the_summary_says_graded_skipped_elsewhere_and_not_graded():
    line = Summary(graded=38, skipped=2, elsewhere=1, failed=1, seconds=50.0).line("shard 1/4")
    assert line == (
        "shard 1/4: 38 graded, 2 skipped (unchanged since last graded), 1 graded by another "
        "process, 1 NOT graded, in 50 s (0.76 notebooks/s)"
    )
