"""Reshaping a task graph to shorten its critical path: split one long task into parallel pieces.

The standard advice for a chain-bound graph is "give the chain's tasks more resources, or split
them further". :func:`split_task` does the second: a task of work ``w`` becomes ``k`` independent
pieces of work ``w / k``, each with every predecessor and successor of the original, each edge
carrying ``1/k`` of the original edge's data (each piece reads and writes its share).

>>> from hetlab.tasks import Task, TaskGraph
>>> g = TaskGraph([Task("a", 8.0), Task("b", 2.0)], [("a", "b", 4.0)])
>>> h = split_task(g, "a", 4)
>>> [(t.name, t.work) for t in h.tasks]
[('a#0', 2.0), ('a#1', 2.0), ('a#2', 2.0), ('a#3', 2.0), ('b', 2.0)]
>>> h.edges[("a#0", "b")]
1.0
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ._validate import check_int
from .devices import Device, check_devices
from .tasks import Task, TaskGraph, as_graph, critical_path, execution_time

__all__ = ["split_task", "split_longest_critical_task", "MAX_PIECES"]

#: Most pieces one task may be split into (each piece is a Python object with its own edges).
MAX_PIECES = 10_000


def split_task(graph: TaskGraph, task: str | Task, k: int = 2) -> TaskGraph:
    """``graph`` with ``task`` (a name or a Task of the graph) replaced by ``k`` independent pieces
    ``name#0`` ... ``name#{k-1}``.

    Assumptions: the task's work divides perfectly (no extra cost for splitting or merging) and its
    input and output data divide evenly among the pieces. A task with explicit ``times`` is split
    the same way (each time divided by ``k``). ``k = 1`` returns an equal graph.
    """
    graph = as_graph(graph, name="graph")
    name = task.name if isinstance(task, Task) else task
    if not isinstance(name, str):
        raise TypeError(f"task must be a task name (str) or a Task, got {type(task).__name__} {task!r:.80}")
    if name not in graph.index:
        raise ValueError(f"task must be a task of graph, got {name!r}")
    k = check_int("k", k, low=1, high=MAX_PIECES)
    old = graph.task(name)
    times = None if old.times is None else {d: t / k for d, t in old.times.items()}
    pieces = [replace(old, name=f"{name}#{p}", work=old.work / k, times=times) for p in range(k)]
    names = {t.name for t in graph.tasks} - {name}
    clash = [p.name for p in pieces if p.name in names]
    if clash:
        raise ValueError(f"task: the pieces' names {clash} already belong to other tasks of graph")
    tasks = []
    for t in graph.tasks:
        tasks.extend(pieces if t.name == name else [t])
    edges: dict[tuple[str, str], float] = {}
    for (src, dst), data in graph.edges.items():
        if src == name:
            edges.update({(p.name, dst): data / k for p in pieces})
        elif dst == name:
            edges.update({(src, p.name): data / k for p in pieces})
        else:
            edges[(src, dst)] = data
    return TaskGraph(tasks, edges)


def split_longest_critical_task(graph: TaskGraph, devices: Sequence[Device], k: int = 2) -> tuple[TaskGraph, str]:
    """Split the task on the critical path (fastest run times, transfers ignored) whose fastest run
    time is largest into ``k`` pieces; returns the new graph and the split task's name."""
    graph = as_graph(graph, name="graph")
    devices = check_devices(devices)
    k = check_int("k", k, low=1, high=MAX_PIECES)
    _, path = critical_path(graph, devices)
    if not path:
        raise ValueError("graph must hold at least one task")

    longest = max(path, key=lambda t: (min(execution_time(graph.task(t), d) for d in devices), t))
    return split_task(graph, longest, k), longest
