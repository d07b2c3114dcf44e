"""The price of deciding at run time: a dispatch cost per decision of the central queue.

Static scheduling decides everything before the run and pays nothing per task at run time; a dynamic
policy makes one decision per task while the run is going (pop the shared queue, pick a device, launch),
and each decision costs time. Here the dynamic policy is the greedy engine
:func:`~hetlab.schedulers.list_scheduling.central_queue` with ``overhead``: the device that takes a task
first spends ``overhead`` time units deciding (idle, not busy), then runs it. :func:`overhead_sweep`
averages static (LPT planned on estimates, executed on the actual durations of
:func:`hetlab.models.dynamics.actual_graph`) against that queue over seeds and noise levels;
:func:`crossing_noise` finds where the dynamic queue starts to win; :func:`decision_counts` and
:func:`capacity_bound` say who pays how many decisions and what that costs at least.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hetlab import schedulers as S
from hetlab._validate import as_float_array, check_fields, check_int, check_nonnegative, check_sequence
from hetlab.devices import Device, check_devices
from hetlab.models.dynamics import actual_graph, largest_first
from hetlab.schedule import Schedule
from hetlab.tasks import Task, TaskGraph, _as_graph, cost_matrix

__all__ = ["OverheadPoint", "overhead_sweep", "crossing_noise", "decision_counts", "capacity_bound"]

#: Most simulated runs one :func:`overhead_sweep` may make (noise levels x seeds, two schedules each);
#: a few seconds on a laptop.
MAX_SWEEP_RUNS = 20_000


def _overhead(overhead) -> float:
    return check_nonnegative("overhead", overhead, high=1e6)


@dataclass(frozen=True)
class OverheadPoint:
    """Mean makespans over seeds at one noise level: static plan, dynamic queue with dispatch cost."""

    noise: float
    static: float
    dynamic: float
    dynamic_wins: int
    seeds: int

    def __post_init__(self) -> None:
        check_fields(self)
        check_nonnegative("noise", self.noise, high=3.0)
        check_int("seeds", self.seeds, low=1)
        check_int("dynamic_wins", self.dynamic_wins, low=0, high=self.seeds)

    @property
    def gap(self) -> float:
        """static - dynamic (positive: the dynamic queue is faster on average)."""
        return self.static - self.dynamic


def overhead_sweep(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, overhead: float,
                   noises: Iterable[float], seeds: int = 20) -> list[OverheadPoint]:
    """For each noise level, mean makespans over ``seeds`` seeds of the static LPT plan executed
    on actual durations and of the dynamic queue that pays ``overhead`` per decision."""
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    overhead = _overhead(overhead)
    seeds = check_int("seeds", seeds, low=1, high=1000)
    levels = as_float_array("noises", check_sequence("noises", noises, limit=MAX_SWEEP_RUNS), low=0.0, high=3.0,
                            empty=False)
    if levels.size * seeds > MAX_SWEEP_RUNS:
        raise ValueError(f"noises x seeds must be at most {MAX_SWEEP_RUNS:,} runs, got {levels.size:,} noise levels "
                         f"x seeds={seeds} = {levels.size * seeds:,}")
    order = largest_first(g, devs)
    plan_schedule = S.lpt(g, devs)
    plan = {d.name: plan_schedule.tasks_on(d.name) for d in devs}
    out = []
    for noise in levels.tolist():
        st, dy = [], []
        for k in range(seeds):
            actual = actual_graph(g, devs, noise=noise, seed=k)
            st.append(S.execute_plan(actual, devs, plan).makespan)
            dy.append(S.central_queue(actual, devs, order=order, overhead=overhead).makespan)
        out.append(OverheadPoint(float(noise), float(np.mean(st)), float(np.mean(dy)),
                                 int(sum(d < s for s, d in zip(st, dy))), seeds))
    return out


@dataclass(frozen=True)
class DecisionCount:
    """Who made how many dispatch decisions in the dynamic queue, with and without a per-decision cost.

    ``base_*`` describe the queue at zero overhead; the others the queue that pays ``overhead`` per
    decision (one decision per task, paid by the device that takes it).
    """

    overhead: float
    decisions: tuple[int, ...]          # per device, with overhead
    finish: tuple[float, ...]           # per device: when its last task ends, with overhead
    base_decisions: tuple[int, ...]     # per device, zero overhead
    base_finish: tuple[float, ...]      # per device, zero overhead

    @property
    def makespan(self) -> float:
        return max(self.finish)

    @property
    def base_makespan(self) -> float:
        return max(self.base_finish)

    @property
    def last(self) -> int:
        """Index of the device that finishes last (with overhead)."""
        return int(np.argmax(self.finish))

    @property
    def delay(self) -> float:
        """Actual lengthening of the makespan caused by the decisions."""
        return self.makespan - self.base_makespan


def decision_counts(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
                    overhead: float = 0.02) -> DecisionCount:
    """Per-device decision counts and finish times of the central queue (largest estimate first)
    on ``graph`` as given (no noise), at zero overhead and at ``overhead`` per decision."""
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    overhead = _overhead(overhead)
    order = largest_first(g, devs)

    def per_device(s: Schedule) -> tuple[tuple[int, ...], tuple[float, ...]]:
        counts = tuple(int((s.device_of == j).sum()) for j in range(len(devs)))
        finish = tuple(float(s.end[s.device_of == j].max()) if counts[j] else 0.0 for j in range(len(devs)))
        return counts, finish

    base = per_device(S.central_queue(g, devs, order=order))
    paid = per_device(S.central_queue(g, devs, order=order, overhead=overhead))
    return DecisionCount(overhead, paid[0], paid[1], base[0], base[1])


def crossing_noise(points: Sequence[OverheadPoint] = ()) -> float | None:
    """The noise where ``static - dynamic`` first turns positive, linearly interpolated between the
    two neighbouring points of ``points`` (an :func:`overhead_sweep` result, in increasing noise);
    the first noise itself if the dynamic queue already wins there; None if it never wins."""
    items = check_sequence("points", points, empty=True)
    for k, p in enumerate(items):
        if not isinstance(p, OverheadPoint):
            raise TypeError(f"points must hold OverheadPoint records, item {k} is {type(p).__name__}")
    for k, p in enumerate(items):
        if p.gap > 0:
            if k == 0:
                return p.noise
            q = items[k - 1]
            return q.noise + (p.noise - q.noise) * (0 - q.gap) / (p.gap - q.gap)
    return None


def capacity_bound(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
                   decisions: Sequence[int] | None = None, overhead: float = 0.0) -> float:
    """Capacity lower bound on the makespan when device ``j`` makes ``decisions[j]`` dispatch decisions.

    Device ``j`` is busy for (work it gets) / ``s_j`` plus ``n_j * overhead``; the makespan ``T`` is at
    least each device's busy time, so ``T * s_j >= work_j + overhead * s_j * n_j``; summing over ``j``
    gives ``T >= (W + overhead * sum_j s_j n_j) / sum_j s_j`` with ``W`` the total work. Assumes every
    task runs for ``work / speed`` (no per-device ``times`` and no operator-specific speeds); raises
    ValueError otherwise, or when the decisions do not add up to the number of tasks. ``decisions=None``
    takes the counts of the central queue that pays ``overhead`` per decision (:func:`decision_counts`).
    """
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    overhead = _overhead(overhead)
    if decisions is None:
        decisions = decision_counts(g, devs, overhead=overhead).decisions
    counts = check_sequence("decisions", decisions)
    if len(counts) != len(devs):
        raise ValueError(f"decisions must have one count per device ({len(devs)}), got {len(counts)}")
    counts = [check_int(f"decisions[{j}]", n, low=0) for j, n in enumerate(counts)]
    if sum(counts) != len(g.tasks):
        raise ValueError(f"decisions must add up to the number of tasks ({len(g.tasks)}), got {sum(counts)}")
    speeds = np.array([d.speed for d in devs], dtype=float)
    work = np.array([t.work for t in g.tasks], dtype=float)
    if not np.allclose(cost_matrix(g, devs), work[:, None] / speeds[None, :], rtol=1e-9, atol=0.0):
        raise ValueError("graph: capacity_bound assumes every task runs for work / speed on every device; "
                         "this graph has per-device times or operator-specific speeds")
    return float((work.sum() + overhead * float(np.dot(speeds, counts))) / speeds.sum())
