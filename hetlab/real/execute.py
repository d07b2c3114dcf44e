"""Run a TaskGraph of real Python callables, and record what happened as a Schedule.

Each task's callable receives the results of its predecessors, in the order the graph lists
them, as positional arguments. Tasks start as soon as their inputs are ready, on a local
process pool (default, nothing to start), a thread pool, or Dask distributed (a LocalCluster
on loopback by default, or an existing scheduler address). Every task's measured start, end
and worker go into the same :class:`~hetlab.schedule.Schedule` type that the simulators
produce, so a real run's Gantt chart can sit beside a simulated one. The task bodies for timed
experiments live here too: :func:`busy_loop` (pure-Python work that holds the GIL) and :class:`Sleep`
(a fixed wall time that holds a worker but no core).

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

from hetlab._validate import (
    as_float_array,
    check_bool,
    check_callable,
    check_choice,
    check_instance,
    check_int,
    check_nonnegative,
    check_positive,
    check_str,
    describe,
)
from hetlab.devices import Device
from hetlab.schedule import Schedule
from hetlab.tasks import TaskGraph, as_graph

__all__ = ["RealRun", "run_graph", "run_plan", "task_gaps", "queued_tasks", "effective_parallelism", "busy_loop",
           "Sleep"]

#: Most seconds of loop work one :func:`run_plan` call may ask for (planned durations in seconds, summed).
MAX_PLAN_SECONDS = 10.0
#: Most loop steps one :func:`run_plan` call may run in all (10 s at 1e8 steps/s, faster than any CPython
#: loop), so that a wrong ``steps_per_second`` cannot keep a pool busy for minutes.
MAX_PLAN_STEPS = 10**9
#: Largest :func:`busy_loop` (about a second of pure-Python work), so that no call runs for minutes.
MAX_LOOP = 10_000_000


def _timed_call(fn: Callable, *args: Any) -> tuple[Any, float, float, str]:
    """Call ``fn(*args)`` and return (result, start, end, worker id); times are ``time.time()``
    so that they compare across processes on one machine."""
    check_callable("fn", fn)
    start = time.time()
    result = fn(*args)
    end = time.time()
    return result, start, end, f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def _call_on_outputs(fn: Callable, *outputs: tuple) -> tuple[Any, float, float, str]:
    """Dask passes each input as its producer's whole (result, start, end, worker) record."""
    return _timed_call(fn, *(out[0] for out in outputs))


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
                 worker_kind: str, info: dict | None = None) -> Schedule:
    workers: dict[str, int] = {}
    for name in graph.topological_order():
        workers.setdefault(records[name][2], len(workers))
    devices = [Device(f"worker{k}", worker_kind) for k in range(len(workers))]
    device_of = np.array([workers[records[t.name][2]] for t in graph.tasks], dtype=int)
    start = np.array([records[t.name][0] - t0 for t in graph.tasks])
    end = np.array([records[t.name][1] - t0 for t in graph.tasks])
    return Schedule(graph, devices, device_of, np.maximum(start, 0.0), np.maximum(end, 0.0), policy,
                    info={"workers": list(workers), **(info or {})})


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
            running[pool.submit(_timed_call, functions[name], *args)] = name

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
            # A local cluster: wait for every worker, so that no part of the run uses fewer workers
            # than asked for; an existing scheduler has the workers it has (wait for one).
            client.wait_for_workers(workers if cluster is not None else 1, timeout=60)
            # Warm up before the clock starts, as the process pool's warm-up does: on every worker, a
            # task through the same wrapper that imports the task bodies' modules (the first real task
            # must not pay those imports), then a pair of pinned tasks between every two workers, so the
            # worker-to-worker connections that fetch a predecessor's output are open too.
            present = list(client.scheduler_info()["workers"])
            modules = sorted({getattr(fn, "__module__", None) or type(fn).__module__ for fn in functions.values()}
                             - {"__main__", "builtins", None})
            warm = [client.submit(_call_on_outputs, _import_modules, (tuple(modules), 0.0, 0.0, ""),
                                  workers=[addr], allow_other_workers=False, pure=False) for addr in present]
            for a in present:
                for b in present:
                    if a != b:
                        first = client.submit(_timed_call, int, workers=[a], allow_other_workers=False, pure=False)
                        warm.append(client.submit(_call_on_outputs, int, first, workers=[b],
                                                  allow_other_workers=False, pure=False))
            warm_records = [out[1:] for out in client.gather(warm)]
            steals_before = _steal_count_on(client)
            t0 = time.time()
            futures = {}
            for name in graph.topological_order():
                deps = [futures[p] for p in _inputs(graph, name)]
                futures[name] = client.submit(_call_on_outputs, functions[name], *deps, key=f"hetlab-{name}-{t0}",
                                              pure=False)
            submitted = time.time() - t0
            outputs = client.gather(futures)
            wall = time.time() - t0
            steals_after = _steal_count_on(client)
    finally:
        if cluster is not None:
            cluster.close()
    stolen = None if steals_before is None or steals_after is None else steals_after - steals_before
    results = {name: out[0] for name, out in outputs.items()}
    records = {name: out[1:] for name, out in outputs.items()}
    startup = min(rec[0] for rec in records.values()) - t0
    return RealRun(results, _to_schedule(graph, records, t0, "dask", "CPU",
                                         {"stolen": stolen, "workers_present": len(present),
                                          "startup": max(0.0, startup), "submit_seconds": submitted,
                                          "warmup": [(s - t0, e - t0, w) for s, e, w in warm_records]}), wall)


