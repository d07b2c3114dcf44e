"""Tasks and task graphs: the work to schedule, and the data that flows between tasks.

A :class:`Task` carries an amount of ``work`` (run time is ``work / speed``), or
explicit per-device ``times`` as in the scheduling literature (unrelated devices).
A :class:`TaskGraph` is a DAG of tasks whose edges carry the amount of data the
consumer needs from the producer; a graph with no edges is a bag of independent tasks.

>>> g = TaskGraph([Task("a", 2), Task("b", 3), Task("c", 1)], [("a", "c", 4.0), ("b", "c")])
>>> g.topological_order()
['a', 'b', 'c']
>>> critical_path(g)
(4.0, ['b', 'c'])
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType

from hetlab._validate import check_int, check_nonnegative
from hetlab.devices import Device, check_devices

__all__ = ["Task", "TaskGraph", "CycleError", "UnknownTaskError", "as_graph", "execution_time", "cost_matrix",
           "assigned_costs", "comm_matrices", "critical_path", "total_work", "independent_tasks", "random_dag",
           "split_task", "split_longest_critical_task"]

#: Largest graph :func:`random_dag` builds (a Python object per task: a million is already ~1 GB of edges).
MAX_RANDOM_TASKS = 1_000_000


class UnknownTaskError(KeyError, ValueError):
    """A task name that the graph does not hold (a KeyError for lookups, a ValueError for the contract)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _check_label(name: str, value, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        allowed = "a non-empty string or None" if optional else "a non-empty string"
        raise TypeError(f"{name} must be {allowed}, got {type(value).__name__} {value!r}")
    if not value:
        raise ValueError(f"{name} must be a non-empty string, got ''")


class CycleError(ValueError):
    """Raised when a task graph has a dependency cycle; ``cycle`` lists its task names."""

    def __init__(self, cycle: list[str]):
        self.cycle = cycle
        super().__init__("task graph has a cycle: " + " -> ".join(cycle + cycle[:1]))


@dataclass(frozen=True)
class Task:
    """One unit of work.

    Parameters
    ----------
    name: unique name within its graph.
    work: work units; on a device the task runs ``work / device.speed_for(op)`` time units.
    kind: preferred device kind (``"GPU"``...), used by affinity-aware policies.
    op: operation kind (``"matmul"``, ``"conv"``, ``"control"``...), looked up in ``Device.affinity``.
    times: explicit run time per device name; overrides ``work``. A device missing from
        ``times`` cannot run the task.

    >>> Task("attention", 20.0, kind="GPU", op="matmul")
    Task(name='attention', work=20.0, kind='GPU', op='matmul', times=None)
    >>> Task("x", times={"P1": 14, "P2": 16}).times["P2"]          # unrelated devices, as in the HEFT paper
    16.0
    """

    name: str
    work: float = 1.0
    kind: str | None = None
    op: str | None = None
    times: Mapping[str, float] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"task name must be a non-empty string, got {type(self.name).__name__} {self.name!r}")
        if not self.name:
            raise ValueError("task name must be a non-empty string, got ''")
        object.__setattr__(self, "work", check_nonnegative(f"work of task {self.name!r}", self.work))
        _check_label(f"kind of task {self.name!r}", self.kind)
        _check_label(f"op of task {self.name!r}", self.op)
        if self.times is not None:
            if not isinstance(self.times, Mapping):
                raise TypeError(f"times of task {self.name!r} must be a mapping of device name to run time, "
                                f"got {type(self.times).__name__} {self.times!r}")
            for d in self.times:
                _check_label(f"a device name in times of task {self.name!r}", d, optional=False)
            times = {d: check_nonnegative(f"times[{d!r}] of task {self.name!r}", t, allow_inf=True)
                     for d, t in self.times.items()}
            if not any(math.isfinite(t) for t in times.values()):
                raise ValueError(f"times of task {self.name!r} must give at least one finite time")
            object.__setattr__(self, "times", MappingProxyType(times))


