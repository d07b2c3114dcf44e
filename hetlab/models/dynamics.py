"""Static plans against run-time decisions: noise, stragglers, late orders and uneven divide-and-conquer.

A *static* policy decides everything before the run, from *estimated* durations: LPT or EFT run
ahead of time are static list scheduling (Graham 1969), their output is a plan (which device runs
which tasks, in which order), executed by :func:`~hetlab.schedulers.list_scheduling.execute_plan`. A
*dynamic* policy decides during the run, from what it observes: when a device finishes, it takes the
next task; here that is the one greedy engine, :func:`~hetlab.schedulers.list_scheduling.central_queue`
(ties between devices free together go to the fastest). What the run throws at the plan:

- **noise**: every task's run time is its estimate times a seeded log-normal factor (``noise`` is the
  standard deviation of its logarithm; the factor's median is 1), :func:`actual_graph`;
- **a straggler**: one device (a failing stove, 灶台故障) runs ``slowdown`` times slower than planned;
- **late orders** (临时加菜): dishes ordered after the plan was made, :func:`late_orders`;
- **uneven splits** of a divide-and-conquer tree (:func:`hetlab.workloads.fork_join`), where work
  stealing and the central queue face the static plan, :func:`fork_join_wins`; and work stealing
  against EFT when the estimates are exact, :func:`stealing_vs_eft`.

:func:`compare_under_variance` plans with LPT on the estimates, then executes that plan on the actual
durations (``static``) and runs the central queue on the same actual durations (``dynamic``): each
device, when it becomes free, takes the largest remaining task by *estimate* (it never sees actual
durations before they happen). ``oracle`` is LPT planned on the actual durations, a reference no real
scheduler has. :func:`runtime_eft` is the dynamic policy that also weighs speeds (StarPU's ``dmda`` idea).
The price of each run-time decision is :mod:`hetlab.models.dispatch`.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hetlab import schedulers as S
from hetlab._validate import (
    check_bool,
    check_choice,
    check_fields,
    check_instance,
    check_int,
    check_nonnegative,
    check_positive,
    check_seed,
    check_sequence,
    check_str,
)
from hetlab.devices import Device, check_devices, identical
from hetlab.schedule import Schedule
from hetlab.tasks import Task, TaskGraph, _as_graph, cost_matrix, critical_path
from hetlab.workloads import fork_join, skewed_tasks

__all__ = ["actual_graph", "largest_first", "VarianceRun", "compare_under_variance", "runtime_eft", "LateOrdersRun",
           "late_orders", "speed_rule", "ForkJoinWins", "fork_join_wins", "StealingVsEft",
           "stealing_vs_eft", "SlacknessCurve", "slackness_curve"]

#: Most fork-join trees one :func:`fork_join_wins` call may compare.
MAX_TREES = 1_000
#: Most menus one :func:`stealing_vs_eft` call may compare (each with up to MAX_STEAL_SEEDS runs).
MAX_MENUS = 200
#: Most work-stealing seeds averaged per menu in :func:`stealing_vs_eft`.
MAX_STEAL_SEEDS = 50
#: Most dishes per menu in :func:`stealing_vs_eft`.
MAX_DISHES = 2_000


def _noise(noise) -> float:
    return check_nonnegative("noise", noise, high=3.0)


def _slowdown(slowdown) -> float:
    slowdown = check_positive("slowdown", slowdown, high=1000.0)
    if slowdown < 1:
        raise ValueError(f"slowdown must be in [1, 1000], got {slowdown!r}")
    return slowdown


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
    slowdown = _slowdown(slowdown)
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


def largest_first(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> list[str]:
    """Task names by decreasing *estimated* run time on their fastest device (ties: graph order): the
    list a dynamic queue takes its tasks from, largest first, like LPT's.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.tasks import independent_tasks
    >>> largest_first(independent_tasks([3, 9, 3, 5]), kitchen())
    ['T1', 'T3', 'T0', 'T2']
    """
    g = _as_graph(graph, "graph")
    fastest = cost_matrix(g, check_devices(devices)).min(axis=1)
    return [g.tasks[i].name for i in np.argsort(-fastest, kind="stable")]


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
    dynamic = S.central_queue(actual, devs, order=largest_first(g, devs), policy="dynamic")
    return VarianceRun(planned, static, dynamic, S.lpt(actual, devs))


def runtime_eft(graph: TaskGraph | Sequence[Task], actual: TaskGraph, devices: Sequence[Device], *,
                order: Sequence[str] | None = None, calibrate: bool = False) -> Schedule:
    """EFT decided at run time: whenever a device is free and tasks wait, plan the waiting tasks by EFT in
    ``order`` (default :func:`largest_first`) from the state observed now, and start on each free device the
    first task that plan gives it; the rest of the plan is dropped and made again at the next task end.

    The plan uses *estimated* durations (``graph``): a free device is available now, a busy one when its task
    is expected to end (its start plus the estimate, or now if that has passed). With ``calibrate`` each
    device's estimates are scaled by its actual/estimated ratio over its finished tasks (StarPU's history-based
    performance model), so a straggler is seen once it has finished a task. Tasks run for their ``actual``
    durations (:func:`actual_graph`); ties go to the fastest device, then the first listed. Independent tasks.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.tasks import independent_tasks
    >>> g = independent_tasks([10, 20, 15, 8])
    >>> runtime_eft(g, g, kitchen()).makespan == S.lpt(g, kitchen()).makespan   # exact estimates: LPT's plan
    True
    """
    g, act, devs = _as_graph(graph, "graph"), _as_graph(actual, "actual"), check_devices(devices)
    calibrate = check_bool("calibrate", calibrate)
    names = largest_first(g, devs) if order is None else list(check_sequence("order", order, limit=len(g.tasks)))
    wanted = sorted(t.name for t in g.tasks)
    if g.edges or act.edges or sorted(names) != wanted or sorted(t.name for t in act.tasks) != wanted:
        raise ValueError("runtime_eft needs independent tasks (graph and actual without edges), actual holding the "
                         "tasks of graph and order listing each of them once")
    est, real = cost_matrix(g, devs), cost_matrix(act, devs)[[act.index[t.name] for t in g.tasks]]   # graph's order
    if not (np.isfinite(est).all() and np.isfinite(real).all()):
        raise ValueError("runtime_eft needs every task to run on every device")
    est, real = est.tolist(), real.tolist()     # lists: the loop below reads single numbers
    todo, m, fast = [g.index[x] for x in names], len(devs), [-d.speed for d in devs]
    now, free_at, started, begin = 0.0, [0.0] * m, [[] for _ in devs], [0.0] * len(est)   # tasks per device
    while todo:
        fin = [s[:len(s) - (free_at[j] > now)] for j, s in enumerate(started)]     # finished, per device
        seen = [sum(est[i][j] for i in f) for j, f in enumerate(fin)]
        scale = [sum(real[i][j] for i in f) / seen[j] if calibrate and seen[j] else 1.0 for j, f in enumerate(fin)]
        idle = [j for j in range(m) if free_at[j] <= now]
        avail = [now if j in idle else max(now, begin[started[j][-1]] + est[started[j][-1]][j] * scale[j])
                 for j in range(m)]
        first: dict[int, int] = {}
        for i in todo:     # EFT over the waiting tasks from what is observed now
            k = min(range(m), key=lambda k: (avail[k] + est[i][k] * scale[k], fast[k], k))
            avail[k] += est[i][k] * scale[k]
            if k in idle:
                first.setdefault(k, i)
        for k, i in first.items():
            todo.remove(i)
            free_at[k], begin[i] = now + real[i][k], now
            started[k].append(i)
        now = min((t for t in free_at if t > now), default=now)
    return S.execute_plan(act, devs, {d.name: [g.tasks[i].name for i in s] for d, s in zip(devs, started)},
                          policy="run-time EFT", release={g.tasks[i].name: begin[i] for i in range(len(est))})


@dataclass(frozen=True)
class LateOrdersRun:
    """The plan for the known dishes, and both kitchens' actual runs including the extra dishes."""

    planned: Schedule   # LPT for the dishes known before the run
    static: Schedule    # plan + extra dishes appended round-robin, each not before it was ordered
    dynamic: Schedule   # one queue: a free cook takes the largest dish ordered so far
    rule: str = "round-robin"   # the static kitchen's rule for the extra dishes (see late_orders)

    def __post_init__(self) -> None:
        for name in ("planned", "static", "dynamic"):
            check_instance(name, getattr(self, name), Schedule, "a Schedule")
        check_choice("rule", self.rule, _LATE_ORDER_RULES)


