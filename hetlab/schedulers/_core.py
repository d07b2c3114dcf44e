"""Shared machinery of the schedulers: the problem (costs, links) and running fixed per-device queues."""
from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..devices import Device, check_devices
from ..schedule import Schedule
from ..tasks import Task, TaskGraph, as_graph, comm_matrices, cost_matrix


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


def _check_runnable(prob: _Problem, device_of: np.ndarray) -> None:
    times = prob.costs[np.arange(prob.n), device_of]
    if not np.isfinite(times).all():
        i = int(np.flatnonzero(~np.isfinite(times))[0])
        raise ValueError(f"static policy put task {prob.graph.tasks[i].name!r} on "
                         f"{prob.devices[device_of[i]].name!r}, which cannot run it")

