"""``GuardedExecute``: nbgrader's Execute step in the sandbox, with time and output limits.

Each notebook runs in a kernel of its own inside the sandbox (:mod:`~grader.sandbox.modes`,
:mod:`~grader.sandbox.launch`): its own namespaces and identity, the grading view of chipsim
(:mod:`~grader.sandbox.view`, without the reference passes), and in its working folder the
submission's own
plain files (a ``helpers.py`` beside the notebook; :mod:`~grader.sandbox.files`: no links, at most
16 MiB) and the data of the hidden instances drawn for this submission
(:mod:`~grader.problems.hidden`,
:mod:`~grader.problems.data`: never a seed). The feedback is written in the learner's language: the
one their own kernel recorded in the notebook they handed in (:mod:`~grader.course.sanitize`).

When the machine allows no sandbox, grading stops with a message saying what to do, unless
the instructor set :attr:`GuardedExecute.allow_unsandboxed` (then the notebook's own kernel
runs it, with no isolation, and every grade says so in the log).

A learner's cell that runs past :attr:`~GuardedExecute.timeout` seconds gets an error output
and grading moves on:

1. the kernel is interrupted (``KeyboardInterrupt`` in the cell); when that stops the cell,
   the kernel keeps its state and the next cell runs as usual;
2. when the cell ignores the interrupt, or the kernel dies, the kernel is restarted and the
   cells before this one are run again, quietly and each under the same limit, so the later
   cells find the learner's functions defined.

The error output says what really happened: the time limit, the CPU or file-size limit, an
exit of the learner's own code, or a signal that was not the grader's (read from the
supervisor's ``status.json``, never guessed). Outputs are bounded per cell and per notebook
(:mod:`~grader.sandbox.outputs`), and a message from the kernel that cannot be read (bad signature,
broken
JSON) is dropped and counted, never a crash of the grader.

Configure it in ``nbgrader_config.py``::

    c.GuardedExecute.timeout = 120       # seconds per cell (default: limits.CELL_SECONDS)
    c.GuardedExecute.sandbox = True      # isolate every kernel (refuse when impossible)
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import tempfile
from pathlib import Path
from queue import Empty
from time import monotonic
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.utils import ensure_async
from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer

from chipsim.errors import ChipsimError
from chipsim.i18n import ENGLISH, N_, spoken, tr, tr_in, use_language
from chipsim.i18n import ENV_VAR as LANGUAGE_ENV
from grader.problems import data as problem_data
from grader.problems.hidden import configured, submission_key
from grader.problems.parts import ASSIGNMENTS, PARTS
from grader.sandbox import files
from grader.sandbox.limits import CELL_SECONDS, MEMORY_BYTES, NOTEBOOK_SECONDS
from grader.sandbox.modes import (
    HOME,
    KERNEL_NAME,
    KernelRun,
    Limits,
    sandbox_mode,
    why_no_sandbox,
)
from grader.sandbox.outputs import (
    MAX_DEPTH,
    STOPPED,
    TIMED_OUT,
    OutputBudget,
    depth,
    note,
    stopped_output,
    too_deep,
)
from grader.scoring.grade import remembered_language

#: Kernel messages that carry output data (which may nest without limit).
DATA_MESSAGES = ("execute_result", "display_data", "update_display_data", "error")


class SandboxError(ChipsimError):
    """The grader could not run a notebook in the sandbox (not the learner's doing)."""


def why_it_ended(status: dict | None, language: str = ENGLISH) -> str:
    """What a dead kernel's supervisor saw, in words a learner can act on (in ``language``).

    Example:
        >>> why_it_ended({"exit_code": 3, "wall_s": 2.0}, "zh_CN").split("：")[0]
        '内核在 2.0 秒后以退出码 3 结束'
    """
    with use_language(language):
        return _why_it_ended(status or {})


def _why_it_ended(status: dict) -> str:
    if not status:
        return tr("the kernel stopped, and the grader has no record of why")
    if status.get("setup_error"):
        return tr("the sandbox could not start the kernel ({error})", error=status["setup_error"])
    sig, code = status.get("signal"), status.get("exit_code")
    limits, cpu, wall = status.get("limits", {}), status.get("cpu_s", 0.0), status.get("wall_s", 0)
    if status.get("oom_killed"):
        return tr(
            "the kernel and the processes it started used more than {gib:g} GiB of memory "
            "together, and the memory limit stopped it",
            gib=limits.get("as_bytes", 0) / 2**30,
        )  # fmt: skip
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits.get("cpu_s", 1e9) - 1):
        return tr("the kernel used all its CPU time ({seconds} s) and was stopped",
                  seconds=limits.get("cpu_s"))  # fmt: skip
    if sig == signal.SIGXFSZ:
        return tr("the kernel wrote a file larger than {size:,} bytes and was stopped",
                  size=limits.get("fsize", 0))  # fmt: skip
    if sig:
        return tr(
            "the kernel was killed by {name} after {wall:.1f} s ({cpu:.1f} s of CPU), not by "
            "one of the grader's limits: your code, a process it started, or the machine's "
            "out-of-memory killer ended it",
            name=status.get("signal_name") or f"signal {sig}", wall=wall, cpu=cpu,
        )  # fmt: skip
    return tr(
        "the kernel exited with code {code} after {wall:.1f} s: your code ended it "
        "(exit(), sys.exit() or os._exit())",
        code=code, wall=wall,
    )  # fmt: skip


