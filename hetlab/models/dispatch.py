"""The price of deciding at run time: a per-decision dispatch cost, and a central queue on a DAG.

Static scheduling decides everything before the run and pays nothing per task at run time;
a dynamic policy makes one decision per task while the run is going (pop the shared queue,
pick a device, launch), and each decision costs time. :func:`dynamic_queue_with_overhead` is the
central queue of :func:`hetlab.models.dynamics.dynamic_queue` in which the device that takes a
task first spends ``overhead`` time units on the decision. :func:`overhead_sweep` averages static
(LPT planned on estimates) against that dynamic queue over seeds and noise levels, and
:func:`break_even_noise` finds the smallest noise at which the dynamic queue wins on average.

:func:`central_queue_dag` is the same "whoever is free takes the next ready task" policy on a
task graph (Graham's list scheduling run online): it lets a chapter compare work stealing with a
*centralised* dynamic policy on the same fork-join tree.
"""
from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hetlab import schedulers as S
from hetlab._validate import as_float_array, check_fields, check_int, check_nonnegative, check_seed, check_sequence
from hetlab.devices import Device, check_devices
from hetlab.models import dynamics as R
from hetlab.schedule import Schedule
from hetlab.tasks import Task, TaskGraph, _as_graph, cost_matrix

__all__ = ["dynamic_queue_with_overhead", "OverheadPoint", "overhead_sweep", "break_even_noise",
           "central_queue_dag", "ForkJoinWins", "fork_join_wins", "decision_counts", "crossing_noise",
           "capacity_bound", "StealingVsEft", "stealing_vs_eft"]

#: Most simulated runs one :func:`overhead_sweep` may make (noise levels x seeds, two schedules each);
#: a few seconds on a laptop.
MAX_SWEEP_RUNS = 20_000
#: Most fork-join trees one :func:`fork_join_wins` call may compare.
MAX_TREES = 1_000
#: Most menus one :func:`stealing_vs_eft` call may compare (each with up to MAX_STEAL_SEEDS runs).
MAX_MENUS = 200
#: Most work-stealing seeds averaged per menu in :func:`stealing_vs_eft`.
MAX_STEAL_SEEDS = 50
#: Most dishes per menu in :func:`stealing_vs_eft`.
MAX_DISHES = 2_000


def _overhead(overhead) -> float:
    return check_nonnegative("overhead", overhead, high=1e6)


def dynamic_queue_with_overhead(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
                                order: Sequence[str] | None = None, overhead: float = 0.0) -> Schedule:
    """Central queue (independent tasks) where every dispatch decision costs ``overhead``.

    Whenever a device becomes free it spends ``overhead`` deciding, then runs the next task of
    ``order`` for its duration in ``graph``. With ``overhead=0`` this equals
    :func:`hetlab.models.dynamics.dynamic_queue`. The decision time is idle time of the device
    (not counted in ``busy``) but it delays the task, so it lengthens the makespan.
    """
    overhead = _overhead(overhead)
    base = R.dynamic_queue(graph, devices, order=order)
    if overhead == 0:
        return base
    g, devs = base.graph, base.devices
    costs = cost_matrix(g, devs)
    names = [t.name for t in g.tasks] if order is None else list(order)
    return Schedule(g, devs, *R._run_queue(g, costs, names, overhead), "dynamic (with dispatch cost)")


def _dynamic_order(graph: TaskGraph, devices: Sequence[Device]) -> list[str]:
    by_estimate = cost_matrix(graph, devices).min(axis=1)
    return [graph.tasks[i].name for i in np.argsort(-by_estimate, kind="stable")]


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
    order = _dynamic_order(g, devs)
    plan_schedule = S.lpt(g, devs)
    plan = {d.name: plan_schedule.tasks_on(d.name) for d in devs}
    out = []
    for noise in levels.tolist():
        st, dy = [], []
        for k in range(seeds):
            actual = R.actual_graph(g, devs, noise=noise, seed=k)
            st.append(S.execute_plan(actual, devs, plan).makespan)
            dy.append(dynamic_queue_with_overhead(actual, devs, order=order, overhead=overhead).makespan)
        out.append(OverheadPoint(float(noise), float(np.mean(st)), float(np.mean(dy)),
                                 int(sum(d < s for s, d in zip(st, dy))), seeds))
    return out


def break_even_noise(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, overhead: float,
                     noises: Iterable[float] = tuple(np.round(np.arange(0.0, 1.01, 0.05), 2)),
                     seeds: int = 20) -> float | None:
    """Smallest noise of ``noises`` at which the dynamic queue (paying ``overhead`` per decision)
    is faster than the static plan on average over ``seeds`` seeds; None if it never is."""
    for point in overhead_sweep(graph, devices, overhead=overhead, noises=noises, seeds=seeds):
        if point.dynamic < point.static:
            return point.noise
    return None