#: The static kitchen's rules for dishes ordered after the plan was made (see :func:`late_orders`).
_LATE_ORDER_RULES = ("round-robin", "by-speed")


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


def late_orders(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, count: int = 4,
                work: float | None = None, at: float = 1.0, rule: str = "round-robin",
                prefix: str = "late", noise: float = 0.0, seed: int = 0, straggler: str | None = None,
                slowdown: float = 1.0) -> LateOrdersRun:
    """Plan ``graph`` with LPT, then add ``count`` dishes of ``work`` (default: the median work of
    ``graph``) named ``{prefix}1``, ``{prefix}2``, ... and ordered at time ``at``; run the static rule
    and the dynamic queue (module docstring). Chapter 5 names them ``加1`` ... (``prefix="加"``).

    ``rule`` is the static kitchen's rule, fixed before the run: ``"round-robin"`` appends the extra
    dishes to the cooks' lists in turn; ``"by-speed"`` appends them by :func:`speed_rule` (in
    proportion to nominal speed). Neither looks at run-time state.

    ``noise``, ``seed``, ``straggler`` and ``slowdown`` make the actual durations of all dishes (the late ones
    included) differ from the estimates as in :func:`actual_graph`; the plan, the static rule and the order of
    the dynamic queue still use the estimates. By default the estimates are exact.

    >>> from hetlab.devices import identical
    >>> from hetlab.tasks import independent_tasks
    >>> run = late_orders(independent_tasks([4, 4]), identical(2), count=2, work=2.0, at=1.0)
    >>> run.planned.makespan, run.static.makespan, run.dynamic.makespan    # both append one dish per device
    (4.0, 6.0, 6.0)
    """
    rule = check_choice("rule", rule, _LATE_ORDER_RULES)
    prefix = check_str("prefix", prefix)
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    if g.edges:
        raise ValueError("late_orders handles independent tasks only; the graph has edges")
    if not g.tasks:
        raise ValueError("graph must hold at least one task")
    count = check_int("count", count, low=1, high=1000)
    work = float(np.median(g.work)) if work is None else check_positive("work", work, high=1e12)
    at = check_nonnegative("at", at, high=1e12)
    taken = {t.name for t in g.tasks}
    extra_names = [f"{prefix}{k + 1}" for k in range(count)]
    if taken & set(extra_names):
        raise ValueError(f"graph already has tasks named like the extra dishes ({sorted(taken & set(extra_names))})")
    full = TaskGraph([*g.tasks, *(Task(name, work) for name in extra_names)])
    costs = cost_matrix(full, devs)
    if not np.isfinite(costs).all():
        raise ValueError("late_orders needs every task to run on every device")
    planned = S.lpt(g, devs)
    queues = [[full.index[name] for name in planned.tasks_on(d.name)] for d in devs]
    if rule == "round-robin":
        targets = [k % len(devs) for k in range(count)]
    else:
        where = {d.name: j for j, d in enumerate(devs)}
        targets = [where[name] for name in speed_rule(devs, count)]
    for j, name in zip(targets, extra_names):
        queues[j].append(full.index[name])
    plan = {d.name: [full.tasks[i].name for i in queue] for d, queue in zip(devs, queues)}
    exact = _noise(noise) == 0 and straggler is None
    actual = full if exact else actual_graph(full, devs, noise=noise, seed=seed, straggler=straggler,
                                             slowdown=slowdown)
    if exact:   # validated here too, so that a bad seed or slowdown is refused even when nothing varies
        check_seed("seed", seed)
        _slowdown(slowdown)
    static = S.execute_plan(actual, devs, plan, policy="static plan + extra orders",
                            release=dict.fromkeys(extra_names, at))
    dynamic = S.central_queue(actual, devs, order=largest_first(full, devs), release=dict.fromkeys(extra_names, at),
                              policy="dynamic queue + extra orders")
    return LateOrdersRun(planned, static, dynamic, rule)


