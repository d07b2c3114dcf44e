"""Static policies: the placement is decided before the run (serial, round-robin, block, affinity),
and the article's demo scheduler."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hetlab.devices import Device
from hetlab.schedule import Schedule
from hetlab.schedulers._core import _assign_in_order, _check_runnable, _device_index, _problem
from hetlab.schedulers.list_scheduling import _central_queue
from hetlab.tasks import Task, TaskGraph

__all__ = ["serial", "round_robin", "block", "by_affinity", "article_demo"]


def serial(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, device: str | None = None) -> Schedule:
    """Every task on one device (the first, or ``device``), one after another in topological order.

    This is the article's serial baseline, ``T_serial = sum_i t_i``.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.workloads import article_tasks
    >>> round(serial(article_tasks(), kitchen()).makespan, 2)      # 114 units on the CPU (speed 10)
    11.4
    """
    prob = _problem(graph, devices)
    j = _device_index(prob.devices, device)
    if not np.isfinite(prob.costs[:, j]).all():
        raise ValueError(f"device {prob.devices[j].name!r} cannot run every task")
    return _assign_in_order(prob, np.full(prob.n, j), f"serial ({prob.devices[j].name})")


def round_robin(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Static: the i-th task (in topological order) goes to device ``i mod m``, decided before the run.

    >>> from hetlab.devices import identical
    >>> from hetlab.tasks import independent_tasks
    >>> s = round_robin(independent_tasks([3, 1, 1, 1]), identical(2))    # D0: 3 + 1, D1: 1 + 1
    >>> s.tasks_on("D0"), s.makespan
    (['T0', 'T2'], 4.0)
    """
    prob = _problem(graph, devices)
    device_of = np.empty(prob.n, dtype=int)
    device_of[np.asarray(prob.graph.order, dtype=int)] = np.arange(prob.n) % prob.m
    _check_runnable(prob, device_of)
    return _assign_in_order(prob, device_of, "round-robin")


def block(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Static: the tasks, in topological order, are cut into m contiguous blocks of nearly equal count.

    >>> from hetlab.devices import identical
    >>> from hetlab.tasks import independent_tasks
    >>> s = block(independent_tasks([3, 1, 1, 1]), identical(2))          # D0: 3 + 1, D1: 1 + 1
    >>> s.tasks_on("D0"), s.makespan
    (['T0', 'T1'], 4.0)
    """
    prob = _problem(graph, devices)
    device_of = np.empty(prob.n, dtype=int)
    device_of[np.asarray(prob.graph.order, dtype=int)] = (np.arange(prob.n) * prob.m) // max(prob.n, 1)
    _check_runnable(prob, device_of)
    return _assign_in_order(prob, device_of, "block")


def by_affinity(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Static: each task goes to its preferred device kind (``Task.kind``), cycling over the devices
    of that kind; a task without a preference goes to the device where it runs fastest.

    Fast per task, blind to load: the favourite cook gets every order.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.tasks import independent_tasks
    >>> s = by_affinity(independent_tasks([10, 10, 10], kinds=["GPU", "GPU", None]), kitchen())
    >>> [s.devices[j].name for j in s.device_of], s.makespan      # no preference: the fastest device
    (['GPU', 'GPU', 'GPU'], 1.5)
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
    is earlier. So the policy is the greedy engine
    (:func:`~hetlab.schedulers.list_scheduling.central_queue`) with the article's tie rule
    (by device name) instead of the engine's (the fastest device), blind to preferences.

    ``info["trace"]`` records each step as the article's program sees it: the task, its preference,
    the popped ``(free_at, name)`` entry, the preferred device's entry among the remaining ones (None
    when the popped device is the preferred one or no device has that name) and whether the re-route
    condition ``preferred free_at < popped free_at`` holds; ``info["preference_reroutes"]`` counts the
    steps where it holds (always 0).

    >>> from hetlab.devices import kitchen
    >>> from hetlab.workloads import article_tasks
    >>> s = article_demo(article_tasks(), kitchen())     # the article: serial 11.40, parallel 2.67, 4.27x
    >>> round(s.makespan, 2), s.info["preference_reroutes"]
    (2.67, 0)
    >>> s.info["trace"][0]                               # all free at 0: CPU comes first by name
    {'task': 't0', 'prefers': 'CPU', 'popped': (0.0, 'CPU'), 'preferred_entry': None, 'reroute': False}
    """
    prob = _problem(graph, devices)
    if prob.graph.edges:
        raise ValueError("article_demo schedules independent tasks only; the graph has edges")
    names = [d.name for d in prob.devices]
    by_name = sorted(range(prob.m), key=lambda j: names[j])
    rank = [0] * prob.m
    for r, j in enumerate(by_name):
        rank[j] = r
    device_of, start, end = _central_queue(prob, None, fifo=False, release=None, overhead=0.0,
                                           rank=rank, compiled=False, policy="article demo")
    # Replay the article's heap from the schedule: before step i, each device is free at the end of its
    # last task so far. The re-route test is evaluated, not assumed.
    free_at = [0.0] * prob.m
    trace = []
    for i, task in enumerate(prob.graph.tasks):
        j = int(device_of[i])
        popped = (float(start[i]), names[j])
        entry = next(((free_at[k], names[k]) for k in range(prob.m) if names[k] == task.kind and k != j), None)
        trace.append({"task": task.name, "prefers": task.kind, "popped": popped, "preferred_entry": entry,
                      "reroute": bool(entry is not None and entry[0] < popped[0])})
        free_at[j] = float(end[i])
    return prob.schedule(device_of, start, end, "article demo",
                         info={"preference_reroutes": sum(step["reroute"] for step in trace), "trace": trace})
