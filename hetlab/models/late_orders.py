"""Orders that arrive after the plan was made (临时加菜): a static plan against a dynamic queue.

Before the run a static policy plans the known tasks (LPT on their estimates, Graham 1969). At time
``at`` a table orders ``count`` extra dishes of ``work`` each. The static kitchen has no planner at
run time, so it follows a rule fixed in advance: the extra dishes are appended to the cooks'
lists in turn (round-robin, in device order), and none can start before it is ordered. The dynamic
kitchen keeps one queue: whenever a cook is free it takes the largest dish *already ordered*
(by estimated run time); if nothing has been ordered yet it waits for the next order.

Assumptions: independent tasks; run times are ``work / speed`` (no noise, so the only surprise is
the new orders); no dispatch overhead on either side.
"""
from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetlab import schedulers as S
from hetlab._validate import check_choice, check_instance, check_int, check_nonnegative, check_positive
from hetlab.devices import Device, check_devices
from hetlab.schedule import Schedule
from hetlab.tasks import Task, TaskGraph, _as_graph, cost_matrix

__all__ = ["ExtraOrdersRun", "extra_orders", "speed_rule"]


@dataclass(frozen=True)
class ExtraOrdersRun:
    """The plan for the known dishes, and both kitchens' actual runs including the extra dishes."""

    planned: Schedule   # LPT for the dishes known before the run
    static: Schedule    # plan + extra dishes appended round-robin, each not before it was ordered
    dynamic: Schedule   # one queue: a free cook takes the largest dish ordered so far
    rule: str = "round-robin"   # the static kitchen's rule for the extra dishes (see extra_orders)

    def __post_init__(self) -> None:
        for name in ("planned", "static", "dynamic"):
            check_instance(name, getattr(self, name), Schedule, "a Schedule")
        check_choice("rule", self.rule, RULES)

    def summary_zh(self) -> str:
        static = "静态：加菜轮流接在班表末尾" if self.rule == "round-robin" else "静态：加菜按速度比例接在末尾"
        rows = [("计划（只含开工前的菜）", self.planned), (static, self.static),
                ("动态：谁空谁取已下单的最大一道", self.dynamic)]
        return "\n".join(f"{name:<18} 完成时间 {s.makespan:6.2f}" for name, s in rows)


RULES = ("round-robin", "by-speed")


def speed_rule(devices: Sequence[Device], count: int = 4) -> list[str]:
    """Device names for ``count`` extra dishes under a static rule fixed before the run from the
    nominal speeds alone: dish k goes to the device with the smallest ``(dishes so far + 1) / speed``
    (ties: the faster device, then device order), so each device gets dishes in proportion to its
    speed (speeds 10, 20, 15 give GPU, NPU, GPU, CPU). No run-time information is used."""
    devs = check_devices(devices)
    count = check_int("count", count, low=0, high=1000)
    taken = [0] * len(devs)
    out = []
    for _ in range(count):
        j = min(range(len(devs)), key=lambda j: ((taken[j] + 1) / devs[j].speed, -devs[j].speed, j))
        taken[j] += 1
        out.append(devs[j].name)
    return out


def extra_orders(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, count: int = 4,
                 work: float | None = None, at: float = 1.0, rule: str = "round-robin") -> ExtraOrdersRun:
    """Plan ``graph`` with LPT, then add ``count`` dishes of ``work`` (default: the median work of
    ``graph``) ordered at time ``at``; run the static rule and the dynamic queue (module docstring).

    ``rule`` is the static kitchen's rule, fixed before the run: ``"round-robin"`` appends the extra
    dishes to the cooks' lists in turn; ``"by-speed"`` appends them by :func:`speed_rule` (in
    proportion to nominal speed). Neither looks at run-time state.
    """
    rule = check_choice("rule", rule, RULES)
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    if g.edges:
        raise ValueError("extra_orders handles independent tasks only; the graph has edges")
    if not g.tasks:
        raise ValueError("graph must hold at least one task")
    count = check_int("count", count, low=1, high=1000)
    work = float(np.median(g.work)) if work is None else check_positive("work", work, high=1e12)
    at = check_nonnegative("at", at, high=1e12)
    taken = {t.name for t in g.tasks}
    extra_names = [f"加{k + 1}" for k in range(count)]
    if taken & set(extra_names):
        raise ValueError(f"graph already has tasks named like the extra dishes ({sorted(taken & set(extra_names))})")
    full = TaskGraph([*g.tasks, *(Task(name, work) for name in extra_names)])
    costs = cost_matrix(full, devs)
    if not np.isfinite(costs).all():
        raise ValueError("extra_orders needs every task to run on every device")
    release = np.array([0.0] * len(g.tasks) + [at] * count)
    planned = S.lpt(g, devs)
    queues = [[full.index[name] for name in planned.tasks_on(d.name)] for d in devs]
    if rule == "round-robin":
        targets = [k % len(devs) for k in range(count)]
    else:
        where = {d.name: j for j, d in enumerate(devs)}
        targets = [where[name] for name in speed_rule(devs, count)]
    for j, name in zip(targets, extra_names):
        queues[j].append(full.index[name])
    return ExtraOrdersRun(planned, _run_static(full, devs, costs, queues, release),
                          _run_dynamic(full, devs, costs, release), rule)


def _run_static(g, devs, costs, queues, release) -> Schedule:
    n = len(g.tasks)
    device_of, start, end = np.zeros(n, dtype=int), np.zeros(n), np.zeros(n)
    for j, queue in enumerate(queues):
        t = 0.0
        for i in queue:
            start[i] = max(t, release[i])
            end[i] = t = start[i] + costs[i, j]
            device_of[i] = j
    return Schedule(g, devs, device_of, start, end, "static plan + extra orders")


def _run_dynamic(g, devs, costs, release) -> Schedule:
    n = len(g.tasks)
    device_of, start, end = np.zeros(n, dtype=int), np.zeros(n), np.zeros(n)
    size = costs.min(axis=1)
    waiting = sorted(range(n), key=lambda i: (release[i], -size[i], i))   # not yet ordered or not yet taken
    free = [(0.0, j) for j in range(len(devs))]
    while waiting:
        t, j = heapq.heappop(free)
        ordered = [i for i in waiting if release[i] <= t]
        if not ordered:
            heapq.heappush(free, (min(release[i] for i in waiting), j))
            continue
        i = max(ordered, key=lambda k: (size[k], -k))
        waiting.remove(i)
        device_of[i], start[i], end[i] = j, t, t + costs[i, j]
        heapq.heappush(free, (end[i], j))
    return Schedule(g, devs, device_of, start, end, "dynamic queue + extra orders")