@dataclass(frozen=True)
class ForkJoinWins:
    """Counts over random fork-join trees: who finished first (strictly)."""

    trees: int
    stealing_beats_static: int
    central_beats_static: int
    stealing_beats_central: int

    def __post_init__(self) -> None:
        check_fields(self)
        trees = check_int("trees", self.trees, low=1)
        for name in ("stealing_beats_static", "central_beats_static", "stealing_beats_central"):
            check_int(name, getattr(self, name), low=0, high=trees)


def fork_join_wins(seeds: Iterable[int], devices: Sequence[Device], *, depth: int = 5, work: float = 64.0,
                   skew: float = 0.6, steal_latency: float = 0.05, steal_seeds: int = 1) -> ForkJoinWins:
    """On :func:`hetlab.workloads.fork_join` trees (one per seed), compare a static EFT plan made on the
    estimates and executed on the actual tree, work stealing (all work starts on the first device; its
    makespan is the mean over victim-choice seeds ``0 .. steal_seeds-1``) and the central ready queue
    (:func:`~hetlab.schedulers.list_scheduling.central_queue`, ``ready="fifo"``), all on the actual tree."""
    devs = check_devices(devices)
    steal_latency = check_nonnegative("steal_latency", steal_latency, high=1e6)
    steal_seeds = check_int("steal_seeds", steal_seeds, low=1, high=MAX_STEAL_SEEDS)
    seeds = [check_seed("seeds", seed) for seed in check_sequence("seeds", seeds, empty=True, limit=MAX_TREES)]
    if not seeds:
        raise ValueError("seeds must name at least one tree, got an empty sequence")
    ws_st = cq_st = ws_cq = 0
    for seed in seeds:
        est, act = fork_join(depth, work=work, skew=skew, seed=seed)
        plan = S.eft(est, devs)
        static = S.execute_plan(act, devs, {d.name: plan.tasks_on(d.name) for d in devs}).makespan
        stealing = float(np.mean([S.work_stealing(act, devs, steal_latency=steal_latency, initial="first",
                                                  seed=k).makespan for k in range(steal_seeds)]))
        central = S.central_queue(act, devs, ready="fifo").makespan
        ws_st += stealing < static
        cq_st += central < static
        ws_cq += stealing < central
    return ForkJoinWins(len(seeds), ws_st, cq_st, ws_cq)


