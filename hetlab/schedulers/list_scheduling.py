"""Executing a fixed plan and dynamic list scheduling (Graham 1969): earliest free, EFT, LPT."""
from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from hetlab.devices import Device
from hetlab.schedule import Schedule
from hetlab.schedulers import _kernels
from hetlab.schedulers._core import _check_runnable, _Problem, _problem, _run_queues
from hetlab.tasks import Task, TaskGraph

__all__ = ["execute_plan", "earliest_free", "eft", "lpt", "COMPILED_FROM", "FRESH_FROM"]


def execute_plan(graph: TaskGraph | Sequence[Task], devices: Sequence[Device],
                 sequences: Mapping[str, Sequence[str]], policy: str = "plan") -> Schedule:
    """Run a static plan: each device executes its listed tasks in that order, each task
    starting as soon as its device is free and its inputs have arrived.

    ``sequences`` maps device names to task names; every task must appear exactly once.
    Raises ``ValueError`` if the plan deadlocks (a device waits on a task queued behind it).
    """
    prob = _problem(graph, devices)
    if not isinstance(sequences, Mapping):
        raise TypeError(f"sequences must map device names to lists of task names, got "
                        f"{type(sequences).__name__} {sequences!r:.80}")
    if not isinstance(policy, str):
        raise TypeError(f"policy must be a string, got {type(policy).__name__} {policy!r}")
    g = prob.graph
    dev_index = {d.name: j for j, d in enumerate(prob.devices)}
    device_of = np.full(prob.n, -1)
    queues: list[list[int]] = [[] for _ in range(prob.m)]
    for name, seq in sequences.items():
        if name not in dev_index:
            raise ValueError(f"sequences names unknown device {name!r}")
        if isinstance(seq, (str, bytes)) or not isinstance(seq, Iterable):
            raise TypeError(f"sequences[{name!r}] must be a list of task names, got {type(seq).__name__} "
                            f"{seq!r:.80}")
        for task in seq:
            if not isinstance(task, str):
                raise TypeError(f"sequences[{name!r}] must hold task names (strings), got {task!r:.80}")
            if task not in g.index:
                raise ValueError(f"sequences names unknown task {task!r}")
            i = g.index[task]
            if device_of[i] != -1:
                raise ValueError(f"task {task!r} appears twice in sequences")
            device_of[i] = dev_index[name]
            queues[dev_index[name]].append(i)
    if (device_of == -1).any():
        missing = g.tasks[int(np.flatnonzero(device_of == -1)[0])].name
        raise ValueError(f"sequences must place every task once, task {missing!r} is in no sequence")
    _check_runnable(prob, device_of, "sequences")
    return _run_queues(prob, device_of, queues, policy)



#: With numba installed (``hetlab[fast]``) and the kernel already compiled or loaded in this process,
#: inputs at least this large use it (the pure-Python loop takes about 0.5 us per task).
COMPILED_FROM = 20_000

#: In a process that has not used the kernel yet, importing numba and loading the kernel from its
#: on-disk cache costs about as much as the Python loop on one to one and a half million tasks. Measured
#: with ``benchmarks/bench_list_scheduling.py`` (a fresh process per call, 64 devices, warm cache, on the
#: shared 2-core build box under load): 20k tasks Python 0.059 s vs numba 3.28 s; 200k 0.58 s vs 3.73 s;
#: 1M 1.89 s vs 2.08 s (the issue's figures, 0.54 s vs 1.04 s at 1M, give a similar break-even). So a fresh
#: process uses the kernel from three million tasks, and only with a warm cache (a cold compile costs several
#: times more, and numba recompiles a stale cache).
FRESH_FROM = 3_000_000


