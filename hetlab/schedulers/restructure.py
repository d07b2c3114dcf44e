"""Reshaping a task graph to shorten its critical path: split one long task into parallel pieces,
and a lower bound that sees serial stages (:func:`staged_bound`).

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
from dataclasses import dataclass, replace

from hetlab._validate import check_fields, check_int, check_sequence, check_strings
from hetlab.devices import Device, check_devices
from hetlab.tasks import Task, TaskGraph, as_graph, critical_path, execution_time

__all__ = ["split_task", "split_longest_critical_task", "MAX_PIECES", "StagedBound", "staged_bound",
           "serial_stages"]

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


#: Stages of at most this many tasks get their exact shortest time (branch and bound); larger ones
#: get :func:`hetlab.schedulers.lower_bound`.
EXACT_STAGE_TASKS = 10


@dataclass(frozen=True)
class StagedBound:
    """A lower bound on the makespan in three sequential parts: ``head`` stages, the middle, ``tail`` stages.

    ``head`` and ``tail`` list the serial stages (task names) in execution order; ``head_time`` and
    ``tail_time`` are the sums of each stage's shortest possible time on the devices, ``middle`` is
    :func:`hetlab.schedulers.lower_bound` of the tasks between (``max(critical path, area, ...)``),
    ``middle_work`` their total work.
    """

    head: tuple[tuple[str, ...], ...]
    tail: tuple[tuple[str, ...], ...]
    head_time: float
    middle: float
    tail_time: float
    middle_work: float

    def __post_init__(self) -> None:
        for name in ("head", "tail"):
            stages = tuple(check_strings(f"{name} (stage {k})", stage)
                           for k, stage in enumerate(check_sequence(name, getattr(self, name), empty=True)))
            object.__setattr__(self, name, stages)
        check_fields(self)

    @property
    def total(self) -> float:
        """``head_time + middle + tail_time``: no schedule finishes earlier (transfers ignored)."""
        return self.head_time + self.middle + self.tail_time


def _closure(graph: TaskGraph, start: int, alive: set[int], forward: bool) -> set[int]:
    """Descendants (``forward``) or ancestors of ``start`` among ``alive``, ``start`` excluded."""
    links = graph.succs if forward else graph.preds
    seen: set[int] = set()
    stack = [start]
    while stack:
        for j in links[stack.pop()]:
            if j in alive and j not in seen:
                seen.add(j)
                stack.append(j)
    return seen


def serial_stages(graph: TaskGraph) -> tuple[list[list[str]], list[list[str]]]:
    """The serial stages at the start and at the end of ``graph``: ``(head, tail)``, each a list of
    stages (lists of task names) in execution order.

    A head stage is the set E of tasks with no predecessor left (after removing earlier head stages)
    such that every other remaining task is a descendant of **every** task of E: nothing else can
    start until all of E has finished. A tail stage is the mirror image (no successor left, every
    other task an ancestor of all of it). Peeling stops before it would swallow the whole graph.

    >>> from hetlab.tasks import Task, TaskGraph
    >>> g = TaskGraph([Task(n, 1.0) for n in "sabcdt"],
    ...               [("s", "a"), ("s", "b"), ("a", "c"), ("b", "d"), ("c", "t"), ("d", "t")])
    >>> serial_stages(g)
    ([['s']], [['t']])
    """
    graph = as_graph(graph, name="graph")
    alive = set(range(len(graph.tasks)))
    found: dict[bool, list[list[int]]] = {True: [], False: []}
    for forward in (True, False):        # head: entries and their descendants; tail: exits and ancestors
        inward = graph.preds if forward else graph.succs
        while True:
            front = sorted(i for i in alive if not any(j in alive for j in inward[i]))
            rest = alive.difference(front)
            if not front or not rest or any(not rest <= _closure(graph, i, alive, forward) for i in front):
                break
            found[forward].append(front)
            alive = rest
    names = [[[graph.tasks[i].name for i in stage] for stage in found[forward]] for forward in (True, False)]
    return names[0], names[1][::-1]


def _stage_time(graph: TaskGraph, names: Sequence[str], devices: Sequence[Device]) -> float:
    """Shortest time to run the independent tasks ``names`` on ``devices`` (exact when small)."""
    from hetlab.schedulers import lower_bound, optimal

    tasks = TaskGraph([graph.task(n) for n in names])
    if len(tasks) <= EXACT_STAGE_TASKS:
        try:
            return float(optimal(tasks, devices).makespan)
        except (ValueError, RuntimeError):      # search budget exceeded: fall back on the plain bound
            pass
    return float(lower_bound(tasks, devices))


def staged_bound(graph: TaskGraph, devices: Sequence[Device]) -> StagedBound:
    """A lower bound on the makespan that sees serial stages (transfers ignored).

    While a serial head stage runs, nothing else can run, so devices it leaves idle cannot help:
    ``T >= sum(head stage times) + LB(middle) + sum(tail stage times)``, where a stage's time is the
    shortest time to run its (independent) tasks on ``devices`` and ``LB(middle)`` is
    :func:`hetlab.schedulers.lower_bound` of the tasks between. At least as large as
    ``lower_bound(graph, devices)`` and equal to it when the graph has no serial stage.
    """
    from hetlab.schedulers import lower_bound

    graph = as_graph(graph, name="graph")
    devices = check_devices(devices)
    if not graph.tasks:
        raise ValueError("graph must hold at least one task")
    head, tail = serial_stages(graph)
    staged = {n for stage in head + tail for n in stage}
    middle_tasks = [t for t in graph.tasks if t.name not in staged]
    middle_graph = TaskGraph(middle_tasks, {e: d for e, d in graph.edges.items()
                                            if e[0] not in staged and e[1] not in staged})
    middle = float(lower_bound(middle_graph, devices)) if middle_tasks else 0.0
    return StagedBound(tuple(tuple(s) for s in head), tuple(tuple(s) for s in tail),
                       sum(_stage_time(graph, s, devices) for s in head), middle,
                       sum(_stage_time(graph, s, devices) for s in tail),
                       float(sum(t.work for t in middle_tasks)))