class GuardedExecute(Execute):
    """Execute each cell in the sandbox under time and output limits (see the module docstring)."""

    timeout = Integer(CELL_SECONDS, help="Seconds a cell may run before it is stopped.").tag(
        config=True
    )
    sandbox = Bool(True, help="Run every notebook in the chipsim sandbox.").tag(config=True)
    allow_unsandboxed = Bool(
        False,
        help="Grade in the notebook's own kernel when this machine cannot sandbox kernels. "
        "Only for notebooks you trust: such a kernel can read solutions and rewrite grades.",
    ).tag(config=True)
    replay = Bool(
        True, help="After a restart, run the earlier cells again so later cells can run."
    ).tag(config=True)
    notebook_seconds = Integer(
        NOTEBOOK_SECONDS,
        help="Wall-clock seconds for a whole notebook, restarts and replays included; the "
        "cells that would start later do not run and say so (that learner only).",
    ).tag(config=True)
    memory_bytes = Integer(MEMORY_BYTES, help="Address space per kernel process.").tag(config=True)
    cpu_seconds = Integer(900, help="CPU seconds of one kernel.").tag(config=True)
    nproc = Integer(256, help="Processes and threads of one kernel.").tag(config=True)
    cell_output_bytes = Integer(2 << 20, help="Output kept per cell.").tag(config=True)
    notebook_output_bytes = Integer(32 << 20, help="Output kept per notebook.").tag(config=True)

    def preprocess(self, nb: Any, resources: Any = None, km: Any = None) -> Any:
        self._failed: list[int] = []  # cells not to replay after a restart
        self._bad_messages = 0
        self._dropped_updates = 0
        self._run: KernelRun | None = None
        self._deadline = monotonic() + self.notebook_seconds
        mode = sandbox_mode() if self.sandbox else None
        if self.sandbox and mode is None and not self.allow_unsandboxed:
            raise SandboxError(why_no_sandbox())
        self._language = remembered_language(nb)  # of what the grader tells the learner
        self._budget = OutputBudget(
            self.cell_output_bytes, self.notebook_output_bytes, self._language
        )
        resources = {} if resources is None else resources
        notes = resources.setdefault("chipsim", {})  # later steps read how this notebook ran
        notes["sandbox"] = mode or "none"
        notes["submission"] = submission_key(nb)  # the hidden instances are drawn from it
        assignment = str(resources.get("nbgrader", {}).get("assignment", ""))
        folder = self._kernel_files(nb, resources, assignment, notes["submission"])
        self._env = {problem_data.HIDDEN_FILE_ENV: problem_data.HIDDEN_FILE}
        if spoken(nb.get("metadata", {}).get("chipsim", {}).get("language")):
            self._env[LANGUAGE_ENV] = self._language  # the kernel speaks as the grader does
        try:
            if mode is not None:
                self._env[problem_data.HIDDEN_FILE_ENV] = f"{HOME}/{problem_data.HIDDEN_FILE}"
                limits = Limits(self.memory_bytes, self.cpu_seconds, self.nproc)
                view = _grading_view(assignment)
                self._run = KernelRun(mode, limits, view, self._env, folder)
                self.kernel_name = KERNEL_NAME
            else:
                self.log.warning("grading WITHOUT a sandbox: the notebook runs unisolated")
                self._env[problem_data.HIDDEN_FILE_ENV] = str(folder / problem_data.HIDDEN_FILE)
            return super().preprocess(nb, resources, km)
        finally:
            if self._run is not None:
                self._run.remove()
            shutil.rmtree(folder.parent, ignore_errors=True)

    def _kernel_files(self, nb: Any, resources: dict, assignment: str, key: str) -> Path:
        """A private folder of what the kernel finds in its working folder: the submission's
        plain files and the hidden instances drawn for it (data, never seeds)."""
        base = Path(tempfile.mkdtemp(prefix="chipsim-files-"))  # 0700, unpredictable name
        folder = base / "files"
        source = resources.get("metadata", {}).get("path") or ""
        if source and os.path.isdir(source):
            copied = files.copy_tree(Path(source), folder, skip=(".ipynb",), dotfiles=False)
            for why in copied.skipped:
                self.log.warning("not given to the kernel: %s", why)
            if copied.skipped:
                resources["chipsim"]["files_skipped"] = copied.skipped
        else:
            folder.mkdir(mode=0o700)
        hidden = configured(self)
        parts = [hidden.bind(PARTS[p], key) for p in ASSIGNMENTS.get(assignment, ())]
        problem_data.write(parts, folder / problem_data.HIDDEN_FILE)
        return folder

    # -- the kernel: sandboxed, started only once its sockets are locked ---------------------
    def create_kernel_manager(self) -> Any:
        km = super().create_kernel_manager()
        if self._run is not None:
            km.kernel_spec_manager = KernelSpecManager(kernel_dirs=[str(self._run.kernels)])
            km.transport, km.ip = "ipc", self._run.ip
        return km

    async def async_start_new_kernel(self, **kwargs: Any) -> None:
        if self._run is not None:
            self._run.clear()
        else:  # the notebook's own kernel: hand it the hidden instances and the language
            kwargs["env"] = {**os.environ, **kwargs.get("env", {}), **self._env}
        await super().async_start_new_kernel(**kwargs)
        await self._wait_ready()

    async def _wait_ready(self) -> None:
        if self._run is None:
            return
        process = getattr(self.km.provisioner, "process", None)

        def alive() -> bool:
            return process is None or process.poll() is None

        status = await asyncio.to_thread(self._run.wait_ready, float(self.startup_timeout), alive)
        if status is not None:
            raise SandboxError(why_it_ended(status) + f"; launcher said: {status}")
        self.log.info("kernel limits: %s", self._run.limits_applied or "per-process limits only")

    async def async_start_new_kernel_client(self) -> Any:
        kc = await super().async_start_new_kernel_client()
        for channel in (kc.iopub_channel, kc.shell_channel):
            channel._recv = self._tolerant(channel._recv)
        return kc

    # nbclient binds the sync wrappers to its own coroutines: point them at ours.
    start_new_kernel = run_sync(async_start_new_kernel)
    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    def _tolerant(self, recv: Any) -> Any:
        """A channel's receive that turns an unreadable message into an ignored one."""

        async def receive(**kwargs: Any) -> dict:
            try:
                return await recv(**kwargs)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # bad signature, broken JSON, deep nesting: the kernel's
                self._bad_messages += 1
                if self._bad_messages <= 3:
                    self.log.warning("dropped an unreadable message from the kernel: %.200s", exc)
                return {"msg_type": "unreadable", "header": {}, "parent_header": {},
                        "content": {}, "metadata": {}}  # fmt: skip

        return receive

    # -- outputs ------------------------------------------------------------------------------
    def process_message(self, msg: dict, cell: Any, cell_index: int) -> Any:
        content = msg.get("content") or {}
        if msg.get("msg_type") in DATA_MESSAGES and depth(content, MAX_DEPTH + 8) > MAX_DEPTH + 8:
            # nbformat recurses on an output's data: cut it before anything reads it
            text = too_deep(self._language)["text"]
            header = {**msg.get("header", {}), "msg_type": "stream"}
            content = {"name": "stdout", "text": text}
            msg = {**msg, "msg_type": "stream", "header": header, "content": content}
        return super().process_message(msg, cell, cell_index)

    def output(self, outs: list, msg: dict, display_id: Any, cell_index: int) -> Any:
        out = super().output(outs, msg, display_id, cell_index)
        if out is None or not outs or outs[-1] is not out:
            return out
        kept = self._budget.admit(out)
        if kept is None:
            outs.pop()
        elif kept is not out:
            outs[-1] = NotebookNode(kept)
        return kept

    def _update_display_id(self, display_id: str, msg: dict) -> None:
        """A display update rewrites every output shown under ``display_id``: charged to the
        output budget for each of them, and dropped past it."""
        content = msg.get("content") or {}
        out = {"output_type": "display_data", "data": content.get("data") or {},
               "metadata": content.get("metadata") or {}}  # fmt: skip
        copies = sum(len(ix) for ix in self._display_id_map.get(display_id, {}).values())
        if not copies:
            return
        if not self._budget.admit_update(out, copies):
            self._dropped_updates += 1
            if self._dropped_updates <= 3:
                self.log.warning("dropped a display update beyond the output budget")
            return
        super()._update_display_id(display_id, msg)

    # -- cells: time limit, and the truth about a dead kernel -------------------------------
    def _say(self, message: str, **fields: Any) -> str:
        """``message`` (English, :func:`~chipsim.i18n.tr`) in the learner's language."""
        return tr_in(self._language, message, **fields)

    def on_cell_executed(self, **kwargs: Any) -> None:
        reply = kwargs["execute_reply"]
        if reply["content"].get("ename") == "CellTimeoutError":
            cell, index = kwargs["cell"], kwargs["cell_index"]
            text = self._say(N_("the cell ran for more than {limit} s and was interrupted"),
                             limit=self._get_timeout(cell))  # fmt: skip
            # First, so the feedback names the time limit rather than the KeyboardInterrupt.
            cell.outputs.insert(0, NotebookNode(stopped_output(text, TIMED_OUT)))
            self._failed.append(index)
            return
        super().on_cell_executed(**kwargs)

    async def async_execute_cell(
        self,
        cell: NotebookNode,
        cell_index: int,
        execution_count: int | None = None,
        store_history: bool = True,
    ) -> NotebookNode:
        self._budget.start_cell()
        bad_before = self._bad_messages
        if cell.cell_type == "code" and cell.source.strip() and monotonic() > self._deadline:
            why = self._say(
                N_("the notebook ran out of time: the grader gives a notebook {seconds} s in "
                   "all, and this cell would have started after that, so it did not run"),
                seconds=self.notebook_seconds,
            )  # fmt: skip
            cell.outputs = [NotebookNode(stopped_output(why))]
            self._failed.append(cell_index)
            return cell
        try:
            cell = await super().async_execute_cell(
                cell, cell_index, execution_count, store_history
            )
        except (CellTimeoutError, DeadKernelError) as exc:
            if isinstance(exc, DeadKernelError):
                status = self._run.status(wait=3.0) if self._run else None
                why, ename = why_it_ended(status, self._language), STOPPED
                self.log.warning("cell %d: %s; restarting the kernel", cell_index,
                                 why_it_ended(status))  # fmt: skip
            else:
                ignored = N_("the cell ran for more than {limit} s and ignored the interrupt")
                why, ename = self._say(ignored, limit=self._get_timeout(cell)), TIMED_OUT
                self.log.warning("cell %d: past the time limit, ignored the interrupt; "
                                 "restarting the kernel", cell_index)  # fmt: skip
            outputs = cell.get("outputs", [])
            restarted = self._say(N_("{why}; the kernel was restarted"), why=why)
            cell.outputs = [NotebookNode(stopped_output(restarted, ename)), *outputs]
            self._failed.append(cell_index)
            await self._restart_and_replay(cell_index)
        if self._bad_messages > bad_before:
            n = self._bad_messages - bad_before
            said = note(N_("the grader ignored {n} unreadable message(s) from the kernel"),
                        self._language, n=n)  # fmt: skip
            cell.outputs.append(NotebookNode(said))
        return cell

    # nbclient binds the sync wrapper to its own coroutine: point it at ours.
    execute_cell = run_sync(async_execute_cell)

    def _get_timeout(self, cell: Any) -> int | None:
        """The cell's limit, never past the notebook's own deadline."""
        limit = super()._get_timeout(cell)
        deadline = getattr(self, "_deadline", None)
        if deadline is None:
            return limit
        left = max(1, int(deadline - monotonic()))
        return left if limit is None else min(limit, left)

    async def _restart_and_replay(self, upto: int) -> None:
        assert self.km is not None and self.kc is not None  # set up by setup_kernel()
        if self._run is not None:
            self._run.clear()
        await ensure_async(self.km.restart_kernel(now=True))
        await self._wait_ready()
        await ensure_async(self.kc.wait_for_ready(timeout=self.startup_timeout))
        if not self.replay:
            return
        for index, cell in enumerate(self.nb.cells[:upto]):
            if cell.cell_type == "code" and cell.source.strip() and index not in self._failed:
                if not await self._run_quietly(cell):
                    self.log.warning("replay stopped at cell %d", index)
                    return

    async def _run_quietly(self, cell: NotebookNode) -> bool:
        """Run ``cell``'s source again without touching its outputs; False if it timed out."""
        assert self.kc is not None
        msg_id = self.kc.execute(cell.source, store_history=False, stop_on_error=False)
        limit = self._get_timeout(cell)
        deadline = monotonic() + limit if limit else None
        while True:
            left = None if deadline is None else max(0.0, deadline - monotonic())
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=left))
            except Empty:
                await ensure_async(self.km.interrupt_kernel())
                return False
            if msg["parent_header"].get("msg_id") == msg_id:
                return True


def _grading_view(assignment: str) -> Path:
    from grader.sandbox.view import grading_view

    return grading_view(assignment)