def _import_modules(modules: tuple) -> int:
    """Import the named modules (a Dask worker's warm-up: the task bodies' modules); returns how many."""
    import importlib

    for name in modules:
        importlib.import_module(name)
    return len(modules)


def _steal_count(dask_scheduler=None) -> int | None:
    """Steal requests the scheduler's work-stealing extension has made so far (None without one)."""
    ext = getattr(dask_scheduler, "extensions", {}).get("stealing")
    count = getattr(ext, "count", None)
    return int(count) if count is not None else None


def _steal_count_on(client) -> int | None:
    try:
        return client.run_on_scheduler(_steal_count)
    except Exception:   # an old or restricted scheduler: the count is only informative
        return None


def busy_loop(n: int) -> int:
    """A CPU-bound pure-Python loop of ``n`` steps: it holds the GIL the whole time (at most 10 million steps).

    >>> busy_loop(4)      # 0 + 1 + 4 % 7 + 9 % 7
    7
    """
    n = check_int("n", n, low=0, high=MAX_LOOP)
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


@dataclass(frozen=True)
class Sleep:
    """A picklable task body that waits ``seconds`` in ``time.sleep`` (inputs are ignored): it holds its
    worker for that long but no core and no GIL, like a task that waits for a disk, a network or a GPU.

    >>> Sleep(0.0)()
    0.0
    """

    seconds: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "seconds", check_nonnegative("seconds", self.seconds, high=10.0))

    def __call__(self, *inputs) -> float:
        time.sleep(self.seconds)
        return self.seconds


def effective_parallelism(start, end, cpu) -> float:
    """CPU seconds the tasks used per second of wall time: ``sum(cpu) / (max(end) - min(start))``.

    ``start``, ``end``: each task's wall-clock start and end (seconds on one clock, not negative); ``cpu``: the
    CPU seconds its thread spent (``time.thread_time``). How many cores were computing at once, on average: at most 1
    for threads under the GIL, at most the usable cores for processes, whatever else the machine runs.

    >>> effective_parallelism([0.0, 0.0], [1.0, 1.0], [0.5, 0.5])   # two threads taking turns
    1.0
    >>> effective_parallelism([0.0, 0.0], [1.0, 1.0], [1.0, 1.0])   # two cores at once
    2.0
    """
    s = as_float_array("start", start, low=0.0, finite=True)
    e = as_float_array("end", end, low=0.0, finite=True)
    c = as_float_array("cpu", cpu, low=0.0, finite=True)
    if s.ndim != 1 or not s.size or s.shape != e.shape or s.shape != c.shape:
        raise ValueError(f"start, end and cpu must be 1-D sequences of one equal, positive length, got shapes "
                         f"{s.shape}, {e.shape}, {c.shape}")
    span = float(e.max() - s.min())
    if not span > 0:
        raise ValueError(f"end must lie after start: the tasks span {span:g} s")
    return float(c.sum()) / span


