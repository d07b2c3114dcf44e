"""The exact optimum by branch and bound (small instances); the lower bounds are in :mod:`hetlab.schedulers.bounds`."""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from hetlab._validate import check_int
from hetlab.devices import Device
from hetlab.schedule import Schedule, ScheduleError
from hetlab.schedulers._core import _Problem, _problem, _run_queues
from hetlab.schedulers.cpop import cpop
from hetlab.schedulers.heft import heft
from hetlab.schedulers.list_scheduling import eft, lpt
from hetlab.tasks import Task, TaskGraph

__all__ = ["optimal"]


#: Default search budget of :func:`optimal`: about 35 us per node in pure Python, so a few seconds (about
#: 9 s CPU on the shared 2-core build box under load), not minutes. 12-task random DAGs on the kitchen
#: with links need 2k-115k nodes with the bounds below (240k before the tie rule and per-device bound).
NODE_LIMIT = 250_000


def optimal(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, max_tasks: int = 12,
            node_limit: int = NODE_LIMIT) -> Schedule:
    """The exact minimum-makespan schedule, by depth-first branch and bound (small instances only).

    Independent tasks: every assignment of tasks to devices, largest tasks first, pruned by
    the load bound ``max(max load, (sum of loads + remaining fastest times) / m)``.
    Task graphs: every order of ready tasks and device choice, each task started as early as
    its device and inputs allow; any schedule can be shifted left into one of these, so the
    best of them is optimal. Tasks that start together are placed in one canonical order, and a
    branch stops when a ready task's earliest finish plus its fastest remaining path, or the load
    bound, cannot beat the best schedule so far (which starts as the best of LPT, EFT, HEFT and CPOP).
    ``info["nodes"]`` counts the search nodes; ``ValueError`` when the graph has more than
    ``max_tasks`` tasks, or when the search exceeds ``node_limit`` nodes (:data:`NODE_LIMIT` by
    default: an answer or a refusal in seconds) before it has proved a schedule optimal. The search
    keeps its own stack, so its depth (one level per task) is bounded by ``max_tasks`` alone.

    The article's eight dishes (114 work units) on the kitchen (CPU 10, GPU 20, NPU 15 work units per time):
    no split ends at the area bound 114 / 45 = 2.53; the best gives the GPU 51 units, 2.55:

    >>> from hetlab.devices import kitchen
    >>> from hetlab.workloads import article_tasks
    >>> best = optimal(article_tasks(), kitchen())
    >>> round(best.makespan, 2), (best.busy * [10, 20, 15]).round(1).tolist()
    (2.55, [25.0, 51.0, 38.0])

    See also
    --------
    hetlab.schedulers.bounds.lower_bound : a bound no schedule beats, at no search cost.
    """
    prob = _problem(graph, devices)
    max_tasks = check_int("max_tasks", max_tasks, low=1)
    node_limit = check_int("node_limit", node_limit, low=1)
    if prob.n > max_tasks:
        raise ValueError(f"optimal searches exhaustively; graph has {prob.n} tasks, max_tasks is {max_tasks}")
    if prob.n == 0:
        return prob.schedule([], [], [], "optimal", info={"nodes": 0})
    # The search starts from the best heuristic schedule; only a feasible one may serve as the incumbent,
    # or the search would prune everything better than an impossible makespan and return it.
    heuristics = (lpt, eft, heft, cpop)
    incumbent = min((s for s in (h(prob.graph, prob.devices) for h in heuristics) if _feasible(s)),
                    key=lambda s: s.makespan)
    if prob.graph.edges:
        device_of, start, end, nodes = _optimal_dag(prob, incumbent, node_limit)
    else:
        device_of, start, end, nodes = _optimal_independent(prob, incumbent, node_limit)
    return prob.schedule(device_of, start, end, "optimal", info={"nodes": nodes}).validate()


def _feasible(schedule: Schedule) -> bool:
    try:
        schedule.validate()
    except ScheduleError:
        return False
    return True


def _optimal_independent(prob: _Problem, incumbent: Schedule, node_limit: int):
    costs, n, m = prob.costs, prob.n, prob.m
    fastest = costs.min(axis=1)
    order = sorted(range(n), key=lambda i: -fastest[i])
    rows = [costs[i].tolist() for i in order]
    suffix = np.concatenate([np.cumsum(fastest[order][::-1])[::-1], [0.0]]).tolist()
    best = [incumbent.makespan * (1 + 1e-12), list(incumbent.device_of[order])]
    columns = [tuple(costs[:, j]) for j in range(m)]
    loads = [0.0] * m
    choice = [0] * n
    nodes = 0

    def search(k: int, current: float) -> Iterator[tuple[int, float]]:
        nonlocal nodes
        nodes += 1
        if nodes > node_limit:
            raise ValueError(f"optimal exceeded node_limit={node_limit}; use a smaller instance")
        if k == n:
            if current < best[0]:
                best[0], best[1] = current, choice.copy()
            return
        tried = set()
        row = rows[k]
        for j in sorted(range(m), key=lambda j: loads[j] + row[j]):
            c = row[j]
            if not math.isfinite(c):
                continue
            key = (columns[j], loads[j])  # identical devices with equal load are interchangeable
            if key in tried:
                continue
            tried.add(key)
            loads[j] += c
            span = max(current, loads[j])
            if max(span, (sum(loads) + suffix[k + 1]) / m) < best[0]:
                choice[k] = j
                yield k + 1, span
            loads[j] -= c

    _depth_first(search, (0, 0.0))
    device_of = np.empty(n, dtype=int)
    device_of[order] = best[1]
    queues = [[i for i in range(n) if device_of[i] == j] for j in range(m)]
    return _finish(prob, device_of, queues, nodes)


