"""Graphs made from graphs or from a seed: split a task into pieces, random DAGs.

>>> g = random_dag(5, seed=1)
>>> len(g.tasks)
5
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from hetlab._validate import check_int, check_nonnegative
from hetlab.devices import Device, check_devices
from hetlab.tasks.costs import critical_path
from hetlab.tasks.graph import Task, TaskGraph, _check_label, as_graph, execution_time

__all__ = ["split_task", "split_longest_critical_task", "random_dag", "MAX_RANDOM_TASKS", "MAX_PIECES"]

#: Largest graph :func:`random_dag` builds (a Python object per task: a million is already ~1 GB of edges).
MAX_RANDOM_TASKS = 1_000_000


MAX_PIECES = 10_000


def split_task(graph: TaskGraph, task: str | Task, k: int = 2) -> TaskGraph:
    """``graph`` with ``task`` (a name or a Task of the graph) replaced by ``k`` independent pieces
    ``name#0`` ... ``name#{k-1}``, each with every predecessor and successor of the original.

    Assumptions: the work divides perfectly (no cost for splitting or merging) and each edge's data
    divides evenly among the pieces (``1/k`` each); explicit ``times`` are divided by ``k`` too.
    ``k = 1`` returns an equal graph.

    >>> g = TaskGraph([Task("a", 8.0), Task("b", 2.0)], [("a", "b", 4.0)])
    >>> h = split_task(g, "a", 4)
    >>> [(t.name, t.work) for t in h.tasks], h.edges[("a#0", "b")]
    ([('a#0', 2.0), ('a#1', 2.0), ('a#2', 2.0), ('a#3', 2.0), ('b', 2.0)], 1.0)
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
    clash = [p.name for p in pieces if p.name in graph.index and p.name != name]
    if clash:
        raise ValueError(f"task: the pieces' names {clash} already belong to other tasks of graph")
    tasks = [piece for t in graph.tasks for piece in (pieces if t.name == name else [t])]
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
    time is largest into ``k`` pieces; returns the new graph and the split task's name.

    >>> g = TaskGraph([Task("a", 1.0), Task("b", 6.0), Task("c", 2.0)], [("a", "b"), ("b", "c")])
    >>> h, name = split_longest_critical_task(g, [Device("D", speed=2.0)], 3)
    >>> name, critical_path(h)[0]          # 1 + 6/3 + 2
    ('b', 5.0)
    """
    graph = as_graph(graph, name="graph")
    devices = check_devices(devices)
    k = check_int("k", k, low=1, high=MAX_PIECES)
    _, path = critical_path(graph, devices)
    if not path:
        raise ValueError("graph must hold at least one task, got none")
    longest = max(path, key=lambda t: (min(execution_time(graph.task(t), d) for d in devices), t))
    return split_task(graph, longest, k), longest


def random_dag(n: int, *, mean_degree: float = 3.0,
               work: tuple[float, float] = (1.0, 10.0), data: tuple[float, float] = (0.0, 5.0),
               ops: Sequence[str] | None = None, seed: int = 0) -> TaskGraph:
    """A random DAG whose edges go from lower to higher task indices (so it is acyclic).

    Each task draws ``mean_degree`` predecessors on average among the previous tasks
    (uniformly from a window of the 50 before it, so paths stay long and memory linear).

    >>> g = random_dag(6, mean_degree=1.5, seed=1)
    >>> g, g.topological_order() == [t.name for t in g.tasks]     # edges only go forward
    (TaskGraph(6 tasks, 5 edges), True)
    >>> random_dag(6, mean_degree=1.5, seed=1).edges == g.edges   # the same seed, the same graph
    True
    """
    import numpy as np

    n = check_int("n", n, low=1, high=MAX_RANDOM_TASKS)
    mean_degree = check_nonnegative("mean_degree", mean_degree)
    if mean_degree > 50:
        raise ValueError(f"mean_degree must be in [0, 50] (predecessors come from the 50 tasks before), "
                         f"got {mean_degree!r}")
    work = _check_range("work", work)
    data = _check_range("data", data)
    if ops is not None:
        if isinstance(ops, (str, bytes)) or not isinstance(ops, Iterable):
            raise TypeError(f"ops must be a sequence of operation names or None, got {ops!r}")
        ops = list(ops)
        for op in ops:
            _check_label("an entry of ops", op, optional=False)
    seed = check_int("seed", seed, low=0)
    rng = np.random.default_rng(seed)
    width = len(str(n - 1))
    names = [f"T{i:0{width}d}" for i in range(n)]
    works = rng.uniform(work[0], work[1], size=n)
    op_list = [None] * n if not ops else list(rng.choice(list(ops), size=n))
    tasks = [Task(names[i], float(works[i]), op=op_list[i]) for i in range(n)]
    edges = {}
    counts = rng.poisson(mean_degree, size=n)
    for i in range(1, n):
        k = min(int(counts[i]), i, 50)
        if k == 0:
            continue
        low = max(0, i - 50)
        for p in rng.choice(np.arange(low, i), size=k, replace=False):
            edges[(names[p], names[i])] = float(rng.uniform(data[0], data[1]))
    return TaskGraph(tasks, edges)


def _check_range(name: str, value) -> tuple[float, float]:
    if not isinstance(value, tuple) or len(value) != 2:
        raise TypeError(f"{name} must be a (low, high) tuple, got {value!r}")
    low = check_nonnegative(f"{name}[0]", value[0])
    high = check_nonnegative(f"{name}[1]", value[1])
    if low > high:
        raise ValueError(f"{name} must be (low, high) with low <= high, got {value!r}")
    return low, high
