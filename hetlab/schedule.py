"""The one result type of every scheduler and simulator: a validated :class:`Schedule`.

A schedule says, for every task of a graph, on which device it runs and when.
It knows its makespan, per-device busy time, utilisation, load imbalance
``(W_max - W_avg) / W_avg`` and speed-up against a baseline, and
:meth:`Schedule.validate` checks that it is feasible: every task placed once,
no two tasks overlapping on a device, every dependency and its transfer respected.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from hetlab._validate import check_nonnegative, check_real
from hetlab.devices import Device, check_devices
from hetlab.tasks import TaskGraph, as_device_indices, assigned_costs, comm_matrices

__all__ = ["Placement", "Schedule", "ScheduleError"]

#: Relative rounding :meth:`Schedule.validate` allows on top of ``rtol``: a time computed with a few
#: float operations (a start plus a run time, an end plus a transfer) is within a few units in the last
#: place of the exact value, 8 * 2**-52 of its magnitude at most here.
_ROUNDING = 8 * 2.0 ** -52


class ScheduleError(ValueError):
    """A schedule breaks a rule; the message names the tasks and devices involved."""


@dataclass(frozen=True)
class Placement:
    """Task ``task`` runs on device ``device`` from ``start`` to ``end``.

    >>> Placement("t0", "GPU", 0.0, 1.5)
    Placement(task='t0', device='GPU', start=0.0, end=1.5)
    """

    task: str
    device: str
    start: float
    end: float

    def __post_init__(self) -> None:
        for name in ("task", "device"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise TypeError(f"{name} must be a non-empty string, got {type(value).__name__} {value!r}")
        for name in ("start", "end"):
            value = check_real(name, getattr(self, name))
            if not 0 <= value < math.inf:
                raise ValueError(f"{name} must be in [0, inf), got {value!r}")
            object.__setattr__(self, name, value)
        if self.end < self.start:
            raise ValueError(f"end must be >= start ({self.start!r}), got {self.end!r}")


@dataclass(frozen=True, eq=False)
class Schedule:
    """Where and when every task of ``graph`` runs.

    ``device_of[i]``, ``start[i]`` and ``end[i]`` describe task ``graph.tasks[i]``.
    ``policy`` names the scheduler; ``log`` holds policy events (e.g. work-stealing steals);
    ``info`` holds policy-specific figures (e.g. HEFT's upward ranks).

    >>> from hetlab.devices import identical
    >>> from hetlab.tasks import independent_tasks
    >>> s = Schedule(independent_tasks([4.0, 2.0, 2.0]), identical(2), [0, 1, 1], [0.0, 0.0, 2.0], [4.0, 2.0, 4.0])
    >>> s
    Schedule(policy='', tasks=3, devices=2, makespan=4)
    """

    graph: TaskGraph
    devices: tuple[Device, ...]
    device_of: np.ndarray
    start: np.ndarray
    end: np.ndarray
    policy: str = ""
    log: Sequence = ()
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.graph, TaskGraph):
            raise TypeError(f"graph must be a TaskGraph, got {type(self.graph).__name__}")
        object.__setattr__(self, "devices", check_devices(self.devices))
        n, m = len(self.graph.tasks), len(self.devices)
        try:
            device_of = as_device_indices(self.device_of, n, m)
        except ValueError as error:
            raise ScheduleError(str(error)) from None
        device_of.setflags(write=False)
        object.__setattr__(self, "device_of", device_of)
        for name in ("start", "end"):
            value = getattr(self, name)
            if isinstance(value, (str, bytes)) or value is None:
                raise TypeError(f"{name} must be a sequence of times, got {value!r}")
            try:
                arr = np.array(value, dtype=float)
            except (TypeError, ValueError):
                raise TypeError(f"{name} must be a sequence of real times, got {type(value).__name__}") from None
            if arr.shape != (n,):
                raise ScheduleError(f"{name} must have one entry per task ({n}), got shape {arr.shape}")
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if not isinstance(self.policy, str):
            raise TypeError(f"policy must be a string, got {type(self.policy).__name__} {self.policy!r}")
        if isinstance(self.log, (str, bytes)) or not isinstance(self.log, Sequence):
            raise TypeError(f"log must be a tuple of policy events, got {type(self.log).__name__} {self.log!r:.80}")
        if isinstance(self.log, list):   # a tuple or a read-only sequence (work stealing's lazy log) stays
            object.__setattr__(self, "log", tuple(self.log))
        if not isinstance(self.info, Mapping):
            raise TypeError(f"info must be a mapping, got {type(self.info).__name__}")

    # --- the figures of merit -------------------------------------------------------------
    @property
    def makespan(self) -> float:
        """Time at which the last task ends (0 for an empty graph).

        >>> from hetlab.devices import identical
        >>> from hetlab.tasks import independent_tasks
        >>> s = Schedule(independent_tasks([4.0, 2.0, 2.0]), identical(2), [0, 1, 1], [0.0, 0.0, 2.0], [4.0, 2.0, 4.0])
        >>> s.makespan
        4.0
        """
        return float(self.end.max()) if len(self.end) else 0.0

    @cached_property
    def busy(self) -> np.ndarray:
        """Busy time of each device (sum of its tasks' run times).

        >>> from hetlab.devices import identical
        >>> from hetlab.tasks import independent_tasks
        >>> s = Schedule(independent_tasks([4.0, 2.0, 2.0]), identical(2), [0, 1, 1], [0.0, 0.0, 2.0], [4.0, 2.0, 4.0])
        >>> s.busy.tolist()
        [4.0, 4.0]
        """
        return np.bincount(self.device_of, weights=self.end - self.start, minlength=len(self.devices))

    @property
    def utilisation(self) -> np.ndarray:
        """Fraction of the makespan each device spends busy.

        >>> from hetlab.devices import identical
        >>> from hetlab.tasks import independent_tasks
        >>> s = Schedule(independent_tasks([4.0, 2.0]), identical(2), [0, 1], [0.0, 0.0], [4.0, 2.0])
        >>> s.utilisation.tolist()
        [1.0, 0.5]
        """
        span = self.makespan
        return self.busy / span if span > 0 else np.zeros(len(self.devices))

    @property
    def imbalance(self) -> float:
        """Load imbalance ``(W_max - W_avg) / W_avg`` over the devices' busy times.

        >>> from hetlab.devices import identical
        >>> from hetlab.tasks import independent_tasks
        >>> s = Schedule(independent_tasks([4.0, 2.0]), identical(2), [0, 1], [0.0, 0.0], [4.0, 2.0])
        >>> s.imbalance                  # (4 - 3) / 3
        0.3333333333333333
        """
        from hetlab.formulas import imbalance

        return imbalance(self.busy)

    @property
    def energy(self) -> float:
        """Energy of the busy time, ``sum_d busy_d * power_d`` (joules when time is in seconds).

        >>> from hetlab.devices import Device
        >>> from hetlab.tasks import independent_tasks
        >>> pair = [Device("A", power_watts=100.0), Device("B", power_watts=50.0)]
        >>> Schedule(independent_tasks([4.0, 2.0]), pair, [0, 1], [0.0, 0.0], [4.0, 2.0]).energy   # 4*100 + 2*50
        500.0
        """
        return float(self.busy @ np.array([d.power_watts for d in self.devices]))

    def speedup(self, baseline: Schedule | float) -> float:
        """``T_baseline / T_this``; the baseline is another schedule (e.g. serial) or a time.

        >>> from hetlab.devices import identical
        >>> from hetlab.tasks import independent_tasks
        >>> s = Schedule(independent_tasks([4.0, 2.0, 2.0]), identical(2), [0, 1, 1], [0.0, 0.0, 2.0], [4.0, 2.0, 4.0])
        >>> s.speedup(8.0)               # 8 time units on one device, 4 here
        2.0
        """
        if isinstance(baseline, Schedule):
            base = baseline.makespan
        else:
            base = check_nonnegative("baseline", baseline)
        if not (math.isfinite(self.makespan) and self.makespan > 0):
            raise ValueError(f"speed-up needs a makespan in (0, inf), this schedule's is {self.makespan!r}")
        return base / self.makespan

    def efficiency(self, baseline: Schedule | float) -> float:
        """Speed-up per device, ``E = S / N``.

        >>> from hetlab.devices import identical
        >>> from hetlab.tasks import independent_tasks
        >>> s = Schedule(independent_tasks([4.0, 2.0, 2.0]), identical(2), [0, 1, 1], [0.0, 0.0, 2.0], [4.0, 2.0, 4.0])
        >>> s.efficiency(8.0)            # speed-up 2 on 2 devices
        1.0
        """
        return self.speedup(baseline) / len(self.devices)

    def placements(self) -> list[Placement]:
        """One :class:`Placement` per task, sorted by start time then device.

        >>> from hetlab.devices import identical
        >>> from hetlab.tasks import independent_tasks
        >>> s = Schedule(independent_tasks([4.0, 2.0, 2.0]), identical(2), [0, 1, 1], [0.0, 0.0, 2.0], [4.0, 2.0, 4.0])
        >>> [(p.task, p.device, p.start) for p in s.placements()]
        [('T0', 'D0', 0.0), ('T1', 'D1', 0.0), ('T2', 'D1', 2.0)]
        """
        order = np.lexsort((self.device_of, self.start))
        names = [d.name for d in self.devices]
        return [Placement(self.graph.tasks[i].name, names[self.device_of[i]], float(self.start[i]),
                          float(self.end[i])) for i in order]

    def placement(self, task: str) -> Placement:
        """Where and when ``task`` runs.

        >>> from hetlab.devices import identical
        >>> from hetlab.tasks import independent_tasks
        >>> s = Schedule(independent_tasks([4.0, 2.0, 2.0]), identical(2), [0, 1, 1], [0.0, 0.0, 2.0], [4.0, 2.0, 4.0])
        >>> s.placement("T2")
        Placement(task='T2', device='D1', start=2.0, end=4.0)
        """
        i = self.graph._position(task, "task")
        return Placement(task, self.devices[self.device_of[i]].name, float(self.start[i]), float(self.end[i]))

    def tasks_on(self, device: str) -> list[str]:
        """Names of the tasks on ``device`` in start order.

        >>> from hetlab.devices import identical
        >>> from hetlab.tasks import independent_tasks
        >>> s = Schedule(independent_tasks([4.0, 2.0, 2.0]), identical(2), [0, 1, 1], [0.0, 0.0, 2.0], [4.0, 2.0, 4.0])
        >>> s.tasks_on("D1")
        ['T1', 'T2']
        """
        names = [d.name for d in self.devices]
        if device not in names:
            raise ValueError(f"device must be one of {names}, got {device!r}")
        j = names.index(device)
        idx = np.flatnonzero(self.device_of == j)
        return [self.graph.tasks[i].name for i in idx[np.argsort(self.start[idx], kind="stable")]]

    def summary(self, baseline: Schedule | float | None = None) -> str:
        """One line: policy, makespan, speed-up (if a baseline is given), imbalance.

        >>> from hetlab.devices import identical
        >>> from hetlab.tasks import independent_tasks
        >>> s = Schedule(independent_tasks([4.0, 2.0, 2.0]), identical(2), [0, 1, 1], [0.0, 0.0, 2.0], [4.0, 2.0, 4.0])
        >>> s.summary(8.0)
        'schedule: makespan 4.00, speed-up 2.00x, imbalance 0.00'
        """
        text = f"{self.policy or 'schedule'}: makespan {self.makespan:.2f}"
        if baseline is not None:
            text += f", speed-up {self.speedup(baseline):.2f}x"
        return text + f", imbalance {self.imbalance:.2f}"

    def __repr__(self) -> str:
        return (f"Schedule(policy={self.policy!r}, tasks={len(self.graph.tasks)}, "
                f"devices={len(self.devices)}, makespan={self.makespan:.4g})")

    # --- feasibility --------------------------------------------------------------------------
    def validate(self, *, check_durations: bool = True, rtol: float = 1e-9) -> Schedule:
        """Check the schedule is feasible and return it; raise :class:`ScheduleError` if not.

        - every task is placed once, on a real device, with ``end >= start >= 0``;
        - with ``check_durations``, each run time matches the task's time on its device
          (turn off for measured runs);
        - no two tasks of positive run time overlap on one device (a zero-length run may touch or
          sit inside another);
        - each task starts after each predecessor ends plus the transfer between their devices.

        Every tolerance is local to the quantities compared, so one long task elsewhere never
        widens it: a run time may differ from the task's by ``rtol`` times that run time, two runs
        may overlap by ``rtol`` times the shorter one, a task may start ``rtol`` times its transfer
        early; on top, each comparison allows the rounding of the times it compares
        (8 units in the last place of their magnitude).

        >>> from hetlab.devices import identical
        >>> from hetlab.tasks import Task, TaskGraph
        >>> g = TaskGraph([Task("a", 1.0), Task("b", 1.0)])
        >>> Schedule(g, identical(1), [0, 0], [0.0, 1.0], [1.0, 2.0]).validate().makespan
        2.0
        >>> Schedule(g, identical(1), [0, 0], [0.0, 0.5], [1.0, 1.5]).validate()
        Traceback (most recent call last):
        ...
        hetlab.schedule.ScheduleError: tasks 'a' and 'b' overlap on D0: [0, 1] and [0.5, 1.5]
        """
        if isinstance(rtol, bool) or not isinstance(rtol, (int, float, np.integer, np.floating)):
            raise TypeError(f"rtol must be a real number in [0, 1), got {type(rtol).__name__} {rtol!r}")
        if not 0 <= rtol < 1:   # also false for nan, which would turn every check below into a pass
            raise ValueError(f"rtol must be in [0, 1), got {rtol!r}")
        if not isinstance(check_durations, bool):
            raise TypeError(f"check_durations must be True or False, got {check_durations!r}")
        g, n, m = self.graph, len(self.graph.tasks), len(self.devices)
        if n == 0:
            return self
        names = [t.name for t in g.tasks]
        dev, start, end = self.device_of, self.start, self.end
        bad = np.flatnonzero((dev < 0) | (dev >= m))
        if bad.size:
            raise ScheduleError(f"task {names[bad[0]]!r} is on device index {dev[bad[0]]}, not in [0, {m})")
        bad = np.flatnonzero(~np.isfinite(start) | ~np.isfinite(end) | (start < 0)
                             | (end < start - _ROUNDING * np.abs(start)))
        if bad.size:
            i = bad[0]
            raise ScheduleError(f"task {names[i]!r} has start {start[i]} and end {end[i]}")
        if check_durations:
            expected = assigned_costs(g, self.devices, dev)
            # A device without a time for the task cannot run it: no run time matches an infinite one.
            bad = np.flatnonzero(~np.isfinite(expected))
            if bad.size:
                i = bad[0]
                raise ScheduleError(f"task {names[i]!r} is on {self.devices[dev[i]].name}, which cannot run it")
            # end = start + run time rounds once, to within _ROUNDING * end of the exact sum.
            bad = np.flatnonzero(np.abs((end - start) - expected) > rtol * expected + _ROUNDING * end)
            if bad.size:
                i = bad[0]
                raise ScheduleError(f"task {names[i]!r} runs {end[i] - start[i]:g} on "
                                    f"{self.devices[dev[i]].name}, but its run time there is {expected[i]:g}")
        # A zero-length run occupies an instant, not an interval: touching or inside another run is
        # fine. Among positive-length runs sorted by start, any overlap shows between neighbours.
        order = np.flatnonzero(end > start)
        order = order[np.lexsort((start[order], dev[order]))]
        a, b = order[:-1], order[1:]
        shorter = np.minimum(end[a] - start[a], end[b] - start[b])
        clash = (dev[b] == dev[a]) & (start[b] < end[a] - (rtol * shorter + _ROUNDING * end[a]))
        if clash.any():
            k = int(np.flatnonzero(clash)[0])
            a, b = order[k], order[k + 1]
            raise ScheduleError(f"tasks {names[a]!r} and {names[b]!r} overlap on {self.devices[dev[a]].name}: "
                                f"[{start[a]:g}, {end[a]:g}] and [{start[b]:g}, {end[b]:g}]")
        if g.edges:
            src = np.fromiter((g.index[s] for s, _ in g.edges), dtype=int, count=len(g.edges))
            dst = np.fromiter((g.index[d] for _, d in g.edges), dtype=int, count=len(g.edges))
            data = np.fromiter(g.edges.values(), dtype=float, count=len(g.edges))
            latency, inverse = comm_matrices(self.devices)
            a, b = dev[src], dev[dst]
            transfer = latency[a, b] + data * inverse[a, b]
            ready = end[src] + transfer
            late = np.flatnonzero(start[dst] < ready - (rtol * transfer + _ROUNDING * ready))
            if late.size:
                k = late[0]
                raise ScheduleError(f"task {names[dst[k]]!r} starts at {start[dst[k]]:g} before its input from "
                                    f"{names[src[k]]!r} arrives at {ready[k]:g}")
        return self


def from_placements(graph: TaskGraph, devices: Sequence[Device], placements: Sequence[Placement],
                    policy: str = "", **kwargs) -> Schedule:
    """Build a Schedule from a list of placements (one per task).

    >>> from hetlab.devices import identical
    >>> from hetlab.tasks import independent_tasks
    >>> s = from_placements(independent_tasks([1.0, 2.0]), identical(2),
    ...                     [Placement("T0", "D0", 0.0, 1.0), Placement("T1", "D1", 0.0, 2.0)])
    >>> s.validate().makespan
    2.0
    """
    if not isinstance(graph, TaskGraph):
        raise TypeError(f"graph must be a TaskGraph, got {type(graph).__name__}")
    devices = check_devices(devices)
    n = len(graph.tasks)
    dev_index = {d.name: j for j, d in enumerate(devices)}
    device_of = np.full(n, -1)
    start = np.full(n, np.nan)
    end = np.full(n, np.nan)
    if isinstance(placements, (str, bytes)) or not isinstance(placements, Sequence):
        raise TypeError(f"placements must be a sequence of Placement, got {type(placements).__name__}")
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"placements must hold Placement objects, got {type(p).__name__} {p!r:.80}")
        if p.task not in graph.index:
            raise ScheduleError(f"placement names unknown task {p.task!r}")
        if p.device not in dev_index:
            raise ScheduleError(f"placement names unknown device {p.device!r}")
        i = graph.index[p.task]
        if device_of[i] != -1:
            raise ScheduleError(f"task {p.task!r} is placed twice")
        device_of[i], start[i], end[i] = dev_index[p.device], p.start, p.end
    missing = np.flatnonzero(device_of == -1)
    if missing.size:
        raise ScheduleError(f"task {graph.tasks[missing[0]].name!r} is not placed")
    return Schedule(graph, devices, device_of, start, end, policy, **kwargs)