def _lane(steps: list[int], sleep: bool = False) -> list[tuple[float, float, str, float]]:
    """Run one device's lane of a plan: pure-Python loops of the given step counts one after another (the
    loop holds the GIL, so lanes on a thread pool cannot overlap), or, with ``sleep``, waits of the given
    microseconds. Each record is (start, end, worker id, CPU seconds this thread spent, ``time.thread_time``)."""
    out = []
    for n in steps:
        start = time.time()
        cpu = time.thread_time()
        if sleep:
            time.sleep(n * 1e-6)
        else:
            total = 0
            for i in range(n):
                total += i * i % 7
        cpu = time.thread_time() - cpu
        out.append((start, time.time(), f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}", cpu))
    return out


def run_plan(plan: Schedule, seconds_per_unit: float, *, executor: str = "process",
             steps_per_second: float | None = None, sequential: bool = False, body: str = "loop") -> RealRun:
    """Execute a simulated plan of independent tasks for real: one pool worker per device runs that
    device's tasks in the planned order, each lasting ``(end - start) * seconds_per_unit`` seconds.

    ``body="loop"``: each task is a pure-Python loop sized by ``steps_per_second`` (the loop rate on an
    idle core, :func:`hetlab.real.measure.loop_rate`; required), so the simulated device speeds become
    loop lengths. ``body="sleep"``: each task waits in ``time.sleep`` for its planned seconds.
    ``executor="process"`` gives every lane its own interpreter; ``"thread"`` runs the lanes as threads
    of this process, which the GIL serialises for loops. ``sequential=True`` runs the same tasks one after
    another on a single thread (one lane, in planned start order): the baseline with no concurrency.
    The returned Schedule keeps the plan's devices and placement; its times are measured seconds from
    the start, and ``info`` holds ``planned_seconds``, ``steps_per_second`` (None for sleeps),
    ``cpu_seconds`` (each task's CPU seconds on its worker thread) and ``parallelism``
    (:func:`effective_parallelism` of the tasks).
    """
    check_instance("plan", plan, Schedule)
    if plan.graph.edges:
        raise ValueError(f"plan must schedule independent tasks (no edges), got {len(plan.graph.edges)} edges")
    scale = check_nonnegative("seconds_per_unit", seconds_per_unit)
    check_choice("executor", executor, ("process", "thread"))
    check_choice("body", body, ("loop", "sleep"))
    if body == "loop" and steps_per_second is None:
        raise TypeError("steps_per_second is required for body='loop': pass hetlab.real.measure.loop_rate()")
    rate = None if body == "sleep" else check_positive("steps_per_second", steps_per_second, high=1e9)
    if body == "sleep" and steps_per_second is not None:
        raise ValueError(f"steps_per_second must be None for body='sleep', got {steps_per_second!r}")
    with np.errstate(over="ignore", invalid="ignore"):
        planned = (plan.end - plan.start) * scale
        total = float(planned.sum())
    if not total <= MAX_PLAN_SECONDS:
        raise ValueError(f"seconds_per_unit={scale:g} makes the plan's work {total:.1f} s; at most "
                         f"{MAX_PLAN_SECONDS:g} s is allowed")
    if rate is not None and total * rate > MAX_PLAN_STEPS:
        raise ValueError(f"steps_per_second={rate:g} and seconds_per_unit={scale:g} make {total * rate:.3g} loop "
                         f"steps; at most {MAX_PLAN_STEPS:.0e} are allowed (steps_per_second is the loop rate, "
                         "measured by hetlab.real.measure.loop_rate())")
    check_bool("sequential", sequential)
    lanes = [[i for i in np.argsort(plan.start, kind="stable") if plan.device_of[i] == d]
             for d in range(len(plan.devices))]
    lanes = [lane for lane in lanes if lane]
    if sequential:
        lanes = [[int(i) for i in np.argsort(plan.start, kind="stable")]]
        executor = "thread"
    units = planned * (1e6 if rate is None else rate)        # microseconds of sleep, or loop steps
    pool_type = ProcessPoolExecutor if executor == "process" else ThreadPoolExecutor
    with pool_type(len(lanes)) as pool:
        list(pool.map(time.sleep, [0.05] * len(lanes)))   # every worker exists before the clock starts
        t0 = time.time()
        futures = [pool.submit(_lane, [int(round(units[i])) for i in lane], rate is None) for lane in lanes]
        records = [f.result() for f in futures]
        wall = time.time() - t0
    start = np.zeros(len(plan.graph.tasks))
    end = np.zeros(len(plan.graph.tasks))
    cpu = np.zeros(len(plan.graph.tasks))
    for lane, recs in zip(lanes, records):
        for i, (s, e, _, c) in zip(lane, recs):
            start[i], end[i], cpu[i] = s - t0, e - t0, c
    start, end = np.maximum(start, 0.0), np.maximum(end, 0.0)
    par = effective_parallelism(start, end, cpu) if float(end.max() - start.min()) > 0 else 0.0
    policy = "sequential" if sequential else ("process pool" if executor == "process" else "thread pool")
    schedule = Schedule(plan.graph, plan.devices, plan.device_of, start, end, policy,
                        info={"planned_seconds": planned.tolist(), "steps_per_second": rate,
                              "cpu_seconds": cpu.tolist(), "parallelism": par})
    return RealRun({}, schedule, wall)


def task_gaps(measured: Schedule) -> np.ndarray:
    """Each task's gap in a measured run (seconds, in graph order): its measured start minus the
    moment it could have started on its worker (the latest of its predecessors' ends and the end of
    the previous task on that worker, or 0): the dispatch time the simulation did not charge.

    >>> from hetlab.tasks import Task, TaskGraph
    >>> from hetlab.devices import Device
    >>> g = TaskGraph([Task("a"), Task("b")], [("a", "b")])
    >>> s = Schedule(g, [Device("w", "CPU")], np.array([0, 0]), np.array([0.0, 1.5]), np.array([1.0, 2.5]), "x")
    >>> task_gaps(s).tolist()     # b could start at 1.0 (a's end) and started at 1.5
    [0.0, 0.5]
    """
    check_instance("measured", measured, Schedule)
    g = measured.graph
    free = np.zeros(len(measured.devices))
    out = np.zeros(len(g.tasks))
    for i in np.argsort(measured.start, kind="stable"):
        ready = max([free[measured.device_of[i]]] + [measured.end[p] for p in g.preds[i]])
        out[i] = max(0.0, float(measured.start[i]) - float(ready))
        free[measured.device_of[i]] = measured.end[i]
    return out


def queued_tasks(schedule: Schedule) -> np.ndarray:
    """For each task of ``schedule`` (graph order), True when it was *queued*: it became ready (its last
    predecessor ended) before the previous task on its worker ended, so a pool can hand it over while the
    worker is still busy and it pays about the pipelined dispatch cost; False when it was *released*: its
    worker was already idle (or had no previous task) when it became ready, so the worker waits a full round
    trip. Works on a simulated and on a measured :class:`~hetlab.schedule.Schedule` alike.

    >>> from hetlab.devices import Device
    >>> from hetlab.schedulers import central_queue
    >>> from hetlab.tasks import Task, TaskGraph
    >>> g = TaskGraph([Task("a", 2.0), Task("b", 2.0), Task("c", 2.0)], [("a", "c")])
    >>> sim = central_queue(g, [Device("w", "CPU", 1000.0)], ready="fifo")   # a, b, c one after another
    >>> queued_tasks(sim).tolist()     # b was ready at 0 while a ran; c at 2 ms while b ran
    [False, True, True]
    """
    check_instance("schedule", schedule, Schedule)
    g = schedule.graph
    free = np.full(len(schedule.devices), -np.inf)       # no previous task: the worker is idle
    out = np.zeros(len(g.tasks), dtype=bool)
    for i in np.argsort(schedule.start, kind="stable"):
        ready = max([0.0] + [float(schedule.end[p]) for p in g.preds[i]])
        out[i] = ready < free[schedule.device_of[i]]
        free[schedule.device_of[i]] = schedule.end[i]
    return out
