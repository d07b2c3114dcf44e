"""Scheduling policies: one function each, all called as ``policy(graph, devices, **options)``.

Every policy accepts a :class:`~hetlab.tasks.TaskGraph` (or a list of independent
:class:`~hetlab.tasks.Task`) and a sequence of :class:`~hetlab.devices.Device`, and
returns a :class:`~hetlab.schedule.Schedule`. Run times come from
:func:`~hetlab.tasks.execution_time`; an edge between tasks on different devices
costs the transfer time of its data, an edge on one device costs nothing.

>>> from hetlab.devices import kitchen
>>> from hetlab.tasks import TaskGraph, Task
>>> tasks = [Task(f"t{i}", w) for i, w in enumerate([10, 20, 15, 8, 12, 25, 18, 6])]
>>> round(article_demo(tasks, kitchen()).makespan, 2)
2.67
>>> round(lpt(tasks, kitchen()).makespan, 2)
2.6
"""
from __future__ import annotations

import bisect
import heapq
import math
import random
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import _kernels
from ._validate import check_int, check_nonnegative
from .devices import Device, check_devices
from .schedule import Schedule
from .tasks import Task, TaskGraph, as_graph, comm_matrices, cost_matrix, critical_path

__all__ = [
    "serial", "article_demo", "earliest_free", "round_robin", "block", "by_affinity", "eft", "lpt",
    "work_stealing", "heft", "upward_rank", "optimal", "execute_plan", "lower_bound", "StealEvent",
    "POLICIES",
]


@dataclass(frozen=True)
class _Problem:
    graph: TaskGraph
    devices: tuple[Device, ...]
    latency: np.ndarray        # (devices, devices)
    inverse_bw: np.ndarray     # (devices, devices)

    @cached_property
    def costs(self) -> np.ndarray:
        """(tasks, devices) run times, built on first use."""
        return cost_matrix(self.graph, self.devices)

    @property
    def speed_only(self) -> bool:
        """True when run time is work / speed (no explicit times, no operation kinds)."""
        return self.graph.speed_only

    @property
    def n(self) -> int:
        return len(self.graph.tasks)

    @property
    def m(self) -> int:
        return len(self.devices)

    def ready_times(self, i: int, device_of: np.ndarray, end: np.ndarray) -> np.ndarray:
        """When task i's inputs can be on each device: max over preds of end + transfer."""
        preds = self.graph.preds[i]
        if not preds:
            return np.zeros(self.m)
        p = np.asarray(preds)
        d = device_of[p]
        data = np.asarray(self.graph.pred_data[i])
        arrive = end[p][:, None] + self.latency[d] + data[:, None] * self.inverse_bw[d]
        return arrive.max(axis=0)

    def ready_on(self, i: int, device: int, device_of, end) -> float:
        """When task i's inputs can be on one device."""
        ready = 0.0
        lat, inv = self.latency, self.inverse_bw
        for p, data in zip(self.graph.preds[i], self.graph.pred_data[i]):
            dp = device_of[p]
            t = end[p] + lat[dp, device] + data * inv[dp, device]
            if t > ready:
                ready = t
        return ready

    def schedule(self, device_of, start, end, policy: str, **kwargs) -> Schedule:
        return Schedule(self.graph, self.devices, device_of, start, end, policy, **kwargs)