@dataclass(frozen=True)
class StealingVsEft:
    """Work stealing against EFT on many menus of independent tasks (one row per menu).

    ``stealing[k]`` is the mean work-stealing makespan on menu ``menus[k]`` over ``steal_seeds``
    victim-choice seeds; ``eft[k]`` and ``lpt[k]`` are the static plans on the same (exact) estimates.
    """

    menus: tuple[int, ...]
    stealing: tuple[float, ...]
    eft: tuple[float, ...]
    lpt: tuple[float, ...]
    steal_seeds: int
    steal_latency: float

    def __post_init__(self) -> None:
        check_fields(self)
        menus = check_sequence("menus", self.menus, limit=MAX_MENUS)
        for m in menus:
            check_seed("menus", m)
        for name in ("stealing", "eft", "lpt"):
            values = check_sequence(name, getattr(self, name), limit=MAX_MENUS)
            if len(values) != len(menus):
                raise ValueError(f"{name} must have one value per menu ({len(menus)}), got {len(values)}")
            for v in values:
                check_nonnegative(name, v)
        check_int("steal_seeds", self.steal_seeds, low=1, high=MAX_STEAL_SEEDS)

    @property
    def gaps(self) -> np.ndarray:
        """Per menu: mean work-stealing makespan minus EFT's (negative: stealing faster)."""
        return np.asarray(self.stealing, dtype=float) - np.asarray(self.eft, dtype=float)

    @property
    def wins(self) -> int:
        """Menus on which work stealing (on average over its seeds) finishes strictly before EFT."""
        return int((self.gaps < 0).sum())

    @property
    def worst_loss(self) -> float:
        """Largest amount by which work stealing is slower than EFT (0 if it never loses)."""
        return float(max(0.0, self.gaps.max())) if len(self.menus) else 0.0

    @property
    def best_win(self) -> float:
        """Largest amount by which work stealing is faster than EFT (0 if it never wins)."""
        return float(max(0.0, -self.gaps.min())) if len(self.menus) else 0.0

    @property
    def worst_menu(self) -> int:
        """The menu seed with the largest loss of work stealing against EFT."""
        return int(self.menus[int(np.argmax(self.gaps))])

    @property
    def lpt_beats_stealing(self) -> int:
        """Menus on which LPT finishes strictly before work stealing."""
        return int((np.asarray(self.lpt) < np.asarray(self.stealing)).sum())


def stealing_vs_eft(devices: Sequence[Device], *, menus: Iterable[int] = range(20), n: int = 24,
                    spread: float = 0.8, steal_seeds: int = 5, steal_latency: float = 0.0) -> StealingVsEft:
    """Compare work stealing with a fair start (tasks dealt round robin to the deques) against the
    static EFT and LPT plans on many menus of independent tasks.

    Each menu is :func:`hetlab.workloads.skewed_tasks` ``(n, spread=spread, seed=menu)``; the estimates
    are exact, so any difference comes from the policies, not from information. Work stealing is
    averaged over victim-choice seeds ``0 .. steal_seeds-1``.
    """
    devs = check_devices(devices)
    menus = [check_seed("menus", m) for m in check_sequence("menus", menus, limit=MAX_MENUS)]
    if not menus:
        raise ValueError("menus must name at least one menu seed, got an empty sequence")
    n = check_int("n", n, low=1, high=MAX_DISHES)
    spread = check_nonnegative("spread", spread, high=10.0)
    steal_seeds = check_int("steal_seeds", steal_seeds, low=1, high=MAX_STEAL_SEEDS)
    steal_latency = check_nonnegative("steal_latency", steal_latency, high=1e6)
    stealing, eft, lpt = [], [], []
    for menu in menus:
        tasks = skewed_tasks(n, spread=spread, seed=menu)
        runs = [S.work_stealing(tasks, devs, steal_latency=steal_latency, initial="round_robin", seed=k).makespan
                for k in range(steal_seeds)]
        stealing.append(float(np.mean(runs)))
        eft.append(float(S.eft(tasks, devs).makespan))
        lpt.append(float(S.lpt(tasks, devs).makespan))
    return StealingVsEft(tuple(menus), tuple(stealing), tuple(eft), tuple(lpt), steal_seeds, steal_latency)