def central_queue_dag(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
                      overhead: float = 0.0) -> Schedule:
    """Online list scheduling on a DAG from one shared FIFO ready queue ("whoever is free takes").

    A task enters the queue when its last predecessor finishes (ties: graph order); a device that
    is free takes the oldest ready task, spends ``overhead`` deciding, then runs it. Data
    transfers between devices are not charged (meant for identical devices sharing memory).
    """
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    overhead = _overhead(overhead)
    costs = cost_matrix(g, devs)
    if not np.isfinite(costs).all():
        raise ValueError("central_queue_dag needs every task to run on every device")
    n, m = len(g.tasks), len(devs)
    missing = [len(g.preds[i]) for i in range(n)]
    ready = [i for i in range(n) if missing[i] == 0]
    head = 0
    device_of, start, end = np.zeros(n, dtype=int), np.zeros(n), np.zeros(n)
    idle = list(range(m))          # devices free now, lowest index first
    running: list[tuple[float, int, int]] = []   # (end time, task, device)
    now, done = 0.0, 0
    while done < n:
        idle.sort()
        while idle and head < len(ready):
            j = idle.pop(0)
            i = ready[head]
            head += 1
            device_of[i], start[i] = j, now + overhead
            end[i] = start[i] + costs[i, j]
            heapq.heappush(running, (end[i], i, j))
        if not running:
            raise ValueError("graph has a cycle")
        now, i, j = heapq.heappop(running)
        finished = [(i, j)]
        while running and running[0][0] <= now:
            _, i2, j2 = heapq.heappop(running)
            finished.append((i2, j2))
        for i, j in sorted(finished):
            done += 1
            idle.append(j)
            for s in sorted(g.succs[i]):
                missing[s] -= 1
                if missing[s] == 0:
                    ready.append(s)
    return Schedule(g, devs, device_of, start, end, "central queue")


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
                   skew: float = 0.6, steal_latency: float = 0.05) -> ForkJoinWins:
    """On :func:`hetlab.models.dynamics.fork_join` trees (one per seed), compare a static EFT plan
    made on the estimates and executed on the actual tree, work stealing (all work starts on the
    first device, steal seed 0) and :func:`central_queue_dag`, all on the actual tree."""
    devs = check_devices(devices)
    steal_latency = check_nonnegative("steal_latency", steal_latency, high=1e6)
    seeds = [check_seed("seeds", seed) for seed in check_sequence("seeds", seeds, empty=True, limit=MAX_TREES)]
    if not seeds:
        raise ValueError("seeds must name at least one tree, got an empty sequence")
    ws_st = cq_st = ws_cq = 0
    for seed in seeds:
        est, act = R.fork_join(depth, work=work, skew=skew, seed=seed)
        plan = S.eft(est, devs)
        static = S.execute_plan(act, devs, {d.name: plan.tasks_on(d.name) for d in devs}).makespan
        stealing = S.work_stealing(act, devs, steal_latency=steal_latency, initial="first", seed=0).makespan
        central = central_queue_dag(act, devs).makespan
        ws_st += stealing < static
        cq_st += central < static
        ws_cq += stealing < central
    return ForkJoinWins(len(seeds), ws_st, cq_st, ws_cq)


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

    @property
    def predicted_delay(self) -> float:
        """``max_j (F_j + n_j * overhead) - max_j F_j`` with the zero-overhead assignment: each device
        pays its own decisions, the queue is assumed not to re-balance."""
        return max(f + n * self.overhead for f, n in zip(self.base_finish, self.base_decisions)) - self.base_makespan


def decision_counts(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
                    overhead: float = 0.02) -> DecisionCount:
    """Per-device decision counts and finish times of the central queue (largest estimate first)
    on ``graph`` as given (no noise), at zero overhead and at ``overhead`` per decision."""
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    overhead = _overhead(overhead)
    order = _dynamic_order(g, devs)

    def per_device(s: Schedule) -> tuple[tuple[int, ...], tuple[float, ...]]:
        counts = tuple(int((s.device_of == j).sum()) for j in range(len(devs)))
        finish = tuple(float(s.end[s.device_of == j].max()) if counts[j] else 0.0 for j in range(len(devs)))
        return counts, finish

    base = per_device(dynamic_queue_with_overhead(g, devs, order=order))
    paid = per_device(dynamic_queue_with_overhead(g, devs, order=order, overhead=overhead))
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
    from hetlab.workloads import skewed_tasks

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
