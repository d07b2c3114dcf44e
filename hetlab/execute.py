"""Run a TaskGraph of real Python callables, and record what happened as a Schedule.

Each task's callable receives the results of its predecessors, in the order the graph lists
them, as positional arguments. Tasks start as soon as their inputs are ready, on a local
process pool (default, nothing to start), a thread pool, or Dask distributed (a LocalCluster
on loopback by default, or an existing scheduler address). Every task's measured start, end
and worker go into the same :class:`~hetlab.schedule.Schedule` type that the simulators
produce, so a real run's Gantt chart can sit beside a simulated one.

>>> from hetlab.tasks import Task, TaskGraph
>>> g = TaskGraph([Task("a"), Task("b"), Task("c")], [("a", "c"), ("b", "c")])
>>> run = run_graph(g, {"a": lambda: 2, "b": lambda: 3, "c": lambda x, y: x * y}, executor="thread", workers=2)
>>> run.results["c"], run.schedule.validate(check_durations=False).policy
(6, 'thread pool')
"""
from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import check_callable, check_choice, check_instance, check_int, check_nonnegative, check_str, describe
from .devices import Device
from .schedule import Schedule
from .tasks import TaskGraph, as_graph

__all__ = ["RealRun", "run_graph", "timed_call", "makespan_error"]


def timed_call(fn: Callable, *args: Any) -> tuple[Any, float, float, str]:
    """Call ``fn(*args)`` and return (result, start, end, worker id); times are ``time.time()``
    so that they compare across processes on one machine."""
    check_callable("fn", fn)
    start = time.time()
    result = fn(*args)
    end = time.time()
    return result, start, end, f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def _call_on_outputs(fn: Callable, *outputs: tuple) -> tuple[Any, float, float, str]:
    """Dask passes each input as its producer's whole (result, start, end, worker) record."""
    return timed_call(fn, *(out[0] for out in outputs))


@dataclass(frozen=True)
class RealRun:
    """Results by task name, and the measured timeline as a Schedule (one device per worker)."""

    results: dict[str, Any]
    schedule: Schedule
    wall_time: float

    def __post_init__(self) -> None:
        check_instance("results", self.results, dict)
        check_instance("schedule", self.schedule, Schedule)
        object.__setattr__(self, "wall_time", check_nonnegative("wall_time", self.wall_time))


def _to_schedule(graph: TaskGraph, records: dict[str, tuple[float, float, str]], t0: float, policy: str,
                 worker_kind: str) -> Schedule:
    workers: dict[str, int] = {}
    for name in graph.topological_order():
        workers.setdefault(records[name][2], len(workers))
    devices = [Device(f"worker{k}", worker_kind) for k in range(len(workers))]
    device_of = np.array([workers[records[t.name][2]] for t in graph.tasks], dtype=int)
    start = np.array([records[t.name][0] - t0 for t in graph.tasks])
    end = np.array([records[t.name][1] - t0 for t in graph.tasks])
    return Schedule(graph, devices, device_of, np.maximum(start, 0.0), np.maximum(end, 0.0), policy,
                    info={"workers": list(workers)})


def _inputs(graph: TaskGraph, name: str) -> list[str]:
    return [graph.tasks[p].name for p in graph.preds[graph.index[name]]]


def run_graph(graph: TaskGraph, functions: Mapping[str, Callable], *, executor: str = "process",
              workers: int | None = None, address: str | None = None) -> RealRun:
    """Execute ``graph`` for real. ``functions`` maps every task name to a callable.

    ``executor``: ``"process"`` (callables must be picklable: module-level functions),
    ``"thread"``, or ``"dask"`` (needs ``dask[distributed]``; ``address`` of a running scheduler,
    or None for a LocalCluster on 127.0.0.1 with ``workers`` single-threaded worker processes,
    shut down afterwards).
    """
    if not isinstance(graph, TaskGraph):
        try:
            graph = as_graph(graph)
        except TypeError:
            raise TypeError(f"graph must be a TaskGraph or a list of Task, got {describe(graph)}") from None
        except ValueError as exc:   # a list of tasks that is not a graph (empty, duplicate names)
            raise ValueError(f"graph: {exc}") from None
    if not isinstance(functions, Mapping):
        raise TypeError(f"functions must map task names to callables, got {type(functions).__name__}")
    missing = [t.name for t in graph.tasks if t.name not in functions]
    if missing:
        raise ValueError(f"functions must give a callable for every task; missing {missing[:5]}")
    bad = [name for name, fn in functions.items() if not callable(fn)]
    if bad:
        raise TypeError(f"functions must map task names to callables; {bad[0]!r} is not callable")
    check_choice("executor", executor, ("process", "thread", "dask"))
    # None means "one per CPU, at most 8"; 0 is an error, not a request for the default.
    workers = min(os.cpu_count() or 1, 8) if workers is None else check_int("workers", workers, low=1, high=256)
    if address is not None:
        check_str("address", address)
    if executor == "dask":
        return _run_dask(graph, functions, workers, address)
    pool_type = ProcessPoolExecutor if executor == "process" else ThreadPoolExecutor
    results: dict[str, Any] = {}
    records: dict[str, tuple[float, float, str]] = {}
    missing_count = {t.name: len(graph.preds[i]) for i, t in enumerate(graph.tasks)}
    with pool_type(workers) as pool:
        if executor == "process":
            list(pool.map(int, range(workers)))  # start the workers before the clock starts
        t0 = time.time()
        running = {}

        def submit(name: str) -> None:
            args = [results[p] for p in _inputs(graph, name)]
            running[pool.submit(timed_call, functions[name], *args)] = name

        for name in graph.topological_order():
            if missing_count[name] == 0:
                submit(name)
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                name = running.pop(future)
                result, start, end, worker = future.result()
                results[name] = result
                records[name] = (start, end, worker)
                for s in graph.succs[graph.index[name]]:
                    succ = graph.tasks[s].name
                    missing_count[succ] -= 1
                    if missing_count[succ] == 0:
                        submit(succ)
        wall = time.time() - t0
    policy = "process pool" if executor == "process" else "thread pool"
    return RealRun(results, _to_schedule(graph, records, t0, policy, "CPU"), wall)


def _run_dask(graph: TaskGraph, functions: Mapping[str, Callable], workers: int, address: str | None) -> RealRun:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("executor='dask' needs dask[distributed]: pip install 'hetlab[dask]'") from None
    cluster = None
    if address is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None, silence_logs=40)
        address = cluster.scheduler_address
    try:
        with Client(address) as client:
            client.wait_for_workers(1, timeout=30)
            t0 = time.time()
            futures = {}
            for name in graph.topological_order():
                deps = [futures[p] for p in _inputs(graph, name)]
                futures[name] = client.submit(_call_on_outputs, functions[name], *deps, key=f"hetlab-{name}-{t0}",
                                              pure=False)
            outputs = client.gather(futures)
            wall = time.time() - t0
    finally:
        if cluster is not None:
            cluster.close()
    results = {name: out[0] for name, out in outputs.items()}
    records = {name: out[1:] for name, out in outputs.items()}
    return RealRun(results, _to_schedule(graph, records, t0, "dask", "CPU"), wall)


def makespan_error(simulated: Schedule, measured: Schedule) -> float:
    """Relative error of a simulated makespan against a measured one, ``(sim - real) / real``."""
    check_instance("simulated", simulated, Schedule)
    check_instance("measured", measured, Schedule)
    if measured.makespan <= 0:
        raise ValueError(f"measured must take time: its makespan is {measured.makespan:g}")
    return (simulated.makespan - measured.makespan) / measured.makespan
