"""Running a submission's cells in a Jupyter kernel, bounded, for :mod:`hetlab.book.grading`.

The kernel is started through :func:`hetlab.book._isolation.wrap` (its own user and PID namespace where
the system allows), every message it sends is capped (ZMQ ``MAXMSGSIZE``), ordinary cell output is
dropped as it arrives (a 300 MB print costs the grader nothing), widget state is not kept, and only the
probe's standard output is collected, up to :data:`hetlab.book._codec.MAX_BYTES`. Each cell runs at most
``timeout`` seconds and all of them together end by ``deadline``. Before each probe and after the
kernel ends, every process the submission started is ended (:func:`hetlab.book._isolation.end_tree`).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from hetlab.book import _codec, _isolation


class GradingError(ValueError):
    """The submission or the key is malformed (raised here and in :mod:`hetlab.book.grading`)."""


MAX_MESSAGE = 16 * 2**20          # bytes per ZMQ message from the kernel; a larger one drops the connection
MAX_RESTARTS = 5
MAX_CELL_OUTPUT = 2**20           # characters a cell may print before the rest is dropped in the kernel
#: Run first in each kernel: a chatty cell's output beyond MAX_CELL_OUTPUT is dropped before it is sent, so
#: an honest notebook stays far below MAX_MESSAGE (one that undoes this only loses its own report).
#: IPython re-wraps ``write`` around each cell (its history tee), so the cap is installed at the start of each.
SETUP = f"""
def __hetlab_cap(limit={MAX_CELL_OUTPUT}):
    import sys
    def install(*args):
        used = [0]
        for stream in (sys.stdout, sys.stderr):
            def write(text, *more, _write=stream.write, **named):
                used[0] += len(text) if isinstance(text, str) else 0
                return _write(text, *more, **named) if used[0] <= limit else len(text)
            stream.write = write
    get_ipython().events.register('pre_execute', install)
__hetlab_cap()
del __hetlab_cap
"""


def _client_class():
    import zmq
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    class Manager(AsyncKernelManager):
        hetlab_prefix: list = []

        def format_kernel_cmd(self, extra_arguments=None):
            return _isolation.wrap(super().format_kernel_cmd(extra_arguments), self.hetlab_prefix)

        def client(self, **kwargs):
            kc = super().client(**kwargs)
            kc.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)   # applies to the channels made after this
            return kc

    class Client(NotebookClient):
        """A NotebookClient that keeps no output but the probe's, and no widget state."""

        def __init__(self, *args, hetlab_prefix: list, **kwargs) -> None:
            super().__init__(*args, kernel_manager_class=Manager, store_widget_state=False, record_timing=False,
                             **kwargs)
            self.hetlab_prefix, self.captured, self.captured_size = hetlab_prefix, None, 0

        def create_kernel_manager(self):
            km = super().create_kernel_manager()
            km.hetlab_prefix = self.hetlab_prefix
            return km

        def output(self, outs, msg, display_id, cell_index):
            content = msg.get("content") or {}
            if (self.captured is not None and msg.get("msg_type") == "stream" and content.get("name") == "stdout"
                    and isinstance(content.get("text"), str)):
                self.captured_size += len(content["text"])
                if self.captured_size <= _codec.MAX_BYTES:
                    self.captured.append(content["text"])
            return None

        def handle_comm_msg(self, outs, msg, cell_index):
            return None

    return Client


class _Stop(Exception):
    """The total time is up."""