def _finish(prob: _Problem, device_of, queues, nodes):
    s = _run_queues(prob, device_of, queues, "optimal")
    return s.device_of, s.start, s.end, nodes


def _depth_first(search: Callable[..., Iterator[tuple]], root: tuple) -> None:
    """Run a depth-first search written as a generator that yields the arguments of each child call
    where a recursive search would call itself. The stack of generators lives on the heap, so the
    depth (one level per task) is not bounded by Python's recursion limit."""
    stack = [search(*root)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
        else:
            stack.append(search(*child))


def _optimal_dag(prob: _Problem, incumbent: Schedule, node_limit: int):
    # Left-shifting any schedule, task by task in start order, never delays a task; repeating it
    # reaches a schedule that placing tasks in non-decreasing start order reproduces. So the search
    # only extends a partial schedule with tasks that start no earlier than the last one placed.
    # Among tasks with equal starts the order is canonical: zero-length tasks may come in any order,
    # but two tasks of positive run time that start together are on different devices and cannot
    # depend on each other, so the second must be on a later device (every schedule keeps one such
    # order: at each start time, its instants first, then its positive tasks by device).
    g, costs, n, m = prob.graph, prob.costs, prob.n, prob.m
    fastest = costs.min(axis=1)
    bottom = fastest.copy()  # fastest time from a task's start to the graph's end, free transfers
    for i in reversed(g.order):
        bottom[i] = fastest[i] + max((bottom[s] for s in g.succs[i]), default=0.0)
    after = [max((float(bottom[s]) for s in g.succs[i]), default=0.0) for i in range(n)]
    rows = [costs[i].tolist() for i in range(n)]
    runnable = [[j for j in range(m) if rows[i][j] != math.inf] for i in range(n)]
    best = [incumbent.makespan * (1 - 1e-12), None]
    device_of = np.full(n, -1)
    start = np.zeros(n)
    end = np.zeros(n)
    free = [0.0] * m
    missing = [len(p) for p in g.preds]
    ready = {i for i in range(n) if missing[i] == 0}
    remaining = [float(fastest.sum())]
    nodes = 0

    def search(current: float, placed: int, last_start: float, last_device: int) -> Iterator[tuple]:
        nonlocal nodes
        nodes += 1
        if nodes > node_limit:
            raise ValueError(f"optimal exceeded node_limit={node_limit} search nodes before proving a schedule "
                             f"optimal; use a smaller instance or raise node_limit")
        if placed == n:
            if current < best[0]:
                best[0] = current
                best[1] = (device_of.copy(), start.copy(), end.copy())
            return
        if max(current, (sum(free) + remaining[0]) / m) >= best[0]:
            return
        options = []
        for i in ready:
            row = rows[i]
            soonest = math.inf   # earliest finish of i on any device, from here on
            for j in runnable[i]:
                c = row[j]
                s = max(free[j], prob.ready_on(i, j, device_of, end))
                finish = (s if s > last_start else last_start) + c
                if finish < soonest:
                    soonest = finish
                if s > last_start or (s == last_start and (c == 0 or j > last_device or last_device < 0)):
                    options.append((s + c, i, j, s))
            if soonest + after[i] >= best[0]:
                return
        options.sort()
        for finish, i, j, s in options:
            if max(current, finish) >= best[0]:
                continue
            ready.discard(i)
            remaining[0] -= fastest[i]
            for k in g.succs[i]:
                missing[k] -= 1
                if missing[k] == 0:
                    ready.add(k)
            saved = free[j]
            device_of[i], start[i], end[i] = j, s, finish
            free[j] = finish
            # The tie rule compares with the last task of positive run time placed at this start.
            yield (max(current, finish), placed + 1, s,
                   j if rows[i][j] > 0 else (last_device if s == last_start else -1))
            free[j] = saved
            device_of[i] = -1
            for k in g.succs[i]:
                if missing[k] == 0:
                    ready.discard(k)
                missing[k] += 1
            remaining[0] += fastest[i]
            ready.add(i)

    _depth_first(search, (0.0, 0, 0.0, -1))
    if best[1] is None:
        return incumbent.device_of, incumbent.start, incumbent.end, nodes
    return (*best[1], nodes)