def _earliest_free_python(work: list[float], speeds: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """The pure-Python twin of the numba kernel: one heapreplace per task."""
    heap = [(0.0, j) for j in range(len(speeds))]
    dev_list = [0] * len(work)
    start_list = [0.0] * len(work)
    replace = heapq.heapreplace
    for i, w in enumerate(work):
        free_at, j = heap[0]
        dev_list[i] = j
        start_list[i] = free_at
        replace(heap, (free_at + w / speeds[j], j))
    return np.array(dev_list, dtype=int), np.array(start_list)


def earliest_free(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
                  compiled: bool | None = None) -> Schedule:
    """Graham's list scheduling (1969): in topological order, each task goes to the device
    that becomes free first (ties to the earlier-listed device), blind to speed.

    On independent tasks this is exactly the article's demo policy, in O(n log m).
    ``compiled``: use the numba kernel (True: require it; False: never; None: only where it pays,
    i.e. at least :data:`COMPILED_FROM` tasks once this process has loaded it, or at least
    :data:`FRESH_FROM` tasks when numba's on-disk cache holds it); both paths give identical schedules.
    """
    prob = _problem(graph, devices)
    if compiled is not None and not isinstance(compiled, bool):
        raise TypeError(f"compiled must be True, False or None, got {type(compiled).__name__} {compiled!r:.80}")
    n, m = prob.n, prob.m
    if not prob.speed_only and not np.isfinite(prob.costs).all():
        raise ValueError("earliest_free needs every task to run on every device")
    if not prob.graph.edges and prob.speed_only:
        # Hot loop for the common case: run time is work / speed, so no (n x m) cost matrix.
        # One heapreplace per task; dividing (not multiplying by 1/speed) keeps every float
        # identical to the article's ``free_at + work / speed``.
        # Importing numba and loading the kernel costs seconds in a fresh process: only where it pays.
        wanted = compiled is True or (compiled is None and (
            (n >= COMPILED_FROM and _kernels.earliest_free_ready())
            or (n >= FRESH_FROM and _kernels.earliest_free_cached())))
        kernel = _kernels.earliest_free_kernel() if wanted else None
        if compiled and kernel is None:
            raise ImportError("compiled=True needs numba: pip install 'hetlab[fast]'")
        speeds = np.array([d.speed for d in prob.devices])
        if kernel is not None:
            device_of, start = kernel(prob.graph.work, speeds)
        else:
            device_of, start = _earliest_free_python(prob.graph.work.tolist(), speeds.tolist())
        end = start + prob.graph.work / speeds[device_of]
        return prob.schedule(device_of, start, end, "earliest free")
    costs = prob.costs
    heap = [(0.0, j) for j in range(m)]
    device_of = np.empty(n, dtype=int)
    start = np.empty(n)
    end = np.empty(n)
    for i in prob.graph.order:
        free_at, j = heapq.heappop(heap)
        s = max(free_at, prob.ready_on(i, j, device_of, end))
        device_of[i], start[i], end[i] = j, s, s + costs[i, j]
        heapq.heappush(heap, (end[i], j))
    return prob.schedule(device_of, start, end, "earliest free")


def _list_schedule(prob: _Problem, priority: np.ndarray, policy: str, **kwargs) -> Schedule:
    """Among ready tasks take the one with the highest priority (ties: lower index) and put it
    on the device where it finishes earliest (ties: earlier-listed device), after its last task.
    (HEFT's insertion-based variant lives in :mod:`hetlab.schedulers.heft`.)"""
    g, n, m, costs = prob.graph, prob.n, prob.m, prob.costs
    device_of = np.full(n, -1)
    start = np.zeros(n)
    end = np.zeros(n)
    free = np.zeros(m)
    for i in by_priority(g, priority):
        arrive = prob.ready_times(i, device_of, end)
        begin = np.maximum(free, arrive)
        j = int(np.argmin(begin + costs[i]))
        s = float(begin[j])
        free[j] = s + costs[i, j]
        device_of[i], start[i], end[i] = j, s, s + costs[i, j]
    return prob.schedule(device_of, start, end, policy, **kwargs)


def by_priority(graph: TaskGraph, priority) -> Iterable[int]:
    """Task indices in list-scheduling order: each time, the ready task (all predecessors already
    yielded) with the highest ``priority``, ties to the lower index. Used by the priority list
    scheduler above."""
    missing = [len(p) for p in graph.preds]
    ready = [(-float(priority[i]), i) for i in range(len(missing)) if missing[i] == 0]
    heapq.heapify(ready)
    while ready:
        _, i = heapq.heappop(ready)
        yield i
        for k in graph.succs[i]:
            missing[k] -= 1
            if missing[k] == 0:
                heapq.heappush(ready, (-float(priority[k]), k))


def eft(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
        order: Sequence[str] | None = None) -> Schedule:
    """Dynamic list scheduling by earliest finish time: in topological (or the given) order,
    each task goes to the device where it would *finish* first, so speed, affinity and
    transfer costs all count. ``order`` lists task names; it must respect dependencies.
    """
    prob = _problem(graph, devices)
    if order is None:
        priority = -np.arange(prob.n, dtype=float)
        priority[np.asarray(prob.graph.order, dtype=int)] = -np.arange(prob.n, dtype=float)
    else:
        priority = -_order_positions(prob.graph, order).astype(float)
    return _list_schedule(prob, priority, "EFT")


def _order_positions(graph: TaskGraph, order) -> np.ndarray:
    """Position of each task in ``order`` (task names); every task exactly once, dependencies respected."""
    if isinstance(order, (str, bytes)) or not isinstance(order, Iterable):
        raise TypeError(f"order must be a sequence of task names, got {type(order).__name__} {order!r:.80}")
    names = list(order)
    position = np.full(len(graph.tasks), -1)
    for k, name in enumerate(names):
        if not isinstance(name, str):
            raise TypeError(f"order must hold task names (strings), got {type(name).__name__} {name!r:.80}")
        i = graph.index.get(name)
        if i is None:
            raise ValueError(f"order names unknown task {name!r}")
        if position[i] != -1:
            raise ValueError(f"order must list every task exactly once, {name!r} appears twice")
        position[i] = k
    if (position == -1).any():
        missing = graph.tasks[int(np.flatnonzero(position == -1)[0])].name
        raise ValueError(f"order must list every task exactly once, {missing!r} is missing")
    for (src, dst) in graph.edges:
        if position[graph.index[src]] > position[graph.index[dst]]:
            raise ValueError(f"order must respect the dependencies: {dst!r} comes before its predecessor {src!r}")
    return position


def lpt(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Longest processing time first (Graham 1969): ready tasks in decreasing order of their
    fastest run time, each to its earliest-finish device. On m identical devices and
    independent tasks its makespan is at most (4/3 - 1/(3m)) times the optimum.
    """
    prob = _problem(graph, devices)
    return _list_schedule(prob, prob.costs.min(axis=1), "LPT")