def run_plan(plan: list, needs: dict, *, timeout: float, deadline: float, bank: list,
             known: set[int]) -> tuple[dict, dict]:
    """Execute ``plan`` in a kernel: {gid: claims or a reason}, {cell index: verdict for a dead/stuck cell}.

    ``plan`` holds ("cell", index, cell) and ("extract", gid, None) steps. After a cell ends the kernel or
    runs past ``timeout``, a fresh kernel replays the cells that ran before it (not the failed one) and
    goes on, so one bad cell costs only its own exercise. Past ``deadline`` nothing more runs. ``known``:
    this process's children from before grading (never ended; see :func:`hetlab.book._isolation.guarded`).
    """
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbformat.v4 import new_code_cell, new_notebook


    Client = _client_class()
    prefix = _isolation.namespace_prefix()
    grader = os.getpid()
    claims, failures, done = {}, {}, []
    work = Path(tempfile.mkdtemp(prefix="hetlab-grade-"))
    position, restarts = 0, 0

    def cell_timeout(_cell=None) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Stop()
        return max(0.01, min(timeout, left))

    def sweep(client) -> None:
        """End every process the submission started, except the kernel itself."""
        provisioner = getattr(getattr(client, "km", None), "provisioner", None)
        pid = getattr(provisioner, "pid", None)
        keep = set()
        if pid:
            keep = {pid} | (_isolation.children(pid) if prefix else set())   # the wrapper and the kernel
        _isolation.end_tree([pid] if pid else [], keep=keep, orphans_of=grader, known=known | keep)

    try:
        (work / "questions.json").write_text(json.dumps(bank, ensure_ascii=False), encoding="utf-8")
        while position < len(plan) and restarts <= MAX_RESTARTS:
            client = Client(new_notebook(cells=[new_code_cell("")]), timeout=None, timeout_func=cell_timeout,
                            kernel_name="python3", allow_errors=True, shutdown_kernel="immediate",
                            startup_timeout=max(1, int(min(60.0, deadline - time.monotonic()))),
                            resources={"metadata": {"path": str(work)}}, hetlab_prefix=prefix)
            current = None
            try:
                cell_timeout()
                with client.setup_kernel(stderr=subprocess.DEVNULL):   # not the kernel's log lines
                    client.execute_cell(new_code_cell(SETUP), 0)
                    for step in [*done, *plan[position:]]:
                        kind, ref, cell = current = step
                        if kind == "cell":
                            client.execute_cell(cell, 0)
                        elif ref not in claims:
                            sweep(client)
                            probe = new_code_cell(_codec.probe(needs[ref]))
                            client.captured, client.captured_size = [], 0
                            try:
                                client.execute_cell(probe, 0)
                            finally:
                                text, size, client.captured = "".join(client.captured), client.captured_size, None
                            try:
                                if size > _codec.MAX_BYTES:
                                    raise ValueError("the kernel printed more than the report may hold")
                                claims[ref] = _codec.parse_extract(text)
                            except ValueError as exc:
                                claims[ref] = str(exc)
                        if position < len(plan) and step is plan[position]:
                            done.append(step)
                            position += 1
            except _Stop:
                break
            except (DeadKernelError, CellTimeoutError) as exc:
                if current is None:
                    raise GradingError(f"cannot start a python3 kernel to run the submission: {exc}") from None
                restarts += 1
                kind, ref, _ = current
                if kind == "extract":
                    claims[ref] = (f"reading the values took longer than {timeout:g} s"
                                   if isinstance(exc, CellTimeoutError) else "the kernel died while reading the values")
                elif isinstance(exc, CellTimeoutError):
                    failures[ref] = {"status": "timeout", "message": f"cell {ref} ran longer than {timeout:g} s"}
                else:
                    failures[ref] = {"status": "died", "message": f"the kernel died while running cell {ref} "
                                                                  "(os._exit, a crash or out of memory)"}
                if current in done:
                    done.remove(current)        # it failed on replay: leave it out from now on
                elif current is plan[position]:
                    position += 1
            except (NoSuchKernel, RuntimeError, OSError) as exc:
                if time.monotonic() >= deadline:
                    break
                raise GradingError(f"cannot run the submission in a python3 kernel: {exc}") from None
            finally:
                sweep(client)
        over = time.monotonic() >= deadline
        for kind, ref, _ in plan[position:]:
            if kind == "extract":
                claims.setdefault(ref, "grading stopped: the submission used up its total time" if over
                                  else f"grading stopped: the kernel died or stalled more than {MAX_RESTARTS} times")
    finally:
        _isolation.end_tree([], orphans_of=grader, known=known)
        shutil.rmtree(work, ignore_errors=True)
    return claims, failures
