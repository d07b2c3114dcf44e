"""Shared machinery of the schedulers: the problem (costs, links) and running fixed per-device queues."""
from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from hetlab.devices import Device, check_devices
from hetlab.schedule import Schedule
from hetlab.tasks import Task, TaskGraph, _as_graph, comm_matrices, cost_matrix


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


#: Largest total of run times and transfers a problem may have: every start, end and upward rank
#: is at most this total (times a few), so sums of times never overflow a float.
MAX_HORIZON = 1e300


def _problem(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> _Problem:
    graph = _as_graph(graph, "graph")
    if not graph.tasks:
        raise ValueError("graph must hold at least one task, got none")
    devices = check_devices(devices)
    latency, inverse = comm_matrices(devices)
    prob = _Problem(graph, devices, latency, inverse)
    _check_horizon(prob)
    return prob


def _check_horizon(prob: _Problem) -> None:
    """Refuse problems whose times overflow: each work / speed must be finite, and the sum of every
    task's slowest finite run time plus every edge's dearest transfer must stay below MAX_HORIZON."""
    g = prob.graph
    if not g.tasks:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        if g.speed_only:
            slowest = min(d.speed for d in prob.devices)
            worst = g.work / slowest
            total = float(worst.sum())
            if not np.isfinite(worst).all():
                i = int(np.flatnonzero(~np.isfinite(worst))[0])
                _overflow(g.tasks[i], min(prob.devices, key=lambda d: d.speed))
        else:
            costs = prob.costs
            for i in np.flatnonzero(~np.isfinite(costs).all(axis=1)):
                task = g.tasks[i]
                if task.times is None:  # work / speed overflowed: not "cannot run"
                    _overflow(task, prob.devices[int(np.flatnonzero(~np.isfinite(costs[i]))[0])])
            finite = np.isfinite(costs)
            if not finite.any(axis=1).all():
                i = int(np.flatnonzero(~finite.any(axis=1))[0])
                raise ValueError(f"task {g.tasks[i].name!r} cannot run on any of the devices given "
                                 f"({[d.name for d in prob.devices]})")
            total = float(np.where(finite, costs, 0.0).max(axis=1).sum())
        if g.edges:
            total += len(g.edges) * float(prob.latency.max())
            total += float(sum(g.edges.values())) * float(prob.inverse_bw.max())
    if not total <= MAX_HORIZON:
        raise ValueError(f"graph and devices: the run times and transfers add up to {total:g}, above "
                         f"{MAX_HORIZON:g}, so schedule times would overflow a float; rescale the work, "
                         f"speed or data units")


def _overflow(task: Task, device: Device) -> None:
    raise ValueError(f"task {task.name!r} with work {task.work:g} on device {device.name!r} (speed "
                     f"{device.speed_for(task.op):g}) takes longer than the largest float; rescale the work "
                     f"or speed units")


def _device_index(devices: Sequence[Device], name: str | None, default: int = 0) -> int:
    if name is None:
        return default
    names = [d.name for d in devices]
    if name not in names:
        raise ValueError(f"device must be one of {names}, got {name!r}")
    return names.index(name)



def _run_queues(prob: _Problem, device_of: np.ndarray, queues: list[list[int]], policy: str,
                release: np.ndarray | None = None) -> Schedule:
    """Fixed per-device queues: each device runs its queue in order, each task as soon as the device is
    free, its inputs have arrived and (``release``, one time per task) it has been ordered."""
    n, g = prob.n, prob.graph
    costs = prob.costs
    start = np.zeros(n)
    end = np.zeros(n)
    if not g.edges and release is None:
        # Independent tasks: each device runs its queue back to back.
        for j, queue in enumerate(queues):
            if queue:
                q = np.asarray(queue)
                ends = np.cumsum(costs[q, j])   # sequential sums: ends[k] = ends[k - 1] + duration, rounded
                end[q] = ends
                # Each task starts exactly when the one before ends. ``ends - durations`` rounds too and can
                # land an ulp before the previous end, or at 0 for a tiny task after a huge one.
                start[q[1:]] = ends[:-1]
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
        if release is not None:
            s = max(s, release[i])
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


def _check_runnable(prob: _Problem, device_of: np.ndarray, who: str = "static policy") -> None:
    """ValueError naming the first task placed on a device that cannot run it (no time given for it)."""
    if prob.speed_only:
        return
    times = prob.costs[np.arange(prob.n), device_of]
    if not np.isfinite(times).all():
        i = int(np.flatnonzero(~np.isfinite(times))[0])
        raise ValueError(f"{who} put task {prob.graph.tasks[i].name!r} on device "
                         f"{prob.devices[device_of[i]].name!r}, which cannot run it")
