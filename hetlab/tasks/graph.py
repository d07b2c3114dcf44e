"""Tasks and task graphs: :class:`Task`, :class:`TaskGraph`, run times and critical paths.

See :mod:`hetlab.tasks` for the package overview.

>>> g = TaskGraph([Task("a", 2), Task("b", 3), Task("c", 1)], [("a", "c", 4.0), ("b", "c")])
>>> g.topological_order()
['a', 'b', 'c']
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from hetlab._validate import check_nonnegative
from hetlab.devices import Device

__all__ = ["Task", "TaskGraph", "CycleError", "UnknownTaskError", "as_graph", "execution_time", "total_work",
           "independent_tasks"]


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
    hetlab.tasks.graph.CycleError: task graph has a cycle: b -> a -> b
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


def total_work(graph: TaskGraph | Sequence[Task]) -> float:
    """Sum of the tasks' work.

    >>> total_work([Task("a", 2.0), Task("b", 3.0)])
    5.0
    """
    return float(_as_graph(graph, "graph").work.sum())
