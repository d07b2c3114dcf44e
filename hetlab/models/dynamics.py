"""Static plans against dynamic policies when run times differ from their estimates.

A *static* policy decides everything before the run, from *estimated* durations: LPT or EFT run
ahead of time are static list scheduling (Graham 1969), their output is a plan (which device runs
which tasks, in which order). A *dynamic* policy decides during the run, from what it observes:
when a device finishes, it takes the next task. At run time the *actual* durations differ:

- every task's run time is its estimate times a seeded log-normal factor (``noise`` is the
  standard deviation of its logarithm; the factor's median is 1);
- a straggler device (a failing stove, 灶台故障) runs ``slowdown`` times slower than planned.

:func:`compare_under_variance` plans with LPT on the estimates, then executes that plan on the
actual durations (``static``) and runs a central-queue dynamic policy on the same actual durations
(``dynamic``): each device, when it becomes free, takes the largest remaining task by *estimate*
(it never sees actual durations before they happen). ``oracle`` is LPT planned on the actual
durations, a reference no real scheduler has.

:func:`fork_join` builds a recursive divide-and-conquer DAG (quicksort-like) whose split points
are uneven at run time while the planner assumes halves: the case where work stealing
(Blumofe & Leiserson 1999) beats a static plan.
"""
from __future__ import annotations

import heapq
import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetlab import schedulers as S
from hetlab._validate import (
    check_instance,
    check_int,
    check_nonnegative,
    check_positive,
    check_real,
    check_seed,
    check_sequence,
)
from hetlab.devices import Device, check_devices
from hetlab.schedule import Schedule
from hetlab.tasks import Task, TaskGraph, _as_graph, cost_matrix

__all__ = ["actual_graph", "dynamic_queue", "VarianceRun", "compare_under_variance", "fork_join"]


def _noise(noise) -> float:
    return check_nonnegative("noise", noise, high=3.0)


def actual_graph(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, noise: float = 0.3,
                 seed: int = 0, straggler: str | None = None, slowdown: float = 1.0) -> TaskGraph:
    """The same tasks with explicit *actual* run times per device (``Task.times``).

    Actual time = estimated time x exp(noise * z) (z standard normal, one draw per task, seeded),
    and x ``slowdown`` on the device named ``straggler``. Edges are kept.
    """
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    noise = _noise(noise)
    seed = check_seed("seed", seed)
    slowdown = check_positive("slowdown", slowdown, high=1000.0)
    if slowdown < 1:
        raise ValueError(f"slowdown must be in [1, 1000], got {slowdown!r}")
    names = [d.name for d in devs]
    if straggler is not None and (not isinstance(straggler, str) or straggler not in names):
        raise ValueError(f"straggler must be one of {names} or None, got {straggler!r}")
    est = cost_matrix(g, devs)
    factor = np.exp(noise * np.random.default_rng(seed).standard_normal(len(g.tasks)))
    slow = np.array([slowdown if n == straggler else 1.0 for n in names])
    actual = est * factor[:, None] * slow[None, :]
    tasks = [Task(t.name, t.work, t.kind, t.op, times=dict(zip(names, row.tolist())))
             for t, row in zip(g.tasks, actual)]
    return TaskGraph(tasks, dict(g.edges))


def dynamic_queue(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
                  order: Sequence[str] | None = None) -> Schedule:
    """Self-scheduling from one central queue, decided at run time (independent tasks only).

    Whenever a device becomes free it takes the next task of ``order`` (default: the graph's order);
    the task then runs for its duration in ``graph`` (the actual one). The policy uses only
    completion events, never a duration it has not yet observed. Ties between devices free at
    the same moment go to the device listed first.
    """
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    if g.edges:
        raise ValueError("dynamic_queue handles independent tasks only; the graph has edges")
    names = [t.name for t in g.tasks] if order is None else list(check_sequence("order", order, empty=True))
    if not all(isinstance(n, str) for n in names) or sorted(names) != sorted(t.name for t in g.tasks):
        raise ValueError("order must list every task of the graph exactly once")
    costs = cost_matrix(g, devs)
    if not np.isfinite(costs).all():
        raise ValueError("dynamic_queue needs every task to run on every device")
    return Schedule(g, devs, *_run_queue(g, costs, names), "dynamic")


def _run_queue(g: TaskGraph, costs: np.ndarray, names: Sequence[str], overhead: float = 0.0):
    """The central queue itself: the earliest-free device takes the next task of ``names``, after
    spending ``overhead`` on the decision. Returns ``(device_of, start, end)`` indexed like ``g.tasks``."""
    n = len(g.tasks)
    device_of, start, end = np.zeros(n, dtype=int), np.zeros(n), np.zeros(n)
    free = [(0.0, j) for j in range(costs.shape[1])]
    for name in names:
        t, j = heapq.heappop(free)
        i = g.index[name]
        device_of[i], start[i] = j, t + overhead
        end[i] = start[i] + costs[i, j]
        heapq.heappush(free, (end[i], j))
    return device_of, start, end


