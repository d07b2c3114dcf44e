"""Work and span: what P identical devices can and cannot do for a task graph.

The *work* ``W`` is the time one device needs for every task (``T_1``); the *span* ``D`` is the
length of the longest dependency chain (``T_inf``, the critical path). For any schedule on
``P`` identical devices

    max(W / P, D) <= T_P                      (no device does more than its share; a chain stays a chain)

and for any *greedy* list schedule (no device idles while a task is ready; Graham 1966/1969)

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

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetlab._validate import check_int, check_nonnegative, check_positive
from hetlab.devices import Device, check_devices
from hetlab.schedule import Schedule
from hetlab.tasks import TaskGraph, as_graph, comm_matrices, cost_matrix, critical_path

__all__ = ["WorkSpan", "work", "span", "parallelism", "peak_width", "brent_bound", "bounds", "greedy"]


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
    """``W = T_1``: the time one device of ``speed`` needs for every task, ``sum(work) / speed``."""
    graph = _graph(graph)
    speed = check_positive("speed", speed)
    return float(graph.work.sum()) / speed


def span(graph: TaskGraph | Sequence, speed: float = 1.0) -> float:
    """``D = T_inf``: the longest dependency chain at ``speed`` (the critical path), free transfers."""
    graph = _graph(graph)
    speed = check_positive("speed", speed)
    return critical_path(graph)[0] / speed


def parallelism(graph: TaskGraph | Sequence) -> float:
    """``W / D``: the most devices that can be kept busy on average (inf when every task is empty)."""
    graph = _graph(graph)
    d = span(graph)
    return work(graph) / d if d > 0 else math.inf


def peak_width(graph: TaskGraph | Sequence) -> int:
    """The most tasks running at one moment when every task starts as soon as its predecessors finish
    (unlimited devices, free transfers): the graph's *peak* width, against ``W / D``, its *average* one.

    With at least this many identical devices the greedy list schedule of :func:`greedy` runs every task
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
    ``speed`` takes longer. Graham (1966) proved the same bound for list scheduling."""
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
    """Work, span and the lower/upper bounds on ``n_devices`` identical devices of ``speed``."""
    n_devices = check_int("n_devices", n_devices, low=1, high=10**6)
    return WorkSpan(work(graph, speed), span(graph, speed), n_devices)


def greedy(graph: TaskGraph | Sequence, devices: Sequence[Device]) -> Schedule:
    """Graham's greedy list scheduling (1966), simulated event by event.

    Whenever a device is idle and a task is ready, the task starts at once: ready tasks are taken in
    list order (their order in ``graph``), idle devices in the order given. Because no device ever
    idles while work is ready, on identical devices the makespan is at most ``W / P + D``.
    Transfers must be free (this is the bound's model), so every device's link must be free.
    """
    graph = _graph(graph)
    if not isinstance(devices, (list, tuple)):
        raise TypeError(f"devices must be a sequence of Device, got {type(devices).__name__} {devices!r}")
    devices = check_devices(devices)
    latency, inverse = comm_matrices(devices)
    if graph.edges and (latency.any() or inverse.any()):
        raise ValueError("devices must have free links (latency 0, bandwidth inf): greedy ignores transfers")
    costs = cost_matrix(graph, devices)
    n, m = len(graph.tasks), len(devices)
    missing = [len(p) for p in graph.preds]
    ready = [i for i in range(n) if missing[i] == 0]
    heapq.heapify(ready)
    idle = list(range(m))
    heapq.heapify(idle)
    running: list[tuple[float, int, int]] = []     # (end, task, device)
    device_of, start, end = np.empty(n, dtype=int), np.empty(n), np.empty(n)
    now = 0.0
    while ready or running:
        while ready and idle:
            i, j = heapq.heappop(ready), heapq.heappop(idle)
            device_of[i], start[i], end[i] = j, now, now + costs[i, j]
            heapq.heappush(running, (end[i], i, j))
        now = running[0][0]
        # Release every task that ends now before starting anything, so ties see all freed devices.
        while running and running[0][0] <= now:
            _, i, j = heapq.heappop(running)
            heapq.heappush(idle, j)
            for k in graph.succs[i]:
                missing[k] -= 1
                if missing[k] == 0:
                    heapq.heappush(ready, k)
    return Schedule(graph, devices, device_of, start, end, "greedy")
