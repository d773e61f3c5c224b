"""Where a learner's notebook runs: a kernel of its own that sees nothing of the course.

* :mod:`.modes` — which isolation this machine allows, limits, one kernel's run folder;
* :mod:`.launch`, :mod:`.ns`, :mod:`.cgroup` — the standalone launcher (namespaces, the
  kernel's file system, its control group); loaded by path, never through ``sys.path``;
* :mod:`.execute` — ``GuardedExecute``, nbgrader's Execute step in the sandbox;
* :mod:`.view` — the package as a graded kernel sees it (the reference solutions withheld);
* :mod:`.files` — a learner's files, read without following a link;
* :mod:`.outputs` — the output budget; :mod:`.manifest` — the package's own files, watched;
* :mod:`.limits` — the default limits of one graded notebook (imports nothing).
"""