@dataclass(frozen=True)
class SlacknessCurve:
    """Speed-ups ``work / makespan`` of one task graph on ``counts[k]`` identical unit-speed devices.

    ``work`` is T1 (the sum of run times) and ``span`` T-infinity (the critical path); ``stealing[k]`` is work
    stealing's mean speed-up over its victim-choice seeds, ``central[k]`` the central ready queue's (FIFO).
    """

    work: float
    span: float
    counts: tuple[int, ...]
    stealing: tuple[float, ...]
    central: tuple[float, ...]

    def __post_init__(self) -> None:
        check_fields(self)
        check_positive("work", self.work)
        check_positive("span", self.span)
        counts = check_sequence("counts", self.counts, limit=MAX_COUNTS)
        for c in counts:
            check_int("counts", c, low=1, high=MAX_DEVICES)
        for name in ("stealing", "central"):
            values = check_sequence(name, getattr(self, name), limit=MAX_COUNTS)
            if len(values) != len(counts):
                raise ValueError(f"{name} must have one value per device count ({len(counts)}), got {len(values)}")
            for v in values:
                check_positive(name, v)

    @property
    def parallelism(self) -> float:
        """T1 / T-infinity: no schedule on any number of devices gets a larger speed-up."""
        return self.work / self.span


#: Most device counts one :func:`slackness_curve` may try, and the largest.
MAX_COUNTS = 16
MAX_DEVICES = 256


def slackness_curve(graph: TaskGraph | Sequence[Task], counts: Iterable[int] = (1, 2, 4, 8, 16, 32), *,
                    steal_latency: float = 0.05, steal_seeds: int = 5) -> SlacknessCurve:
    """Work stealing (all work starts on the first device, mean over victim-choice seeds ``0 .. steal_seeds-1``)
    and the central ready queue (``ready="fifo"``) on ``P`` identical unit-speed devices for each ``P`` in
    ``counts``. Neither speed-up can exceed ``min(P, T1/T-infinity)`` (Blumofe & Leiserson 1999: near-linear
    speed-up needs parallel slackness, ``T1/T-infinity`` well above ``P``).

    >>> from hetlab.tasks import Task, TaskGraph
    >>> chain = TaskGraph([Task("a", 1.0), Task("b", 1.0), Task("c", 1.0)], [("a", "b"), ("b", "c")])
    >>> curve = slackness_curve(chain, (1, 2), steal_seeds=1)
    >>> curve.parallelism, curve.central                # a chain has no parallelism to use
    (1.0, (1.0, 1.0))
    """
    g = _as_graph(graph, "graph")
    if not g.tasks:
        raise ValueError("graph must hold at least one task")
    counts = [check_int("counts", c, low=1, high=MAX_DEVICES)
              for c in check_sequence("counts", counts, limit=MAX_COUNTS)]
    if not counts:
        raise ValueError("counts must name at least one device count, got an empty sequence")
    steal_latency = check_nonnegative("steal_latency", steal_latency, high=1e6)
    steal_seeds = check_int("steal_seeds", steal_seeds, low=1, high=MAX_STEAL_SEEDS)
    one = identical(1, speed=1.0)
    work = float(cost_matrix(g, one).sum())
    span = float(critical_path(g, one)[0])
    stealing, central = [], []
    for p in counts:
        devs = identical(p, speed=1.0)
        runs = [S.work_stealing(g, devs, steal_latency=steal_latency, initial="first", seed=k).makespan
                for k in range(steal_seeds)]
        stealing.append(work / float(np.mean(runs)))
        central.append(work / S.central_queue(g, devs, ready="fifo").makespan)
    return SlacknessCurve(work, span, tuple(counts), tuple(stealing), tuple(central))
