"""Static policies: the placement is decided before the run (serial, round-robin, block, affinity),
and the article's demo scheduler."""
from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np

from hetlab.devices import Device
from hetlab.schedule import Schedule
from hetlab.schedulers._core import _assign_in_order, _check_runnable, _device_index, _problem
from hetlab.tasks import Task, TaskGraph

__all__ = ["serial", "round_robin", "block", "by_affinity", "article_demo"]


def serial(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, device: str | None = None) -> Schedule:
    """Every task on one device (the first, or ``device``), one after another in topological order.

    This is the article's serial baseline, ``T_serial = sum_i t_i``.
    """
    prob = _problem(graph, devices)
    j = _device_index(prob.devices, device)
    if not np.isfinite(prob.costs[:, j]).all():
        raise ValueError(f"device {prob.devices[j].name!r} cannot run every task")
    return _assign_in_order(prob, np.full(prob.n, j), f"serial ({prob.devices[j].name})")


def round_robin(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Static: the i-th task (in topological order) goes to device ``i mod m``, decided before the run."""
    prob = _problem(graph, devices)
    device_of = np.empty(prob.n, dtype=int)
    device_of[np.asarray(prob.graph.order, dtype=int)] = np.arange(prob.n) % prob.m
    _check_runnable(prob, device_of)
    return _assign_in_order(prob, device_of, "round-robin")


def block(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Static: the tasks, in topological order, are cut into m contiguous blocks of nearly equal count."""
    prob = _problem(graph, devices)
    device_of = np.empty(prob.n, dtype=int)
    device_of[np.asarray(prob.graph.order, dtype=int)] = (np.arange(prob.n) * prob.m) // max(prob.n, 1)
    _check_runnable(prob, device_of)
    return _assign_in_order(prob, device_of, "block")


def by_affinity(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Static: each task goes to its preferred device kind (``Task.kind``), cycling over the devices
    of that kind; a task without a preference goes to the device where it runs fastest.

    Fast per task, blind to load: the favourite cook gets every order.
    """
    prob = _problem(graph, devices)
    by_kind: dict[str, list[int]] = {}
    for j, d in enumerate(prob.devices):
        by_kind.setdefault(d.kind, []).append(j)
    turn: dict[str, int] = {}
    device_of = np.empty(prob.n, dtype=int)
    for i in prob.graph.order:
        kind = prob.graph.tasks[i].kind
        candidates = [j for j in by_kind.get(kind, []) if math.isfinite(prob.costs[i, j])]
        if candidates:
            k = turn.get(kind, 0)
            device_of[i] = candidates[k % len(candidates)]
            turn[kind] = k + 1
        else:
            device_of[i] = int(np.argmin(prob.costs[i]))
    return _assign_in_order(prob, device_of, "by affinity")



def article_demo(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """The source article's demo scheduler, reproduced faithfully (independent tasks only).

    Tasks are taken in the listed order; each goes to the device that is free earliest
    (a min-heap of ``(free_at, name)``, so ties go to the alphabetically first name).
    The article then looks for the task's preferred device among the *remaining* heap
    entries and re-routes the task there if that device is free strictly earlier. That
    branch can never fire: the popped entry is the heap's minimum, so no remaining entry
    is earlier. ``info["preference_reroutes"]`` counts the times it fired (always 0), and the
    policy is plain earliest-free list scheduling, blind to speeds and preferences.
    ``info["trace"]`` records each step: the task, its preference, the popped ``(free_at, name)``
    entry, the first remaining entry of the preferred device (or None) and whether it re-routed.
    """
    prob = _problem(graph, devices)
    if prob.graph.edges:
        raise ValueError("article_demo schedules independent tasks only; the graph has edges")
    names = [d.name for d in prob.devices]
    index = {name: j for j, name in enumerate(names)}
    heap = [(0.0, name) for name in names]
    heapq.heapify(heap)
    device_of = np.empty(prob.n, dtype=int)
    start = np.empty(prob.n)
    end = np.empty(prob.n)
    reroutes = 0
    trace = []
    for i, task in enumerate(prob.graph.tasks):
        free_at, dev = heapq.heappop(heap)
        cand = [(t, n) for t, n in heap if n == task.kind]
        reroute = bool(cand and cand[0][0] < free_at)  # never true: free_at is the heap minimum
        trace.append({"task": task.name, "prefers": task.kind, "popped": (free_at, dev),
                      "preferred_entry": cand[0] if cand else None, "reroute": reroute})
        if reroute:
            reroutes += 1
            heapq.heappush(heap, (free_at, dev))
            free_at, dev = cand[0]
            heap.remove(cand[0])
            heapq.heapify(heap)
        j = index[dev]
        if not math.isfinite(prob.costs[i, j]):  # the article's policy is blind to what a device can run
            raise ValueError(f"article_demo put task {task.name!r} on device {dev!r}, which cannot run it")
        device_of[i], start[i], end[i] = j, free_at, free_at + prob.costs[i, j]
        heapq.heappush(heap, (end[i], dev))
    return prob.schedule(device_of, start, end, "article demo",
                         info={"preference_reroutes": reroutes, "trace": trace})