def execution_time(task: Task, device: Device) -> float:
    """Run time of ``task`` on ``device``: ``task.times[device.name]`` if given, else work / speed.

    >>> from hetlab.devices import kitchen
    >>> cpu, gpu, npu = kitchen(affinity=True)
    >>> execution_time(Task("m", 20.0, op="matmul"), gpu)             # 20 / (20 x 2)
    0.5

    See also :func:`cost_matrix` (every task on every device).
    """
    if not isinstance(task, Task):
        raise TypeError(f"task must be a Task, got {type(task).__name__} {task!r}")
    if not isinstance(device, Device):
        raise TypeError(f"device must be a Device, got {type(device).__name__} {device!r}")
    if task.times is not None:
        return task.times.get(device.name, math.inf)
    return task.work / device.speed_for(task.op)


@dataclass(frozen=True, eq=False)
class TaskGraph:
    """A DAG of tasks. ``edges`` maps ``(producer, consumer)`` names to the data the edge carries.

    Construct from tasks and an iterable of ``(src, dst)`` or ``(src, dst, data)`` tuples;
    construction checks names, edges and acyclicity (a :class:`CycleError` names a cycle).

    >>> g = TaskGraph([Task("a", 2), Task("b", 3), Task("c", 1)], [("a", "c", 4.0), ("b", "c")])
    >>> g, g.edges[("a", "c")], g.preds[2]
    (TaskGraph(3 tasks, 2 edges), 4.0, [0, 1])
    >>> TaskGraph([Task("a"), Task("b")], [("a", "b"), ("b", "a")])
    Traceback (most recent call last):
    ...
    hetlab.tasks.CycleError: task graph has a cycle: b -> a -> b
    """

    tasks: tuple[Task, ...]
    edges: Mapping[tuple[str, str], float] = field(default_factory=dict)

    def __init__(self, tasks: Iterable[Task], edges: Iterable | Mapping = ()):
        if isinstance(tasks, (str, bytes, Task)) or not isinstance(tasks, Iterable):
            raise TypeError(f"tasks must be an iterable of Task, got {type(tasks).__name__} {tasks!r:.80}")
        if isinstance(edges, (str, bytes)) or not isinstance(edges, (Iterable, Mapping)):
            raise TypeError(f"edges must be an iterable of (src, dst) or (src, dst, data) tuples, or a mapping "
                            f"(src, dst) -> data, got {type(edges).__name__} {edges!r:.80}")
        # An empty graph is a valid value (e.g. an animation frame before anything is placed); the
        # schedulers and generators refuse it where it can only be a mistake.
        tasks = tuple(tasks)
        index: dict[str, int] = {}
        for i, task in enumerate(tasks):
            if not isinstance(task, Task):
                raise TypeError(f"tasks must hold Task objects, got {type(task).__name__}")
            if task.name in index:
                raise ValueError(f"task names must be unique, {task.name!r} appears twice")
            index[task.name] = i
        items = edges.items() if isinstance(edges, Mapping) else (_edge_item(e) for e in edges)
        edge_map: dict[tuple[str, str], float] = {}
        for key, data in items:
            if not isinstance(key, tuple) or len(key) != 2:
                raise TypeError(f"edges keys must be (src, dst) tuples of task names, got {key!r}")
            src, dst = key
            if (src, dst) in edge_map:  # a second value for one edge is a mistake, not an update
                raise ValueError(f"edges must list each (src, dst) once, ({src!r}, {dst!r}) appears twice")
            for end in (src, dst):
                if not isinstance(end, str):
                    raise TypeError(f"edge ({src!r}, {dst!r}): task names must be strings, got "
                                    f"{type(end).__name__} {end!r}")
                if end not in index:
                    raise ValueError(f"edge ({src!r}, {dst!r}) names unknown task {end!r}")
            if src == dst:
                raise CycleError([src])
            edge_map[(src, dst)] = check_nonnegative(f"data on edge ({src!r}, {dst!r})", data)
        object.__setattr__(self, "tasks", tasks)
        object.__setattr__(self, "edges", MappingProxyType(edge_map))
        object.__setattr__(self, "index", index)
        # Whether run time is plain work / speed lets hot paths skip the (tasks x devices) matrix.
        object.__setattr__(self, "speed_only", all(t.times is None and t.op is None for t in tasks))
        object.__setattr__(self, "has_times", any(t.times is not None for t in tasks))
        self._order  # noqa: B018 -- fail fast on a cycle

    def __len__(self) -> int:
        return len(self.tasks)

    def __repr__(self) -> str:
        return f"TaskGraph({len(self.tasks)} tasks, {len(self.edges)} edges)"

    @cached_property
    def _adjacency(self) -> tuple[list[list[int]], list[list[int]], list[list[float]], list[list[float]]]:
        n = len(self.tasks)
        preds: list[list[int]] = [[] for _ in range(n)]
        succs: list[list[int]] = [[] for _ in range(n)]
        pdata: list[list[float]] = [[] for _ in range(n)]
        sdata: list[list[float]] = [[] for _ in range(n)]
        index = self.index
        for (src, dst), data in self.edges.items():
            s, d = index[src], index[dst]
            succs[s].append(d)
            sdata[s].append(data)
            preds[d].append(s)
            pdata[d].append(data)
        return preds, succs, pdata, sdata

    @property
    def preds(self) -> list[list[int]]:
        """Predecessor indices of each task."""
        return self._adjacency[0]

    @property
    def succs(self) -> list[list[int]]:
        """Successor indices of each task."""
        return self._adjacency[1]

    @property
    def pred_data(self) -> list[list[float]]:
        """Data on each incoming edge, aligned with :attr:`preds`."""
        return self._adjacency[2]

    @property
    def succ_data(self) -> list[list[float]]:
        """Data on each outgoing edge, aligned with :attr:`succs`."""
        return self._adjacency[3]

    @cached_property
    def _order(self) -> list[int]:
        # Kahn's algorithm; ties keep the tasks' listed order, so independent tasks stay in order.
        import heapq

        n = len(self.tasks)
        if not self.edges:
            return list(range(n))
        preds, succs = self.preds, self.succs
        missing = [len(p) for p in preds]
        ready = [i for i in range(n) if missing[i] == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for j in succs[i]:
                missing[j] -= 1
                if missing[j] == 0:
                    heapq.heappush(ready, j)
        if len(order) < n:
            raise CycleError(self._find_cycle({i for i in range(n) if missing[i] > 0}))
        return order

    def _find_cycle(self, left: set[int]) -> list[str]:
        # Every task left after Kahn's algorithm has a predecessor that is also left: walk back.
        start = min(left)
        seen: dict[int, int] = {}
        path = []
        node = start
        while node not in seen:
            seen[node] = len(path)
            path.append(node)
            node = next(p for p in self.preds[node] if p in left)
        cycle = path[seen[node]:]
        return [self.tasks[i].name for i in reversed(cycle)]

    def topological_order(self) -> list[str]:
        """Task names in a dependency-respecting order (listed order among ready tasks).

        >>> TaskGraph([Task("late"), Task("early")], [("early", "late")]).topological_order()
        ['early', 'late']
        """
        return [self.tasks[i].name for i in self._order]

    @property
    def order(self) -> list[int]:
        """Task indices in topological order."""
        return self._order

    def task(self, name: str) -> Task:
        """The task called ``name`` (:class:`UnknownTaskError`, a KeyError and ValueError, if none).

        >>> independent_tasks([1.0, 5.0]).task("T1").work
        5.0
        """
        return self.tasks[self._position(name)]

    def _position(self, name: str, parameter: str = "name") -> int:
        """Index of the task called ``name`` in :attr:`tasks`."""
        try:
            return self.index[name]
        except (KeyError, TypeError):
            raise UnknownTaskError(f"{parameter} must name a task of the graph ({len(self.tasks)} tasks), "
                                   f"got {name!r:.80}") from None

    @cached_property
    def work(self):
        """Work of every task as a float array."""
        import numpy as np

        return np.fromiter((t.work for t in self.tasks), dtype=float, count=len(self.tasks))


def _edge_item(edge) -> tuple[tuple[str, str], float]:
    if not isinstance(edge, tuple) or len(edge) not in (2, 3):
        raise TypeError(f"edges must hold (src, dst) or (src, dst, data) tuples, got {edge!r:.80}")
    return (edge[0], edge[1]), (edge[2] if len(edge) == 3 else 0.0)


def as_graph(tasks: TaskGraph | Sequence[Task], *, name: str = "tasks") -> TaskGraph:
    """Accept a TaskGraph, or a non-empty sequence of independent tasks. ``name``: the caller's parameter,
    named in the error messages (e.g. ``as_graph(graph, name="graph")``).

    >>> as_graph([Task("a"), Task("b")])
    TaskGraph(2 tasks, 0 edges)
    >>> as_graph([], name="graph")
    Traceback (most recent call last):
    ...
    ValueError: graph must hold at least one task, got none
    """
    _check_label("name", name, optional=False)
    return _as_graph(tasks, name)


def _as_graph(tasks, name: str) -> TaskGraph:
    """:func:`as_graph` for a parameter called ``name`` (named in the messages)."""
    if isinstance(tasks, TaskGraph):
        return tasks
    if isinstance(tasks, Task):
        raise TypeError(f"{name} must be a TaskGraph or a sequence of Task, got a single Task; wrap it in a list")
    if isinstance(tasks, (str, bytes, Mapping)) or not isinstance(tasks, Iterable):
        raise TypeError(f"{name} must be a TaskGraph or a sequence of Task, got {type(tasks).__name__} "
                        f"{tasks!r:.80}")
    tasks = list(tasks)
    for t in tasks:
        if not isinstance(t, Task):
            raise TypeError(f"{name} must be a TaskGraph or a sequence of Task, got a sequence holding "
                            f"{type(t).__name__} {t!r:.80}")
    if not tasks:
        raise ValueError(f"{name} must hold at least one task, got none")
    return TaskGraph(tasks)


def independent_tasks(work: Iterable[float], kinds: Iterable[str | None] | None = None,
                      prefix: str = "T") -> TaskGraph:
    """A graph of independent tasks ``T0, T1, ...`` with the given work (and preferred kinds).

    >>> [(t.name, t.work, t.kind) for t in independent_tasks([3.0, 1.0], kinds=["GPU", None]).tasks]
    [('T0', 3.0, 'GPU'), ('T1', 1.0, None)]
    """
    if isinstance(work, (str, bytes)) or not isinstance(work, Iterable):
        raise TypeError(f"work must be an iterable of numbers, got {type(work).__name__} {work!r:.80}")
    if kinds is not None and (isinstance(kinds, (str, bytes)) or not isinstance(kinds, Iterable)):
        raise TypeError(f"kinds must be an iterable of device kinds (one per task) or None, got "
                        f"{type(kinds).__name__} {kinds!r:.80}; for one kind use [kind] * len(work)")
    _check_label("prefix", prefix, optional=False)
    work = list(work)
    if not work:
        raise ValueError("work must hold at least one number, got none")
    kinds = [None] * len(work) if kinds is None else list(kinds)
    if len(kinds) != len(work):
        raise ValueError(f"kinds must have one entry per task ({len(work)}), got {len(kinds)}")
    width = len(str(max(len(work) - 1, 0)))
    return TaskGraph(Task(f"{prefix}{i:0{width}d}", w, k) for i, (w, k) in enumerate(zip(work, kinds)))


def cost_matrix(graph: TaskGraph, devices: Sequence[Device]):
    """Run time of every task on every device, shape ``(tasks, devices)``; ``inf`` where impossible.

    >>> from hetlab.devices import kitchen
    >>> cost_matrix(independent_tasks([10.0, 30.0]), kitchen()).round(2).tolist()    # CPU 10, GPU 20, NPU 15
    [[1.0, 0.5, 0.67], [3.0, 1.5, 2.0]]

    See also :func:`execution_time`, :func:`assigned_costs`.
    """
    import numpy as np

    graph = _as_graph(graph, "graph")
    devices = check_devices(devices)
    n, m = len(graph.tasks), len(devices)
    if graph.speed_only:
        speeds = np.array([d.speed for d in devices])
        with np.errstate(over="ignore"):  # an overflow gives inf; the schedulers refuse it with a clear message
            return graph.work[:, None] / speeds[None, :]
    costs = np.empty((n, m))
    with np.errstate(over="ignore"):
        for i, task in enumerate(graph.tasks):
            for j, device in enumerate(devices):
                costs[i, j] = execution_time(task, device)
    return costs


def assigned_costs(graph: TaskGraph, devices: Sequence[Device], device_of):
    """Run time of each task on the device it is assigned to (``device_of[i]`` indexes ``devices``),
    without building the full (tasks x devices) matrix when run time is work / speed.

    >>> from hetlab.devices import kitchen
    >>> assigned_costs(independent_tasks([10.0, 30.0]), kitchen(), [1, 2]).tolist()   # on the GPU, the NPU
    [0.5, 2.0]
    """
    import numpy as np

    graph = _as_graph(graph, "graph")
    devices = check_devices(devices)
    device_of = as_device_indices(device_of, len(graph.tasks), len(devices))
    if graph.speed_only:
        return graph.work / np.array([d.speed for d in devices])[device_of]
    return np.array([execution_time(t, devices[j]) for t, j in zip(graph.tasks, device_of)], dtype=float)


def as_device_indices(device_of, n: int, m: int, name: str = "device_of"):
    """``device_of`` as an int array of n entries in [0, m): integral numbers only (0.9 is not device 0)."""
    import numpy as np

    if isinstance(device_of, (str, bytes)) or device_of is None:
        raise TypeError(f"{name} must be a sequence of device indices, got {device_of!r}")
    try:
        raw = np.asarray(device_of)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of device indices, got {type(device_of).__name__}") from None
    if raw.dtype == bool or raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integers, got dtype {raw.dtype}")
    if raw.shape != (n,):
        raise ValueError(f"{name} must have one entry per task ({n}), got shape {raw.shape}")
    if raw.dtype.kind == "f":
        bad = ~np.isfinite(raw) | (raw != np.round(raw))
        if bad.any():
            raise ValueError(f"{name} must hold whole device indices, got {float(raw[bad][0])!r}")
    out = raw.astype(int)
    bad = (out < 0) | (out >= m)
    if bad.any():
        raise ValueError(f"{name} must hold device indices in [0, {m - 1}], got {int(out[bad][0])}")
    return out


def comm_matrices(devices: Sequence[Device]):
    """``(latency, inverse_bandwidth)`` matrices such that moving ``data`` from device a to b
    costs ``latency[a, b] + data * inverse_bandwidth[a, b]``; both are zero on the diagonal.

    >>> from hetlab.devices import Device, Link
    >>> latency, inverse = comm_matrices([Device("A", link=Link(1.0, 10.0)), Device("B", link=Link(2.0, 5.0))])
    >>> latency.tolist(), inverse.tolist()          # the slower end sets both
    ([[0.0, 2.0], [2.0, 0.0]], [[0.0, 0.2], [0.2, 0.0]])

    See also :func:`hetlab.devices.transfer_time` (the same cost for one pair).
    """
    import numpy as np

    devices = check_devices(devices)
    lat = np.array([d.link.latency for d in devices])
    bw = np.array([d.link.bandwidth for d in devices])
    latency = np.maximum(lat[:, None], lat[None, :])
    inverse = 1.0 / np.minimum(bw[:, None], bw[None, :])
    np.fill_diagonal(latency, 0.0)
    np.fill_diagonal(inverse, 0.0)
    return latency, inverse


def total_work(graph: TaskGraph | Sequence[Task]) -> float:
    """Sum of the tasks' work.

    >>> total_work([Task("a", 2.0), Task("b", 3.0)])
    5.0
    """
    return float(_as_graph(graph, "graph").work.sum())


def critical_path(graph: TaskGraph, devices: Sequence[Device] | None = None) -> tuple[float, list[str]]:
    """Longest dependency chain: ``(length, task names)``.

    Without devices a task weighs its ``work``; with devices it weighs its fastest run time,
    and edges cost nothing, so the length is a lower bound on any schedule's makespan.

    >>> from hetlab.devices import kitchen
    >>> g = TaskGraph([Task("a", 2), Task("b", 3), Task("c", 1)], [("a", "c"), ("b", "c")])
    >>> critical_path(g), critical_path(g, kitchen())          # on the GPU (speed 20): (3 + 1) / 20
    ((4.0, ['b', 'c']), (0.2, ['b', 'c']))
    """
    graph = _as_graph(graph, "graph")
    weights = graph.work if devices is None else cost_matrix(graph, devices).min(axis=1)
    n = len(graph.tasks)
    if n == 0:
        return 0.0, []
    finish = [0.0] * n
    best_pred = [-1] * n
    for i in graph.order:
        start, best = 0.0, -1
        for p in graph.preds[i]:
            if finish[p] > start:
                start, best = finish[p], p
        finish[i] = start + float(weights[i])
        best_pred[i] = best
    end = max(range(n), key=finish.__getitem__)
    path = []
    node = end
    while node != -1:
        path.append(graph.tasks[node].name)
        node = best_pred[node]
    return finish[end], path[::-1]


#: Most pieces :func:`split_task` cuts one task into (each piece is a Python object with its own edges).
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
