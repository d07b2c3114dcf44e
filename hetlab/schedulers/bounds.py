"""Bounds on the makespan: what no schedule can beat, and what no greedy schedule exceeds.

*Lower bounds* (any schedule): :func:`lower_bound` (critical path, longest task, area), and
:func:`staged_bound`, which also sees serial stages at the start and end of a graph.

*Work and span* on ``P`` identical devices. The *work* ``W`` is the time one device needs for every task
(``T_1``); the *span* ``D`` is the length of the longest dependency chain (``T_inf``, the critical path).
For any schedule on ``P`` identical devices

    max(W / P, D) <= T_P                      (no device does more than its share; a chain stays a chain)

and for any *greedy* list schedule (no device idles while a task is ready; Graham 1966/1969), such as
:func:`hetlab.schedulers.list_scheduling.central_queue` with free transfers,

    T_P <= W / P + D                          (Brent 1974; Graham's bound)

so a greedy schedule is within a factor 2 of the optimum. ``W / D`` is the graph's parallelism:
devices beyond it cannot help.

>>> from hetlab.tasks import Task, TaskGraph
>>> g = TaskGraph([Task("a", 1), Task("b", 4), Task("c", 2), Task("d", 1)],
...               [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
>>> work(g), span(g), brent_bound(g, 2)
(8.0, 6.0, 10.0)
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from hetlab._validate import check_fields, check_int, check_nonnegative, check_positive, check_sequence, check_strings
from hetlab.devices import Device, check_devices
from hetlab.schedulers._core import _problem
from hetlab.schedulers.exact import optimal
from hetlab.tasks import Task, TaskGraph, as_graph, critical_path

__all__ = ["lower_bound", "StagedBound", "staged_bound", "WorkSpan", "work", "span", "parallelism", "peak_width",
           "brent_bound", "bounds"]


def lower_bound(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> float:
    """A bound no schedule can beat: the largest of the critical path (fastest run times, free
    transfers), the longest single task at its fastest, and the fastest-time area per device
    (``sum_i min_d t_id / m``; for devices of different speed, total work over total speed).

    >>> from hetlab.devices import kitchen
    >>> from hetlab.workloads import article_tasks
    >>> round(lower_bound(article_tasks(), kitchen()), 3)     # total work 114 / total speed 45
    2.533
    """
    prob = _problem(graph, devices)
    if prob.n == 0:
        return 0.0
    fastest = prob.costs.min(axis=1)
    path, _ = critical_path(prob.graph, prob.devices)
    bound = max(path, float(fastest.max()), float(fastest.sum()) / prob.m)
    if prob.speed_only:
        bound = max(bound, float(prob.graph.work.sum()) / sum(d.speed for d in prob.devices))
    return bound


def _graph(graph) -> TaskGraph:
    if not isinstance(graph, TaskGraph):
        if not isinstance(graph, (list, tuple)):
            raise TypeError(f"graph must be a TaskGraph or a sequence of Task, got {type(graph).__name__} {graph!r}")
        if not graph:
            raise ValueError("graph must hold at least one task, got an empty sequence")
        try:
            graph = as_graph(graph)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"graph must be a TaskGraph or a sequence of Task, got {graph!r}: {exc}") from None
    if len(graph.tasks) == 0:
        raise ValueError("graph must hold at least one task, got none")
    if any(t.times is not None or t.op is not None for t in graph.tasks):
        raise ValueError("work and span need run time = work / speed: tasks must not set times or op")
    return graph


def work(graph: TaskGraph | Sequence, speed: float = 1.0) -> float:
    """``W = T_1``: the time one device of ``speed`` needs for every task, ``sum(work) / speed``.

    >>> from hetlab.tasks import independent_tasks
    >>> work(independent_tasks([2, 5, 3]), speed=2.0)
    5.0
    """
    graph = _graph(graph)
    speed = check_positive("speed", speed)
    return float(graph.work.sum()) / speed


def span(graph: TaskGraph | Sequence, speed: float = 1.0) -> float:
    """``D = T_inf``: the longest dependency chain at ``speed`` (the critical path), free transfers.

    >>> from hetlab.tasks import Task, TaskGraph
    >>> span(TaskGraph([Task("a", 2), Task("b", 5), Task("c", 3)], [("a", "b")]))    # a then b
    7.0
    """
    graph = _graph(graph)
    speed = check_positive("speed", speed)
    return critical_path(graph)[0] / speed


def parallelism(graph: TaskGraph | Sequence) -> float:
    """``W / D``: the most devices that can be kept busy on average (inf when every task is empty).

    >>> from hetlab.tasks import independent_tasks
    >>> parallelism(independent_tasks([2, 5, 3]))        # W = 10, D = the longest task, 5
    2.0
    """
    graph = _graph(graph)
    d = span(graph)
    return work(graph) / d if d > 0 else math.inf


def peak_width(graph: TaskGraph | Sequence) -> int:
    """The most tasks running at one moment when every task starts as soon as its predecessors finish
    (unlimited devices, free transfers): the graph's *peak* width, against ``W / D``, its *average* one.

    With at least this many identical devices a greedy list schedule (:func:`~hetlab.schedulers.central_queue`)
    runs every task
    at its earliest start, so it finishes at the span ``D``; with fewer it may (not must) take longer.
    Tasks of zero work occupy no moment and are not counted.

    >>> from hetlab.tasks import Task, TaskGraph
    >>> g = TaskGraph([Task("a", 1), Task("b", 4), Task("c", 2), Task("d", 1)],
    ...               [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    >>> peak_width(g), round(parallelism(g), 2)
    (2, 1.33)
    """
    graph = _graph(graph)
    n = len(graph.tasks)
    start, end = [0.0] * n, [0.0] * n
    for i in graph.order:
        start[i] = max((end[p] for p in graph.preds[i]), default=0.0)
        end[i] = start[i] + float(graph.work[i])
    # Sweep the start/end events in time order; at equal times a task ending frees its slot first.
    events = sorted([(end[i], 0) for i in range(n) if end[i] > start[i]] +
                    [(start[i], 1) for i in range(n) if end[i] > start[i]])
    running = peak = 0
    for _, is_start in events:
        running += 1 if is_start else -1
        peak = max(peak, running)
    return peak


def brent_bound(graph: TaskGraph | Sequence, n_devices: int, speed: float = 1.0) -> float:
    """Brent's bound (1974) ``W / P + D``: no greedy schedule on ``P = n_devices`` identical devices of
    ``speed`` takes longer. Graham (1966) proved the same bound for list scheduling.

    >>> from hetlab.tasks import independent_tasks
    >>> brent_bound(independent_tasks([2, 5, 3]), 2)      # 10 / 2 + 5
    10.0
    """
    n_devices = check_int("n_devices", n_devices, low=1, high=10**6)
    return work(graph, speed) / n_devices + span(graph, speed)


@dataclass(frozen=True)
class WorkSpan:
    """Work ``W``, span ``D`` and device count ``P = n_devices``, with the bounds they imply."""

    work: float
    span: float
    n_devices: int

    def __post_init__(self) -> None:
        for name in ("work", "span"):
            object.__setattr__(self, name, check_nonnegative(name, getattr(self, name)))
        object.__setattr__(self, "n_devices", check_int("n_devices", self.n_devices, low=1, high=10**6))
        if self.span > self.work * (1 + 1e-12):
            raise ValueError(f"span must be in [0, work={self.work:g}], got {self.span:g}")

    @property
    def lower(self) -> float:
        """``max(W / P, D)``: no schedule on ``P`` identical devices is faster."""
        return max(self.work / self.n_devices, self.span)

    @property
    def upper(self) -> float:
        """``W / P + D``: no greedy list schedule is slower."""
        return self.work / self.n_devices + self.span

    @property
    def parallelism(self) -> float:
        return self.work / self.span if self.span > 0 else math.inf


def bounds(graph: TaskGraph | Sequence, n_devices: int, speed: float = 1.0) -> WorkSpan:
    """Work, span and the lower/upper bounds on ``n_devices`` identical devices of ``speed``.

    >>> from hetlab.tasks import independent_tasks
    >>> b = bounds(independent_tasks([2, 5, 3, 4, 6, 1]), 2)    # W = 21, D = 6
    >>> b.lower, b.upper
    (10.5, 16.5)
    """
    n_devices = check_int("n_devices", n_devices, low=1, high=10**6)
    return WorkSpan(work(graph, speed), span(graph, speed), n_devices)


#: Stages of at most this many tasks get their exact shortest time (branch and bound); larger ones
#: get :func:`lower_bound`.
EXACT_STAGE_TASKS = 10


@dataclass(frozen=True)
class StagedBound:
    """A lower bound on the makespan in three sequential parts: ``head`` stages, the middle, ``tail`` stages.

    ``head`` and ``tail`` list the serial stages (task names) in execution order; ``head_time`` and
    ``tail_time`` are the sums of each stage's shortest possible time on the devices, ``middle`` is
    :func:`lower_bound` of the tasks between (``max(critical path, area, ...)``),
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


def _serial_stages(graph: TaskGraph) -> tuple[list[list[str]], list[list[str]]]:
    """The serial stages at the start and at the end of ``graph``: ``(head, tail)``, each a list of
    stages (lists of task names) in execution order.

    A head stage is the set E of tasks with no predecessor left (after removing earlier head stages)
    such that every other remaining task is a descendant of **every** task of E: nothing else can
    start until all of E has finished. A tail stage is the mirror image (no successor left, every
    other task an ancestor of all of it). Peeling stops before it would swallow the whole graph.

    >>> from hetlab.tasks import Task, TaskGraph
    >>> g = TaskGraph([Task(n, 1.0) for n in "sabcdt"],
    ...               [("s", "a"), ("s", "b"), ("a", "c"), ("b", "d"), ("c", "t"), ("d", "t")])
    >>> _serial_stages(g)
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
    :func:`lower_bound` of the tasks between. At least as large as
    ``lower_bound(graph, devices)`` and equal to it when the graph has no serial stage.

    >>> from hetlab.devices import identical
    >>> from hetlab.tasks import Task, TaskGraph
    >>> g = TaskGraph([Task("x", 3), Task("y", 3), Task("z", 3), Task("t", 1)], [("x", "t"), ("y", "t"), ("z", "t")])
    >>> b = staged_bound(g, identical(2))     # x, y, z before anything else: 6 on two devices, then t
    >>> b.head, b.head_time, b.total, lower_bound(g, identical(2))     # the plain bound: area 10 / 2
    ((('x', 'y', 'z'),), 6.0, 7.0, 5.0)
    """
    graph = as_graph(graph, name="graph")
    devices = check_devices(devices)
    if not graph.tasks:
        raise ValueError("graph must hold at least one task")
    head, tail = _serial_stages(graph)
    staged = {n for stage in head + tail for n in stage}
    middle_tasks = [t for t in graph.tasks if t.name not in staged]
    middle_graph = TaskGraph(middle_tasks, {e: d for e, d in graph.edges.items()
                                            if e[0] not in staged and e[1] not in staged})
    middle = float(lower_bound(middle_graph, devices)) if middle_tasks else 0.0
    return StagedBound(tuple(tuple(s) for s in head), tuple(tuple(s) for s in tail),
                       sum(_stage_time(graph, s, devices) for s in head), middle,
                       sum(_stage_time(graph, s, devices) for s in tail),
                       float(sum(t.work for t in middle_tasks)))