@dataclass(frozen=True)
class VarianceRun:
    """One comparison: the plan as estimated, the plan as executed, the dynamic policy, the oracle."""

    planned: Schedule   # LPT on estimates, with estimated durations (what the planner expects)
    static: Schedule    # the same per-device sequences, executed with actual durations
    dynamic: Schedule   # central queue, largest estimate first, actual durations
    oracle: Schedule    # LPT planned on the actual durations (needs clairvoyance)

    def __post_init__(self) -> None:
        for name in ("planned", "static", "dynamic", "oracle"):
            check_instance(name, getattr(self, name), Schedule, "a Schedule")

    def summary_zh(self) -> str:
        """Four aligned Chinese lines: each schedule's makespan."""
        rows = [("静态计划（按估计，预期）", self.planned), ("静态计划（实际执行）", self.static),
                ("动态队列（实际执行）", self.dynamic), ("先知 LPT（事先知道实际耗时）", self.oracle)]
        return "\n".join(f"{name:<16} 完成时间 {s.makespan:6.2f}" for name, s in rows)


def compare_under_variance(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, noise: float = 0.3,
                           seed: int = 0, straggler: str | None = None, slowdown: float = 1.0) -> VarianceRun:
    """Plan with LPT on estimates, then run that plan and a dynamic queue on the actual durations.

    See the module docstring for the noise and straggler model. Independent tasks only.
    """
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    if g.edges:
        raise ValueError("compare_under_variance handles independent tasks only; the graph has edges")
    actual = actual_graph(g, devs, noise=noise, seed=seed, straggler=straggler, slowdown=slowdown)
    planned = S.lpt(g, devs)
    plan = {d.name: planned.tasks_on(d.name) for d in devs}
    static = S.execute_plan(actual, devs, plan, policy="static plan")
    by_estimate = cost_matrix(g, devs).min(axis=1)
    order = [g.tasks[i].name for i in np.argsort(-by_estimate, kind="stable")]
    dynamic = dynamic_queue(actual, devs, order=order)
    return VarianceRun(planned, static, dynamic, S.lpt(actual, devs))


def fork_join(depth: int, *, work: float = 64.0, skew: float = 0.4, seed: int = 0,
              leaf_share: float = 0.9) -> tuple[TaskGraph, TaskGraph]:
    """A recursive divide-and-conquer DAG: ``(estimated, actual)`` with the same tasks and edges.

    Each internal call ``s`` splits its problem (a small ``split`` task), recurses into two halves
    and ends with a ``join`` task; leaves at ``depth`` do the bulk of the work (``leaf_share``).
    The planner assumes every split halves the problem; at run time each split gives its left
    child a share drawn uniformly from ``[0.5 - skew/2, 0.5 + skew/2]`` (seeded), like a quicksort
    pivot. Split and join costs are proportional to the problem size they handle.
    """
    depth = check_int("depth", depth, low=1, high=10)
    work = check_positive("work", work, high=1e12)
    skew = check_nonnegative("skew", skew, high=0.9)
    leaf_share = check_real("leaf_share", leaf_share)
    if not 0 < leaf_share < 1:
        raise ValueError(f"leaf_share must be in (0, 1), got {leaf_share!r}")
    seed = check_seed("seed", seed)
    rng = random.Random(seed)
    # Split + join at every level share (1 - leaf_share) of the work: per level and per unit of size.
    per_level = (1 - leaf_share) / (2 * depth)
    est_tasks: list[Task] = []
    act_tasks: list[Task] = []
    edges: list[tuple[str, str]] = []

    def build(path: str, est: float, act: float, level: int) -> tuple[str, str]:
        """Add the subtree for a problem of estimated/actual size; return (entry, exit) task names."""
        if level == depth:
            name = f"leaf{path}"
            est_tasks.append(Task(name, work * leaf_share * est))
            act_tasks.append(Task(name, work * leaf_share * act))
            return name, name
        split, join = f"split{path}", f"join{path}"
        for name in (split, join):
            est_tasks.append(Task(name, work * per_level * est))
            act_tasks.append(Task(name, work * per_level * act))
        share = rng.uniform(0.5 - skew / 2, 0.5 + skew / 2)
        for child, e, a in ((path + "0", est / 2, act * share), (path + "1", est / 2, act * (1 - share))):
            entry, exit_ = build(child, e, a, level + 1)
            edges.extend([(split, entry), (exit_, join)])
        return split, join

    build("", 1.0, 1.0, 0)
    return TaskGraph(est_tasks, edges), TaskGraph(act_tasks, edges)
