"""Greedy list scheduling (Graham 1966, 1969): the one engine, "whoever is free takes the next task"
(谁空谁取), and the list schedulers EFT and LPT; executing a fixed plan.

:func:`central_queue` is the engine. Every greedy run-time rule of the library is a call of it:
:func:`earliest_free`, :func:`hetlab.schedulers.static.article_demo`, the dynamic queues of
:mod:`hetlab.models.dynamics` and :mod:`hetlab.models.dispatch` (noise, stragglers, dispatch cost, late
orders), and the greedy schedules of chapters 2, 4, 5, 11 and A1. Its rule, simulated event by event:

- **Greedy.** Whenever a device is free and a task is ready (every predecessor has finished and the task
  has been released), the device takes a ready task at once; no device idles while a task is ready.
- **Which task** (``ready``). ``"list"``: the ready task that comes first in ``order`` (Graham's priority
  list; chapter 2's "把列表里下一个能做的任务交给它", LPT's largest-first list of the late orders).
  ``"fifo"``: the task that became ready first, ties by ``order`` (a runtime's shared ready queue, which
  is what a process pool fed in completion order does: chapter 5's central queue and appendix A1).
  On independent tasks released together the two are the same rule.
- **Which device** (the tie rule). If several devices are free at the same moment, the **fastest**
  (largest :attr:`~hetlab.devices.Device.speed`) takes first, then the one listed first. On independent
  tasks this reads: in list order, each task goes to the device that becomes free first; ties to the
  fastest, then the first listed. Why the fastest: when nothing else distinguishes two free devices,
  giving the task to the slower one only delays it. Chapter 5's dynamic queue gave its largest dish to
  the slowest cook by listing order and lost to the static plan on 3 of 20 menus; with ties to the fastest
  it wins 392 of 400 runs (chapter review, 2026-12-04). The article's demo keeps its own tie (by device
  name, the article's heap of ``(free_at, name)``), because it reproduces that program.
- **Costs.** The device spends ``overhead`` deciding, then the task starts once its inputs have arrived
  (a predecessor's end plus the transfer between the two devices) and runs for its run time there. With
  ``handover`` the wait depends on how the task met its device, as in a real pool (appendix A1): a task
  *released* to a device that was already idle (or had run nothing) waits the released hand-over; a task
  *queued* (ready while its device was still busy) waits the queued one after the device frees.

Because the rule is greedy, on ``P`` identical devices and free transfers its makespan is at most
``W / P + D`` (:mod:`hetlab.schedulers.bounds`), for either ``ready`` rule.

>>> from hetlab.devices import kitchen
>>> from hetlab.tasks import independent_tasks
>>> s = central_queue(independent_tasks([10, 20, 15]), kitchen())
>>> [s.devices[j].name for j in s.device_of]       # all free at 0: the fastest cooks take first
['GPU', 'NPU', 'CPU']
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

import hetlab.schedulers._kernels as _kernels
from hetlab._validate import check_bool, check_choice, check_nonnegative, check_sequence, check_str
from hetlab.devices import Device
from hetlab.schedule import Schedule
from hetlab.schedulers._core import _check_runnable, _Problem, _problem, _run_queues
from hetlab.tasks import Task, TaskGraph

__all__ = ["central_queue", "earliest_free", "execute_plan", "eft", "lpt", "COMPILED_FROM", "FRESH_FROM"]

#: How :func:`central_queue` picks among ready tasks: Graham's priority list, or first come first served.
_READY_RULES = ("list", "fifo")

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


def central_queue(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
                  order: Sequence[str] | None = None, ready: str = "list",
                  release: Mapping[str, float] | None = None, overhead: float = 0.0,
                  handover: tuple | None = None, compiled: bool | None = None,
                  policy: str = "central queue") -> Schedule:
    """Greedy list scheduling from one central queue: whoever is free takes the next task (the module
    docstring gives the rule, its tie-breaking and why).

    ``order`` lists every task name once (default: the graph's task list); it need not respect the
    dependencies, a task is only taken once it is ready. ``ready`` is ``"list"`` (the first ready task
    of ``order``) or ``"fifo"`` (the task ready longest, ties by ``order``). ``release`` maps task names
    to the time they are ordered (absent: 0); a task is not taken before it. ``overhead`` is the time a
    device spends deciding before each task it takes (idle, not busy). ``handover`` = ``(released, queued)``
    replaces it with two waits (each one number for every task, or one per task in graph order): a task
    whose device was idle when it became ready (or had run no task yet) starts ``released`` after it became
    ready; a task that became ready while its device was still busy starts ``queued`` after the device frees
    (:func:`hetlab.real.execute.queued_tasks` classes a schedule's tasks by the same rule). ``policy`` labels
    the schedule.

    ``compiled`` concerns independent tasks that run for ``work / speed``, released at 0 without
    overhead (the hot loop, one ``heapreplace`` per task): use the numba kernel (True: require it;
    False: never; None: only where it pays, i.e. at least :data:`COMPILED_FROM` tasks once this process
    has loaded it, or at least :data:`FRESH_FROM` tasks when numba's on-disk cache holds it); both paths
    give identical schedules.

    >>> from hetlab.devices import identical
    >>> from hetlab.tasks import Task, TaskGraph
    >>> g = TaskGraph([Task("a", 1), Task("b", 3), Task("c", 1), Task("d", 1)], [("a", "c")])
    >>> s = central_queue(g, identical(2))       # D0 takes a, D1 takes b; at 1 c is ready and first in the list
    >>> [(t, float(s.start[i]), s.devices[s.device_of[i]].name) for i, t in enumerate("abcd")]
    [('a', 0.0, 'D0'), ('b', 0.0, 'D1'), ('c', 1.0, 'D0'), ('d', 2.0, 'D0')]
    >>> late = central_queue(g, identical(2), order=["d", "c", "b", "a"], release={"d": 5.0})
    >>> float(late.start[3]), late.makespan          # d is first in the list but ordered only at 5
    (5.0, 6.0)
    >>> pool = central_queue(g, identical(1), ready="fifo", handover=(0.5, 0.1))
    >>> pool.start.round(9).tolist()     # a released at 0 (0.5); b, d and c queued behind it (0.1 each)
    [0.5, 1.6, 5.8, 4.7]
    """
    prob = _problem(graph, devices)
    position = None if order is None else _order_positions(prob.graph, order, dependencies=False)
    ready = check_choice("ready", ready, _READY_RULES)
    overhead = check_nonnegative("overhead", overhead, high=1e12)
    waits = None if handover is None else _handover(handover, prob.n)
    if waits is not None and overhead:
        raise ValueError(f"overhead and handover are two ways to charge a device before each task: give one, "
                         f"got overhead={overhead!r} and handover")
    if compiled is not None:
        compiled = check_bool("compiled", compiled)
    policy = check_str("policy", policy)
    placed = _central_queue(prob, position, fifo=ready == "fifo", release=_release_times(prob.graph, release),
                            overhead=overhead, rank=_fastest_first(prob.devices), compiled=compiled, policy=policy,
                            handover=waits)
    return prob.schedule(*placed, policy)


def _handover(handover, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``handover`` checked: (released, queued), each one non-negative number or one per task of ``n``."""
    if not isinstance(handover, (tuple, list)) or len(handover) != 2:
        raise TypeError(f"handover must be a pair (released, queued), got {handover!r:.80}")
    out = []
    for name, value in zip(("handover released", "handover queued"), handover):
        if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
            out.append(np.full(n, check_nonnegative(name, value, high=1e12)))
        else:
            values = [check_nonnegative(name, v, high=1e12) for v in check_sequence(name, value)]
            if len(values) != n:
                raise ValueError(f"{name} must be one number or one per task ({n}), got {len(values)} values")
            out.append(np.array(values, dtype=float))
    return out[0], out[1]


def earliest_free(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
                  compiled: bool | None = None) -> Schedule:
    """Graham's list scheduling (1966, 1969) in the graph's task order: each task goes to the device
    that becomes free first, ties to the fastest, then the first listed; otherwise blind to speed.

    :func:`central_queue` with its defaults (``ready="list"``, no release, no overhead), labelled
    ``"earliest free"``. On independent tasks this is the article's demo policy except for ties, in
    O(n log m); ``compiled`` is :func:`central_queue`'s (the numba kernel for large inputs).

    >>> from hetlab.devices import kitchen
    >>> from hetlab.tasks import independent_tasks
    >>> s = earliest_free(independent_tasks([10, 20, 15, 8]), kitchen())   # GPU 20, NPU 15, CPU 10
    >>> [(s.devices[j].name, round(float(e), 2)) for j, e in zip(s.device_of, s.end)]
    [('GPU', 0.5), ('NPU', 1.33), ('CPU', 1.5), ('GPU', 0.9)]
    """
    return central_queue(graph, devices, compiled=compiled, policy="earliest free")


def _fastest_first(devices: Sequence[Device]) -> list[int]:
    """Each device's rank under the tie rule: fastest first, then the first listed (0 = takes first)."""
    ranked = sorted(range(len(devices)), key=lambda j: (-devices[j].speed, j))
    rank = [0] * len(devices)
    for r, j in enumerate(ranked):
        rank[j] = r
    return rank


def _release_times(graph: TaskGraph, release) -> np.ndarray | None:
    """``release`` (task name -> time) as an array over the tasks, or None when nothing is released late."""
    if release is None:
        return None
    if not isinstance(release, Mapping):
        raise TypeError(f"release must map task names to times, got {type(release).__name__} {release!r:.80}")
    times = np.zeros(len(graph.tasks))
    for name, t in release.items():
        if not isinstance(name, str):
            raise TypeError(f"release must map task names (strings) to times, got key {name!r:.80}")
        if name not in graph.index:
            raise ValueError(f"release names unknown task {name!r}")
        times[graph.index[name]] = check_nonnegative(f"release[{name!r}]", t, high=1e12)
    return times if times.any() else None


def _central_queue(prob: _Problem, position: np.ndarray | None, *, fifo: bool, release: np.ndarray | None,
                   overhead: float, rank: Sequence[int], compiled: bool | None, policy: str,
                   handover: tuple[np.ndarray, np.ndarray] | None = None):
    """The engine behind :func:`central_queue`, for callers that have validated their input: returns
    ``(device_of, start, end)``. ``position`` is each task's place in the list (None: the graph's task order);
    ``rank`` orders the devices for ties (the article's demo passes its own)."""
    if not prob.speed_only and not np.isfinite(prob.costs).all():
        i, j = (int(k[0]) for k in np.nonzero(~np.isfinite(prob.costs)))
        raise ValueError(f"graph: task {prob.graph.tasks[i].name!r} cannot run on device {prob.devices[j].name!r}, "
                         f"and {policy} gives each task to whichever device is free (every task must be able to "
                         f"run on every device)")
    if not prob.graph.edges and release is None and overhead == 0 and handover is None and prob.speed_only:
        return _independent(prob, position, rank, compiled)
    if compiled:
        raise ValueError("compiled=True: the numba kernel handles independent tasks of work / speed, "
                         "released at 0, without overhead; this call has "
                         + ("dependencies" if prob.graph.edges else
                            "release times, overhead, hand-overs or per-device times"))
    return _events(prob, np.arange(prob.n) if position is None else position, fifo, release, overhead, rank,
                   handover)


def _independent(prob: _Problem, position: np.ndarray | None, rank: Sequence[int], compiled: bool | None):
    """The engine on independent tasks of work / speed released at 0 (the hot loop): in list order, each
    task to the device free first, ties by rank. Devices are renumbered by rank so that the loop (and its
    numba twin) break ties by the smaller number, exactly like a heap of ``(free_at, number)``."""
    n = prob.n
    wanted = compiled is True or (compiled is None and (
        (n >= COMPILED_FROM and _kernels.earliest_free_ready())
        or (n >= FRESH_FROM and _kernels.earliest_free_cached())))
    kernel = _kernels.earliest_free_kernel() if wanted else None
    if compiled and kernel is None:
        raise ImportError("compiled=True needs numba: pip install 'hetlab[fast]'")
    by_rank = np.argsort(np.asarray(rank))                 # by_rank[r] = the device of rank r
    device_speeds = np.array([d.speed for d in prob.devices])
    speeds = device_speeds[by_rank]
    work = prob.graph.work
    sequence = None if position is None else np.argsort(position, kind="stable")    # task indices in list order
    if sequence is not None:
        work = work[sequence]
    if kernel is not None:
        ranked, begin = kernel(work, speeds)
    else:
        ranked, begin = _earliest_free_python(work.tolist(), speeds.tolist())
    if sequence is None:
        device_of, start = by_rank[ranked], begin
    else:
        device_of, start = np.empty(n, dtype=int), np.empty(n)
        device_of[sequence], start[sequence] = by_rank[ranked], begin
    # Dividing (not multiplying by 1/speed) keeps every float identical to the article's free_at + work / speed.
    return device_of, start, start + prob.graph.work / device_speeds[device_of]


def _earliest_free_python(work: list[float], speeds: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """The pure-Python twin of the numba kernel: one heapreplace per task, ties to the lower device number."""
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


def _events(prob: _Problem, position: np.ndarray, fifo: bool, release: np.ndarray | None, overhead: float,
            rank: Sequence[int], handover: tuple[np.ndarray, np.ndarray] | None = None):
    """The engine's event loop: free devices take ready tasks, then time jumps to the next task end or release."""
    g, costs = prob.graph, prob.costs
    n = prob.n
    device_of, start, end = np.full(n, -1), np.zeros(n), np.zeros(n)
    released = np.zeros(n) if release is None else release
    missing = [len(p) for p in g.preds]
    ready: list[tuple[float, int, int]] = []       # (time it became ready if fifo else 0, position, task)
    waiting: list[tuple[float, int, int]] = []     # inputs done, not yet released: (release, position, task)
    free = [(rank[j], j) for j in range(prob.m)]   # devices free now, best rank first
    heapq.heapify(free)
    running: list[tuple[float, int, int]] = []     # (end, device, task)
    ready_at, free_at = np.zeros(n), np.full(prob.m, -math.inf)     # for handover: -inf, the device ran nothing

    def becomes_ready(i: int, now: float) -> None:
        ready_at[i] = max(now, released[i])
        if released[i] > now:
            heapq.heappush(waiting, (released[i], position[i], i))
        else:
            heapq.heappush(ready, (now if fifo else 0.0, position[i], i))

    for i in range(n):
        if missing[i] == 0:
            becomes_ready(i, 0.0)
    now = 0.0
    while True:
        while ready and free:
            _, _, i = heapq.heappop(ready)
            _, j = heapq.heappop(free)
            if handover is None:
                s = now + overhead
            else:               # now is the later of the two: when the task became ready, when the device freed
                s = now + (handover[1][i] if ready_at[i] < free_at[j] else handover[0][i])
            if g.preds[i]:
                s = max(s, prob.ready_on(i, j, device_of, end))
            device_of[i], start[i], end[i] = j, s, s + costs[i, j]
            heapq.heappush(running, (end[i], j, i))
        if not running and not waiting:
            return device_of, start, end
        now = min(running[0][0] if running else math.inf, waiting[0][0] if waiting else math.inf)
        # Every task ending now frees its device before anything starts, so ties see every free device.
        while running and running[0][0] <= now:
            _, j, i = heapq.heappop(running)
            free_at[j] = now
            heapq.heappush(free, (rank[j], j))
            for k in g.succs[i]:
                missing[k] -= 1
                if missing[k] == 0:
                    becomes_ready(k, now)
        while waiting and waiting[0][0] <= now:
            _, _, i = heapq.heappop(waiting)
            heapq.heappush(ready, (now if fifo else 0.0, position[i], i))


def execute_plan(graph: TaskGraph | Sequence[Task], devices: Sequence[Device],
                 sequences: Mapping[str, Sequence[str]], policy: str = "plan", *,
                 release: Mapping[str, float] | None = None) -> Schedule:
    """Run a static plan: each device executes its listed tasks in that order, each task
    starting as soon as its device is free, its inputs have arrived and it has been released.

    ``sequences`` maps device names to task names; every task must appear exactly once.
    ``release`` maps task names to the time they are ordered (absent: 0), as in :func:`central_queue`.
    Raises ``ValueError`` if the plan deadlocks (a device waits on a task queued behind it).

    >>> from hetlab.devices import identical
    >>> from hetlab.tasks import Task, TaskGraph
    >>> g = TaskGraph([Task("a", 2), Task("b", 1), Task("c", 1)], [("a", "c")])
    >>> s = execute_plan(g, identical(2), {"D0": ["b", "c"], "D1": ["a"]})
    >>> s.start.tolist(), s.makespan                  # c waits for a on the other device
    ([0.0, 0.0, 2.0], 3.0)
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
    return _run_queues(prob, device_of, queues, policy, release=_release_times(g, release))


def _list_schedule(prob: _Problem, priority: np.ndarray, policy: str, **kwargs) -> Schedule:
    """Among ready tasks take the one with the highest priority (ties: lower index) and put it
    on the device where it finishes earliest (ties: earlier-listed device), after its last task.
    (HEFT's insertion-based variant lives in :mod:`hetlab.schedulers.heft`.)"""
    g, n, m, costs = prob.graph, prob.n, prob.m, prob.costs
    device_of = np.full(n, -1)
    start = np.zeros(n)
    end = np.zeros(n)
    free = np.zeros(m)
    for i in _by_priority(g, priority):
        arrive = prob.ready_times(i, device_of, end)
        begin = np.maximum(free, arrive)
        j = int(np.argmin(begin + costs[i]))
        s = float(begin[j])
        free[j] = s + costs[i, j]
        device_of[i], start[i], end[i] = j, s, s + costs[i, j]
    return prob.schedule(device_of, start, end, policy, **kwargs)


def _by_priority(graph: TaskGraph, priority) -> Iterable[int]:
    """Task indices in list-scheduling order: each time, the ready task (all predecessors already
    yielded) with the highest ``priority``, ties to the lower index. Used by the priority list
    scheduler above (EFT's list and LPT's)."""
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

    >>> from hetlab.devices import kitchen
    >>> from hetlab.tasks import independent_tasks
    >>> s = eft(independent_tasks([10, 20, 15, 8]), kitchen())    # 8 finishes first on the idle CPU (0.8)
    >>> [s.devices[j].name for j in s.device_of], round(s.makespan, 2)
    (['GPU', 'NPU', 'GPU', 'CPU'], 1.33)
    """
    prob = _problem(graph, devices)
    if order is None:
        priority = -np.arange(prob.n, dtype=float)
        priority[np.asarray(prob.graph.order, dtype=int)] = -np.arange(prob.n, dtype=float)
    else:
        priority = -_order_positions(prob.graph, order).astype(float)
    return _list_schedule(prob, priority, "EFT")


def _order_positions(graph: TaskGraph, order, *, dependencies: bool = True) -> np.ndarray:
    """Position of each task in ``order`` (task names); every task exactly once, and with
    ``dependencies`` every predecessor before its successors."""
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
    if dependencies:
        for (src, dst) in graph.edges:
            if position[graph.index[src]] > position[graph.index[dst]]:
                raise ValueError(f"order must respect the dependencies: {dst!r} comes before its "
                                 f"predecessor {src!r}")
    return position


def lpt(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Longest processing time first (Graham 1969): ready tasks in decreasing order of their
    fastest run time, each to its earliest-finish device. On m identical devices and
    independent tasks its makespan is at most (4/3 - 1/(3m)) times the optimum.

    >>> from hetlab.devices import identical
    >>> from hetlab.tasks import independent_tasks
    >>> lpt(independent_tasks([5, 5, 4, 4, 3, 3, 3]), identical(3)).makespan   # Graham's example: optimum 9
    11.0
    """
    prob = _problem(graph, devices)
    return _list_schedule(prob, prob.costs.min(axis=1), "LPT")
