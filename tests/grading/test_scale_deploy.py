"""The Kubernetes Indexed Job runs one shard per completion index, all of one class."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from grader.gradebook.shards import Shard

ROOT = Path(__file__).resolve().parents[2]


def test_the_indexed_job_maps_each_completion_index_to_one_shard_of_n():
    job = yaml.safe_load((ROOT / "deploy" / "kubernetes" / "grading-job.yaml").read_text())
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    (container,) = spec["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    n = int(env["SHARDS"]["value"])
    assert spec["completions"] == spec["parallelism"] == n  # every shard, all at once
    assert env["GRADEBOOK_URL"]["valueFrom"]["secretKeyRef"]["key"] == "url"
    script = " ".join(container["args"])
    assert re.search(r'make grade SHARD="\$\{JOB_COMPLETION_INDEX\}/\$\{SHARDS\}"', script)
    assert "--unsafe-no-sandbox" not in script
    assert [str(Shard.parse(f"{k}/{n}")) for k in range(n)] == [f"{k}/{n}" for k in range(n)]
