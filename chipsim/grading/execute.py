"""``GuardedExecute``: nbgrader's Execute step with a sandboxed kernel and per-cell time limits.

A learner's cell that runs past :attr:`~GuardedExecute.timeout` seconds gets an error output
(``CellTimeoutError``) and grading moves on:

1. the kernel is interrupted (``KeyboardInterrupt`` in the cell); when that stops the cell,
   the kernel keeps its state and the next cell runs as usual;
2. when the cell ignores the interrupt (or the kernel dies: out of CPU time, killed by a
   limit), the kernel is restarted and the cells before this one are run again, quietly and
   each under the same limit, so the later cells find the learner's functions defined.

A part whose test cell timed out has no answer, so it scores 0; every other part is graded.
The kernel is ``chipsim-sandbox`` (:mod:`chipsim.grading.sandbox`) when it is installed and
:attr:`~GuardedExecute.sandbox` is on; otherwise the notebook's own kernel.

Configure it in ``nbgrader_config.py`` (it replaces ``Execute`` in the autograde steps)::

    c.GuardedExecute.timeout = 60        # seconds per cell
    c.GuardedExecute.sandbox = True      # use chipsim-sandbox when installed
"""

from __future__ import annotations

from queue import Empty
from time import monotonic
from typing import Any

from jupyter_client.utils import ensure_async
from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer

from chipsim.grading.sandbox import KERNEL_NAME


def sandbox_installed() -> bool:
    """Is the ``chipsim-sandbox`` kernelspec visible to Jupyter?"""
    from jupyter_client.kernelspec import KernelSpecManager

    return KERNEL_NAME in KernelSpecManager().find_kernel_specs()


def timeout_output(seconds: int | None, how: str) -> NotebookNode:
    """The error output a timed-out (or killed) cell gets."""
    text = f"the cell ran for more than {seconds} s and was stopped ({how})"
    return NotebookNode(
        output_type="error",
        ename="CellTimeoutError",
        evalue=text,
        traceback=[f"CellTimeoutError: {text}"],
    )


class GuardedExecute(Execute):
    """Execute each cell under a time limit in the sandbox kernel (see the module docstring)."""

    timeout = Integer(60, help="Seconds a cell may run before it is stopped.").tag(config=True)
    sandbox = Bool(
        True, help="Run the notebook in the chipsim-sandbox kernel when it is installed."
    ).tag(config=True)
    replay = Bool(
        True, help="After a restart, run the earlier cells again so later cells can run."
    ).tag(config=True)

    def preprocess(self, nb: Any, resources: Any = None, km: Any = None) -> Any:
        self._failed: list[int] = []  # cells not to replay after a restart
        if self.sandbox and not self.kernel_name and sandbox_installed():
            self.kernel_name = KERNEL_NAME
        return super().preprocess(nb, resources, km)

    def on_cell_executed(self, **kwargs: Any) -> None:
        reply = kwargs["execute_reply"]
        if reply["content"].get("ename") == "CellTimeoutError":
            cell, index = kwargs["cell"], kwargs["cell_index"]
            # First, so the feedback names the timeout rather than the KeyboardInterrupt.
            cell.outputs.insert(0, timeout_output(self._get_timeout(cell), "interrupted"))
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
        try:
            return await super().async_execute_cell(
                cell, cell_index, execution_count, store_history
            )
        except (CellTimeoutError, DeadKernelError) as exc:
            how = (
                "the kernel died"
                if isinstance(exc, DeadKernelError)
                else "it ignored the interrupt"
            )
            self.log.warning("cell %d: %s; restarting the kernel", cell_index, how)
            cell.outputs = [timeout_output(self._get_timeout(cell), how), *cell.get("outputs", [])]
            self._failed.append(cell_index)
            await self._restart_and_replay(cell_index)
            return cell

    # nbclient binds the sync wrapper to its own coroutine: point it at ours.
    execute_cell = run_sync(async_execute_cell)

    async def _restart_and_replay(self, upto: int) -> None:
        assert self.km is not None and self.kc is not None  # set up by setup_kernel()
        await ensure_async(self.km.restart_kernel(now=True))
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
