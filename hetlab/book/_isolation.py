"""Keeping a graded submission's processes away from the grader's (Linux; elsewhere each step is a no-op).

Three mechanisms, none of which needs privileges:

* :func:`nondumpable` (``prctl(PR_SET_DUMPABLE, 0)``): ``/proc/<pid>/fd``, ``/proc/<pid>/mem`` and
  ptrace of the process become unreachable to other processes of the same user (only a process with
  ``CAP_SYS_PTRACE`` over the process's user namespace, i.e. root outside a user namespace, still
  reaches them). The grader, the checker and the worker use it; the flag is inherited by ``fork`` and
  reset by ``execve``, so each fresh interpreter sets it again before it reads anything.
* :func:`subreaper` (``PR_SET_CHILD_SUBREAPER``): a process the submission detaches (double ``fork``,
  ``setsid``) is re-parented to the grader instead of ``init``, so :func:`end_tree` finds and ends it;
  ending repeats until nothing is left, which also stops a fork bomb.
* :func:`namespace_prefix`: where unprivileged user namespaces work (``unshare --user --pid
  --mount-proc``, probed once at run time), the kernel and the worker run in their own user and PID
  namespace with their own ``/proc``: they cannot see, signal or open the grader's processes, even
  when grading runs as root, and everything they started dies with them. Where the probe fails the
  prefix is empty and the two mechanisms above still hold.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

PR_SET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_DUMPABLE = 1, 3, 4
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37


def _prctl(option: int, value: int = 0) -> int:
    """``prctl(option, value)``; -1 where there is no prctl (not Linux)."""
    if not sys.platform.startswith("linux"):
        return -1
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if option == PR_GET_CHILD_SUBREAPER:
            out = ctypes.c_int(0)
            return out.value if libc.prctl(option, ctypes.byref(out), 0, 0, 0) == 0 else -1
        return libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0)
    except (OSError, AttributeError):
        return -1


def nondumpable() -> int:
    """Make this process non-dumpable; return the previous setting (for :func:`restore_dumpable`), -1 if none."""
    before = _prctl(PR_GET_DUMPABLE)
    _prctl(PR_SET_DUMPABLE, 0)
    return before


def restore_dumpable(before: int) -> None:
    if before in (1, 2):
        _prctl(PR_SET_DUMPABLE, before)


def subreaper(on: bool) -> int:
    """Make this process (or stop it being) the reaper of its orphaned descendants; return the previous setting."""
    before = _prctl(PR_GET_CHILD_SUBREAPER)
    _prctl(PR_SET_CHILD_SUBREAPER, int(on))
    return before


@contextmanager
def guarded() -> Iterator[set[int]]:
    """For the time of a grading run: this process non-dumpable and the reaper of its orphans; yields
    its children from before (never ended); on exit ends every other process below it and restores both."""
    dumpable, reaper = nondumpable(), subreaper(True)
    known = children_any(os.getpid())
    try:
        yield known
    finally:
        end_tree([], orphans_of=os.getpid(), known=known)
        if reaper == 0:
            subreaper(False)
        restore_dumpable(dumpable)


def _parents() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state letter), for every process this one can see."""
    table = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            table[int(name)] = (int(fields[1]), fields[0].decode())
        except (OSError, IndexError, ValueError):
            continue                       # ended meanwhile
    return table


def children(pid: int) -> set[int]:
    """The living direct children of ``pid``."""
    return {p for p, (parent, state) in _parents().items() if parent == pid and state != "Z"}


def descendants(roots: Iterable[int], table: dict | None = None) -> set[int]:
    """Every living process below ``roots`` (not the roots themselves)."""
    table = _parents() if table is None else table
    below: dict[int, list[int]] = {}
    for p, (parent, _state) in table.items():
        below.setdefault(parent, []).append(p)
    found, stack = set(), list(roots)
    while stack:
        for child in below.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return {p for p in found if table[p][1] != "Z"}


def end_tree(roots: Iterable[int], *, keep: Iterable[int] = (), orphans_of: int | None = None,
             known: Iterable[int] = (), rounds: int = 500) -> int:
    """SIGKILL every process below ``roots`` except ``keep`` (and, with ``orphans_of``, every child of that
    process not in ``known``, with everything below it), round after round until none is left; then reap
    the zombies this process inherited. Returns how many processes were ended."""
    roots, keep, known = set(roots), set(keep), set(known)
    ended = 0
    for _ in range(rounds):
        table = _parents()
        tops = {r for r in roots if r in table}
        if orphans_of is not None:
            tops |= {p for p, (parent, _) in table.items() if parent == orphans_of and p not in known | keep}
        victims = (descendants(tops, table) | (tops - roots)) - keep
        victims = {p for p in victims if p in table and table[p][1] != "Z"}
        if not victims:
            break
        for p in victims:
            try:
                os.kill(p, signal.SIGKILL)
                ended += 1
            except OSError:
                pass
        _reap(known | keep)
        time.sleep(0.001)
    _reap(known | keep)
    return ended


def _reap(spare: set[int]) -> None:
    """Collect this process's dead children that nobody else waits for (orphans it inherited)."""
    for p in children_any(os.getpid()) - spare:
        try:
            os.waitpid(p, os.WNOHANG)
        except ChildProcessError:
            pass


def children_any(pid: int) -> set[int]:
    """Direct children of ``pid``, zombies included."""
    return {p for p, (parent, _) in _parents().items() if parent == pid}


_PREFIX: list[str] | None = None
PDEATH = ("import ctypes, os, sys; ctypes.CDLL(None).prctl(1, 9, 0, 0, 0); "
          "os.getppid() == int(sys.argv[1]) or os._exit(1); os.execvp(sys.argv[2], sys.argv[2:])")


def namespace_prefix() -> list[str]:
    """The command prefix that runs a program in its own user, PID and mount namespace (with its own
    ``/proc``), ending it with the grader; ``[]`` where that is impossible here (probed once)."""
    global _PREFIX
    if _PREFIX is None:
        _PREFIX = []
        unshare = shutil.which("unshare")
        if sys.platform.startswith("linux") and unshare and os.environ.get("HETLAB_GRADE_NO_NAMESPACE") != "1":
            for user in ("--map-current-user", "--map-root-user"):
                candidate = [unshare, user, "--pid", "--fork", "--mount-proc", "--kill-child"]
                try:
                    probe = subprocess.run([*candidate, sys.executable, "-I", "-S", "-c",
                                            "import os; print(os.getpid())"],
                                           capture_output=True, text=True, timeout=20)
                except (OSError, subprocess.SubprocessError):
                    continue
                if probe.returncode == 0 and probe.stdout.strip() == "1":
                    _PREFIX = candidate
                    break
    return list(_PREFIX)


def wrap(command: list[str], prefix: list[str]) -> list[str]:
    """``command`` inside ``prefix`` (from :func:`namespace_prefix`), ended when its parent ends."""
    if not prefix:
        return list(command)
    return [sys.executable, "-I", "-S", "-c", PDEATH, str(os.getpid()), *prefix, *command]