def _problem(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> _Problem:
    graph = as_graph(graph)
    devices = check_devices(devices)
    latency, inverse = comm_matrices(devices)
    prob = _Problem(graph, devices, latency, inverse)
    if graph.has_times:
        fastest = prob.costs.min(axis=1)
        if not np.isfinite(fastest).all():
            i = int(np.flatnonzero(~np.isfinite(fastest))[0])
            raise ValueError(f"task {graph.tasks[i].name!r} cannot run on any of the devices given")
    return prob


def _device_index(devices: Sequence[Device], name: str | None, default: int = 0) -> int:
    if name is None:
        return default
    names = [d.name for d in devices]
    if name not in names:
        raise ValueError(f"device must be one of {names}, got {name!r}")
    return names.index(name)


# --- executing a fixed plan ---------------------------------------------------------------------

def execute_plan(graph: TaskGraph | Sequence[Task], devices: Sequence[Device],
                 sequences: Mapping[str, Sequence[str]], policy: str = "plan") -> Schedule:
    """Run a static plan: each device executes its listed tasks in that order, each task
    starting as soon as its device is free and its inputs have arrived.

    ``sequences`` maps device names to task names; every task must appear exactly once.
    Raises ``ValueError`` if the plan deadlocks (a device waits on a task queued behind it).
    """
    prob = _problem(graph, devices)
    g = prob.graph
    dev_index = {d.name: j for j, d in enumerate(prob.devices)}
    device_of = np.full(prob.n, -1)
    queues: list[list[int]] = [[] for _ in range(prob.m)]
    for name, seq in sequences.items():
        if name not in dev_index:
            raise ValueError(f"sequences names unknown device {name!r}")
        for task in seq:
            if task not in g.index:
                raise ValueError(f"sequences names unknown task {task!r}")
            i = g.index[task]
            if device_of[i] != -1:
                raise ValueError(f"task {task!r} appears twice in sequences")
            device_of[i] = dev_index[name]
            queues[dev_index[name]].append(i)
    if (device_of == -1).any():
        raise ValueError(f"task {g.tasks[int(np.flatnonzero(device_of == -1)[0])].name!r} is in no sequence")
    return _run_queues(prob, device_of, queues, policy)


def _run_queues(prob: _Problem, device_of: np.ndarray, queues: list[list[int]], policy: str) -> Schedule:
    n, g = prob.n, prob.graph
    costs = prob.costs
    start = np.zeros(n)
    end = np.zeros(n)
    if not g.edges:
        # Independent tasks: each device runs its queue back to back.
        for j, queue in enumerate(queues):
            if queue:
                q = np.asarray(queue)
                durations = costs[q, j]
                end[q] = np.cumsum(durations)
                start[q] = end[q] - durations
        return prob.schedule(device_of, start, end, policy)
    # Kahn's algorithm over dependency edges plus "next on the same device" edges.
    missing = [len(p) for p in g.preds]
    position = [0] * prob.m
    free = [0.0] * prob.m
    done = [False] * n
    head_ready = deque(j for j in range(prob.m) if queues[j] and missing[queues[j][0]] == 0)
    finished = 0
    while head_ready:
        j = head_ready.popleft()
        i = queues[j][position[j]]
        s = max(free[j], prob.ready_on(i, j, device_of, end))
        start[i], end[i] = s, s + costs[i, j]
        free[j] = end[i]
        done[i] = True
        finished += 1
        position[j] += 1
        if position[j] < len(queues[j]) and missing[queues[j][position[j]]] == 0:
            head_ready.append(j)
        for k in g.succs[i]:
            missing[k] -= 1
            jk = device_of[k]
            if missing[k] == 0 and position[jk] < len(queues[jk]) and queues[jk][position[jk]] == k:
                head_ready.append(jk)
    if finished < n:
        stuck = [g.tasks[q[position[j]]].name for j, q in enumerate(queues) if position[j] < len(q)]
        raise ValueError(f"plan deadlocks: devices wait on tasks queued behind them (heads: {stuck})")
    return prob.schedule(device_of, start, end, policy)


def _assign_in_order(prob: _Problem, device_of: np.ndarray, policy: str) -> Schedule:
    queues: list[list[int]] = [[] for _ in range(prob.m)]
    for i in prob.graph.order:
        queues[device_of[i]].append(i)
    return _run_queues(prob, device_of, queues, policy)


# --- static policies ------------------------------------------------------------------------------

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


def _check_runnable(prob: _Problem, device_of: np.ndarray) -> None:
    times = prob.costs[np.arange(prob.n), device_of]
    if not np.isfinite(times).all():
        i = int(np.flatnonzero(~np.isfinite(times))[0])
        raise ValueError(f"static policy put task {prob.graph.tasks[i].name!r} on "
                         f"{prob.devices[device_of[i]].name!r}, which cannot run it")


# --- dynamic list scheduling -------------------------------------------------------------------

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
        device_of[i], start[i], end[i] = j, free_at, free_at + prob.costs[i, j]
        heapq.heappush(heap, (end[i], dev))
    return prob.schedule(device_of, start, end, "article demo",
                         info={"preference_reroutes": reroutes, "trace": trace})


#: Inputs at least this large use a compiled kernel when numba is installed (``hetlab[fast]``).
COMPILED_FROM = 20_000


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
    ``compiled``: use the numba kernel (None: when installed and the graph has at least
    :data:`COMPILED_FROM` tasks; True: require it); both paths give identical schedules.
    """
    prob = _problem(graph, devices)
    n, m = prob.n, prob.m
    if not prob.speed_only and not np.isfinite(prob.costs).all():
        raise ValueError("earliest_free needs every task to run on every device")
    if not prob.graph.edges and prob.speed_only:
        # Hot loop for the common case: run time is work / speed, so no (n x m) cost matrix.
        # One heapreplace per task; dividing (not multiplying by 1/speed) keeps every float
        # identical to the article's ``free_at + work / speed``.
        # Importing numba costs a few tenths of a second: only for large inputs, or when asked.
        wanted = compiled is True or (compiled is None and n >= COMPILED_FROM)
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


def _list_schedule(prob: _Problem, priority: np.ndarray, policy: str, insertion: bool = False,
                   **kwargs) -> Schedule:
    """Among ready tasks take the one with the highest priority (ties: lower index) and put it
    on the device where it finishes earliest (ties: earlier-listed device)."""
    g, n, m, costs = prob.graph, prob.n, prob.m, prob.costs
    device_of = np.full(n, -1)
    start = np.zeros(n)
    end = np.zeros(n)
    free = np.zeros(m)
    slots_start: list[list[float]] = [[] for _ in range(m)]
    slots_end: list[list[float]] = [[] for _ in range(m)]
    missing = [len(p) for p in g.preds]
    ready = [(-float(priority[i]), i) for i in range(n) if missing[i] == 0]
    heapq.heapify(ready)
    while ready:
        _, i = heapq.heappop(ready)
        arrive = prob.ready_times(i, device_of, end)
        if insertion:
            best_finish, best_j, best_s = math.inf, -1, 0.0
            for j in range(m):
                c = costs[i, j]
                if not math.isfinite(c):
                    continue
                s = _earliest_gap(slots_start[j], slots_end[j], float(arrive[j]), c)
                if s + c < best_finish:
                    best_finish, best_j, best_s = s + c, j, s
            j, s = best_j, best_s
            k = bisect.bisect_left(slots_start[j], s)
            slots_start[j].insert(k, s)
            slots_end[j].insert(k, s + costs[i, j])
        else:
            begin = np.maximum(free, arrive)
            j = int(np.argmin(begin + costs[i]))
            s = float(begin[j])
            free[j] = s + costs[i, j]
        device_of[i], start[i], end[i] = j, s, s + costs[i, j]
        for k in g.succs[i]:
            missing[k] -= 1
            if missing[k] == 0:
                heapq.heappush(ready, (-float(priority[k]), k))
    return prob.schedule(device_of, start, end, policy, **kwargs)


def _earliest_gap(starts: list[float], ends: list[float], ready: float, duration: float) -> float:
    """Earliest time >= ready at which [t, t + duration] fits between a device's busy slots."""
    k = bisect.bisect_right(ends, ready)
    t = ready
    for a, b in zip(starts[k:], ends[k:]):
        if t + duration <= a:
            return t
        if b > t:
            t = b
    return t


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
        names = list(order)
        if sorted(names) != sorted(t.name for t in prob.graph.tasks):
            raise ValueError("order must list every task exactly once")
        priority = np.empty(prob.n)
        for rank, name in enumerate(names):
            priority[prob.graph.index[name]] = -rank
    return _list_schedule(prob, priority, "EFT")


def lpt(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Longest processing time first (Graham 1969): ready tasks in decreasing order of their
    fastest run time, each to its earliest-finish device. On m identical devices and
    independent tasks its makespan is at most (4/3 - 1/(3m)) times the optimum.
    """
    prob = _problem(graph, devices)
    return _list_schedule(prob, prob.costs.min(axis=1), "LPT")


def upward_rank(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> dict[str, float]:
    """HEFT's upward rank: ``rank(i) = mean_cost(i) + max over successors (mean_comm(i, s) + rank(s))``,
    with costs averaged over the devices that can run the task and transfers over ordered pairs
    of distinct devices (Topcuoglu, Hariri & Wu 2002)."""
    prob = _problem(graph, devices)
    ranks = _upward_rank(prob)
    return {t.name: float(r) for t, r in zip(prob.graph.tasks, ranks)}


def _upward_rank(prob: _Problem) -> np.ndarray:
    costs = prob.costs
    finite = np.isfinite(costs)
    mean_cost = np.where(finite, costs, 0.0).sum(axis=1) / finite.sum(axis=1)
    m = prob.m
    if m > 1:
        off = ~np.eye(m, dtype=bool)
        mean_latency = prob.latency[off].mean()
        mean_inverse = prob.inverse_bw[off].mean()
    else:
        mean_latency = mean_inverse = 0.0
    rank = mean_cost.copy()
    g = prob.graph
    for i in reversed(g.order):
        best = 0.0
        for s, data in zip(g.succs[i], g.succ_data[i]):
            value = mean_latency + data * mean_inverse + rank[s]
            if value > best:
                best = value
        rank[i] = mean_cost[i] + best
    return rank


def heft(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Heterogeneous Earliest Finish Time (Topcuoglu, Hariri & Wu, IEEE TPDS 2002).

    Tasks in decreasing upward rank (:func:`upward_rank`); each goes to the device that gives
    the earliest finish time, allowed to fill an idle gap between already placed tasks
    (insertion-based). ``info["upward_rank"]`` holds the ranks.
    """
    prob = _problem(graph, devices)
    rank = _upward_rank(prob)
    ranks = {t.name: float(r) for t, r in zip(prob.graph.tasks, rank)}
    return _list_schedule(prob, rank, "HEFT", insertion=True, info={"upward_rank": ranks})


# --- work stealing ------------------------------------------------------------------------------

@dataclass(frozen=True)
class StealEvent:
    """At ``time`` device ``thief`` tried to steal from ``victim``; ``task`` is what it got (None: nothing)."""

    time: float
    thief: str
    victim: str
    task: str | None


def work_stealing(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
                  steal_latency: float = 0.0, seed: int | None = 0, initial: str = "round_robin") -> Schedule:
    """Randomised work stealing as a discrete-event simulation (Blumofe & Leiserson 1999).

    Each device owns a deque. Ready tasks are dealt to the deques (``initial``:
    ``"round_robin"``, ``"block"`` or ``"first"``: all on the first device); a finished
    task's newly ready successors go to the bottom of its device's deque. An owner pops
    from the bottom (newest first); an idle device picks a victim uniformly at random
    (seeded) and, ``steal_latency`` later, takes the task at the top (oldest) of the
    victim's deque, or tries again if it was empty. When no deque holds any task, idle
    devices wait until one is pushed. ``log`` lists every steal attempt as :class:`StealEvent`;
    ``info`` counts ``steals``, ``failed_steals`` and ``events``.
    """
    prob = _problem(graph, devices)
    steal_latency = check_nonnegative("steal_latency", steal_latency)
    if initial not in ("round_robin", "block", "first"):
        raise ValueError(f"initial must be 'round_robin', 'block' or 'first', got {initial!r}")
    g, n, m, costs = prob.graph, prob.n, prob.m, prob.costs
    if not np.isfinite(costs).all():
        raise ValueError("work_stealing needs every task to run on every device")
    rng = random.Random(seed)
    names = [d.name for d in prob.devices]
    cost_rows = costs.tolist()
    deques = [deque() for _ in range(m)]
    roots = [i for i in g.order if not g.preds[i]]
    for k, i in enumerate(roots):
        j = {"round_robin": k % m, "block": (k * m) // max(len(roots), 1), "first": 0}[initial]
        deques[j].append(i)
    queued = len(roots)
    device_of = [0] * n
    start = [0.0] * n
    end = [0.0] * n
    missing = [len(p) for p in g.preds]
    has_edges = bool(g.edges)
    log: list[StealEvent] = []
    events: list[tuple[float, int, int, int, int]] = []  # (time, seq, kind, device, payload)
    FREE, FINISH, STEAL = 0, 1, 2
    seq = 0
    for j in range(m):
        events.append((0.0, seq, FREE, j, -1))
        seq += 1
    parked: list[int] = []
    n_events = steals = failed = 0
    push, pop = heapq.heappush, heapq.heappop

    def run(i: int, j: int, t: float) -> None:
        nonlocal seq
        s = max(t, prob.ready_on(i, j, device_of, end)) if has_edges else t
        device_of[i], start[i] = j, s
        end[i] = s + cost_rows[i][j]
        push(events, (end[i], seq, FINISH, j, i))
        seq += 1

    while events:
        t, _, kind, j, payload = pop(events)
        n_events += 1
        if kind == FINISH:
            for k in g.succs[payload]:
                missing[k] -= 1
                if missing[k] == 0:
                    deques[j].append(k)
                    queued += 1
            while parked and queued:
                push(events, (t, seq, FREE, parked.pop(), -1))
                seq += 1
            kind = FREE
        elif kind == STEAL:
            victim_deque = deques[payload]
            if victim_deque:
                i = victim_deque.popleft()
                queued -= 1
                steals += 1
                log.append(StealEvent(t, names[j], names[payload], g.tasks[i].name))
                run(i, j, t)
                continue
            failed += 1
            log.append(StealEvent(t, names[j], names[payload], None))
            kind = FREE
        # The device is free at time t.
        own = deques[j]
        if own:
            queued -= 1
            run(own.pop(), j, t)
        elif queued and m > 1:
            victim = rng.randrange(m - 1)
            victim += victim >= j
            push(events, (t + steal_latency, seq, STEAL, j, victim))
            seq += 1
        else:
            parked.append(j)
    info = {"steals": steals, "failed_steals": failed, "events": n_events}
    return prob.schedule(np.array(device_of), np.array(start), np.array(end), "work stealing",
                         log=tuple(log), info=info)


# --- bounds and the exact optimum ------------------------------------------------------------

def lower_bound(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> float:
    """A bound no schedule can beat: the largest of the critical path (fastest run times, free
    transfers), the longest single task at its fastest, and the fastest-time area per device
    (``sum_i min_d t_id / m``; for devices of different speed, total work over total speed)."""
    prob = _problem(graph, devices)
    if prob.n == 0:
        return 0.0
    fastest = prob.costs.min(axis=1)
    path, _ = critical_path(prob.graph, prob.devices)
    bound = max(path, float(fastest.max()), float(fastest.sum()) / prob.m)
    if prob.speed_only:
        bound = max(bound, float(prob.graph.work.sum()) / sum(d.speed for d in prob.devices))
    return bound


def optimal(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, max_tasks: int = 12,
            node_limit: int = 2_000_000) -> Schedule:
    """The exact minimum-makespan schedule, by depth-first branch and bound (small instances only).

    Independent tasks: every assignment of tasks to devices, largest tasks first, pruned by
    the load bound ``max(max load, (sum of loads + remaining fastest times) / m)``.
    Task graphs: every order of ready tasks and device choice, each task started as early as
    its device and inputs allow; any schedule can be shifted left into one of these, so the
    best of them is optimal. ``info["nodes"]`` counts the search nodes; ``ValueError`` when
    the graph has more than ``max_tasks`` tasks or the search exceeds ``node_limit`` nodes.
    """
    prob = _problem(graph, devices)
    max_tasks = check_int("max_tasks", max_tasks, low=1)
    if prob.n > max_tasks:
        raise ValueError(f"optimal searches exhaustively; graph has {prob.n} tasks, max_tasks is {max_tasks}")
    if prob.n == 0:
        return prob.schedule([], [], [], "optimal", info={"nodes": 0})
    incumbent = min((lpt(prob.graph, prob.devices), heft(prob.graph, prob.devices)), key=lambda s: s.makespan)
    if prob.graph.edges:
        device_of, start, end, nodes = _optimal_dag(prob, incumbent, node_limit)
    else:
        device_of, start, end, nodes = _optimal_independent(prob, incumbent, node_limit)
    return prob.schedule(device_of, start, end, "optimal", info={"nodes": nodes})


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

    def search(k: int, current: float) -> None:
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
                search(k + 1, span)
            loads[j] -= c

    search(0, 0.0)
    device_of = np.empty(n, dtype=int)
    device_of[order] = best[1]
    queues = [[i for i in range(n) if device_of[i] == j] for j in range(m)]
    return _finish(prob, device_of, queues, nodes)


def _finish(prob: _Problem, device_of, queues, nodes):
    s = _run_queues(prob, device_of, queues, "optimal")
    return s.device_of, s.start, s.end, nodes


def _optimal_dag(prob: _Problem, incumbent: Schedule, node_limit: int):
    # Left-shifting any schedule, task by task in start order, never delays a task; repeating it
    # reaches a schedule that placing tasks in non-decreasing start order reproduces. So the search
    # only extends a partial schedule with tasks that start no earlier than the last one placed.
    g, costs, n, m = prob.graph, prob.costs, prob.n, prob.m
    fastest = costs.min(axis=1)
    bottom = fastest.copy()  # fastest time from a task's start to the graph's end, free transfers
    for i in reversed(g.order):
        bottom[i] = fastest[i] + max((bottom[s] for s in g.succs[i]), default=0.0)
    rows = [costs[i].tolist() for i in range(n)]
    best = [incumbent.makespan * (1 - 1e-12), None]
    device_of = np.full(n, -1)
    start = np.zeros(n)
    end = np.zeros(n)
    free = [0.0] * m
    missing = [len(p) for p in g.preds]
    ready = {i for i in range(n) if missing[i] == 0}
    remaining = [float(fastest.sum())]
    nodes = 0

    def search(current: float, placed: int, last_start: float) -> None:
        nonlocal nodes
        nodes += 1
        if nodes > node_limit:
            raise ValueError(f"optimal exceeded node_limit={node_limit}; use a smaller instance")
        if placed == n:
            if current < best[0]:
                best[0] = current
                best[1] = (device_of.copy(), start.copy(), end.copy())
            return
        if max(current, (sum(free) + remaining[0]) / m) >= best[0]:
            return
        options = []
        for i in ready:
            earliest = math.inf
            for j in range(m):
                c = rows[i][j]
                if c == math.inf:
                    continue
                s = max(free[j], prob.ready_on(i, j, device_of, end))
                earliest = min(earliest, s)
                if s >= last_start:
                    options.append((s + c, i, j, s))
            if max(earliest, last_start) + bottom[i] >= best[0]:
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
            search(max(current, finish), placed + 1, s)
            free[j] = saved
            device_of[i] = -1
            for k in g.succs[i]:
                if missing[k] == 0:
                    ready.discard(k)
                missing[k] += 1
            remaining[0] += fastest[i]
            ready.add(i)

    search(0.0, 0, 0.0)
    if best[1] is None:
        return incumbent.device_of, incumbent.start, incumbent.end, nodes
    return (*best[1], nodes)


POLICIES: dict[str, Callable[..., Schedule]] = {
    "serial": serial,
    "article demo": article_demo,
    "earliest free": earliest_free,
    "round-robin": round_robin,
    "block": block,
    "by affinity": by_affinity,
    "EFT": eft,
    "LPT": lpt,
    "work stealing": work_stealing,
    "HEFT": heft,
    "optimal": optimal,
}
