"""Every policy's schedule is feasible at every magnitude, by an exact checker independent of hetlab (issue 19).

:func:`infeasibilities` recomputes run times and transfers from the definitions (``Task.times``, work over speed
times affinity, the larger latency plus data over the smaller bandwidth) in exact rational arithmetic
(:class:`fractions.Fraction` of the stored floats), never from hetlab's cost matrices or ``validate()``. Its
model of a floating-point schedule:

- a task's stored end is its start plus its run time, rounded: within ``K u`` of the exact sum (``u = 2**-53``,
  the unit roundoff; the run time itself, work over speed times affinity, takes two roundings and the sum one);
- on one device, runs of positive stored length never overlap: ``start[b] >= end[a]``, compared exactly;
- a task of positive run time whose stored length vanished in rounding (``s + c == s`` at a large start) may
  touch a run but not sit strictly inside one; a task of run time 0 is an instant and may sit anywhere;
- a task starts no earlier than each input's arrival, ``end + latency + data / bandwidth``, less the rounding of
  computing that sum in floating point (at most four roundings of non-negative terms: ``K u`` of it).

So nothing scales with the makespan: one 1e12-long task cannot hide an overlap on a 1-long one.
"""
from __future__ import annotations

import bisect
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetlab import schedulers as S
from hetlab.devices import Device, Link, identical, kitchen
from hetlab.schedule import Schedule, ScheduleError
from hetlab.tasks import Task, TaskGraph, independent_tasks
from properties.strategies import instances, magnitude_instances, random_instance

U = Fraction(1, 2 ** 53)     # unit roundoff of a double
K = 4                        # roundings a stored time may carry (see the module docstring)

# Refusals a policy may give, with the reason it must be given for (anything else is a failure).
CANNOT_RUN = ("cannot run", "needs every task to run on every device")
INDEPENDENT_ONLY = "independent tasks only"

deterministic = settings(derandomize=True, database=None, deadline=None, print_blob=True,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- the exact checker -------------------------------------------------------------------------------------

def run_time(task: Task, device: Device) -> Fraction | None:
    """Exact run time from the definitions; None where the device cannot run the task."""
    if task.times is not None:
        t = task.times.get(device.name, math.inf)
        return None if t == math.inf else Fraction(t)
    factor = device.affinity.get(task.op, 1.0) if task.op is not None else 1.0
    return Fraction(task.work) / (Fraction(device.speed) * Fraction(factor))


def transfer(a: Device, b: Device, data: float) -> Fraction:
    """Nothing on one device; otherwise the larger latency plus data over the smaller bandwidth."""
    if a.name == b.name:
        return Fraction(0)
    bandwidth = min(a.link.bandwidth, b.link.bandwidth)
    latency = Fraction(max(a.link.latency, b.link.latency))
    return latency if data == 0 or bandwidth == math.inf else latency + Fraction(data) / Fraction(bandwidth)


def infeasibilities(schedule: Schedule, graph: TaskGraph, devices: list[Device]) -> list[str]:
    """Every rule the schedule breaks, in words (an empty list: feasible)."""
    names = [t.name for t in graph.tasks]
    n, m = len(names), len(devices)
    if not len(schedule.device_of) == len(schedule.start) == len(schedule.end) == n:
        return [f"{n} tasks but {len(schedule.start)} placements"]
    found, place = [], []
    for i, task in enumerate(graph.tasks):
        j, s, e = int(schedule.device_of[i]), float(schedule.start[i]), float(schedule.end[i])
        if not (0 <= j < m and math.isfinite(s) and math.isfinite(e) and 0 <= s <= e):
            found.append(f"{task.name}: device {j}, [{s!r}, {e!r}]")
            continue
        c = run_time(task, devices[j])
        if c is None:
            found.append(f"{task.name} is on {devices[j].name}, which cannot run it")
            continue
        exact_end = Fraction(s) + c
        if abs(Fraction(e) - exact_end) > K * U * exact_end:
            found.append(f"{task.name} runs [{s!r}, {e!r}] on {devices[j].name}; its run time is {float(c)!r}")
        place.append((j, s, e, c))
    if found:
        return found
    for j in range(m):
        runs = [(s, e, i) for i, (d, s, e, _) in enumerate(place) if d == j and e > s]
        runs.sort()
        reach, last = -math.inf, -1
        for s, e, i in runs:
            if s < reach:
                found.append(f"{names[last]} and {names[i]} overlap on {devices[j].name}")
            if e > reach:
                reach, last = e, i
        starts = [s for s, _, _ in runs]
        furthest = list(np.maximum.accumulate([e for _, e, _ in runs])) if runs else []
        for i, (d, s, e, c) in enumerate(place):
            if d == j and e == s and c > 0:
                k = bisect.bisect_left(starts, s)       # runs that start strictly before s
                if k and furthest[k - 1] > s:
                    found.append(f"{names[i]} (run time {float(c)!r}) sits inside a run on {devices[j].name}")
    for (src, dst), data in graph.edges.items():
        a, b = graph.index[src], graph.index[dst]
        arrival = Fraction(place[a][2]) + transfer(devices[place[a][0]], devices[place[b][0]], data)
        if Fraction(place[b][1]) < arrival * (1 - K * U):
            found.append(f"{dst} starts at {place[b][1]!r} before its input from {src} arrives at {float(arrival)!r}")
    if schedule.makespan != max(e for _, _, e, _ in place):
        found.append(f"makespan {schedule.makespan!r} is not the last end")
    return found


def schedule_or_refusal(policy, graph, devices):
    """The policy's schedule, or None when it refuses for a reason this instance really has."""
    try:
        return policy(graph, devices)
    except ValueError as error:
        message = str(error)
        if INDEPENDENT_ONLY in message:
            assert graph.edges and policy is S.article_demo, message
            return None
        if policy is S.optimal and "node_limit" in message:
            return None
        assert any(reason in message for reason in CANNOT_RUN), message
        assert any(run_time(t, d) is None for t in graph.tasks for d in devices), message
        return None


def assert_feasible(policy, graph, devices) -> Schedule | None:
    schedule = schedule_or_refusal(policy, graph, devices)
    if schedule is not None:
        assert infeasibilities(schedule, graph, devices) == [], policy.__name__
        schedule.validate()    # what is exactly feasible, validate() accepts too
        fastest = max(min(c for d in devices if (c := run_time(t, d)) is not None) for t in graph.tasks)
        assert Fraction(schedule.makespan) >= fastest * (1 - K * U), policy.__name__   # the longest task
    return schedule


POLICIES = list(S.POLICIES.values())
HEURISTICS = [p for p in POLICIES if p is not S.optimal]


# --- the checker itself ------------------------------------------------------------------------------------

def test_the_checker_catches_what_it_should():
    # A hand computation: a on D1 [0, 2]; b needs a's 4 data units over min(2, 4) = 2 plus latency max(1, 0) = 1,
    # so it may start at 2 + 1 + 4 / 2 = 5 on D0.
    devices = [Device("D0", link=Link(1.0, 2.0)), Device("D1", link=Link(0.0, 4.0))]
    graph = TaskGraph([Task("a", 2.0), Task("b", 2.0, times={"D0": 2.0})], [("a", "b", 4.0)])
    assert infeasibilities(Schedule(graph, devices, [1, 0], [0.0, 5.0], [2.0, 7.0]), graph, devices) == []
    bad = {"before its input": Schedule(graph, devices, [1, 0], [0.0, 4.5], [2.0, 6.5]),
           "overlap": Schedule(graph, devices, [0, 0], [0.0, 1.0], [2.0, 3.0]),
           "its run time is 2.0": Schedule(graph, devices, [1, 0], [0.0, 5.0], [1.0, 7.0]),
           "cannot run it": Schedule(graph, devices, [0, 1], [0.0, 5.0], [2.0, 7.0])}
    for words, schedule in bad.items():
        assert any(words in text for text in infeasibilities(schedule, graph, devices)), words


def test_the_checker_is_exact_where_validate_allows_rounding():
    # One ulp matters: b starts at the float just below a's end.
    graph = independent_tasks([0.1, 0.2])
    a_end = 0.1
    ok = Schedule(graph, identical(1), [0, 0], [0.0, a_end], [a_end, a_end + 0.2])
    early = Schedule(graph, identical(1), [0, 0], [0.0, math.nextafter(a_end, 0)], [a_end, a_end + 0.2])
    assert infeasibilities(ok, graph, identical(1)) == []
    assert "overlap" in infeasibilities(early, graph, identical(1))[0]
    # A tiny task that vanished in rounding at 1e11 may touch a run, not sit inside one.
    graph = TaskGraph([Task("big", 3e11), Task("tiny", 1e-12)])
    inside = Schedule(graph, identical(1), [0, 0], [0.0, 1e11], [3e11, 1e11])
    touching = Schedule(graph, identical(1), [0, 0], [0.0, 3e11], [3e11, 3e11])
    assert "sits inside" in infeasibilities(inside, graph, identical(1))[0]
    assert infeasibilities(touching, graph, identical(1)) == []


# --- properties --------------------------------------------------------------------------------------------

@settings(deterministic, max_examples=150)
@given(magnitude_instances())
def test_every_heuristic_is_feasible_at_every_magnitude(instance):
    graph, devices = instance
    for policy in HEURISTICS:
        assert_feasible(policy, graph, devices)
    for policy in (S.eft, S.lpt, S.heft, S.cpop, S.by_affinity):   # they may put any task anywhere: no refusal
        assert schedule_or_refusal(policy, graph, devices) is not None, policy.__name__


@settings(deterministic, max_examples=60)
@given(magnitude_instances(max_tasks=6, max_devices=3))
def test_optimal_is_feasible_at_every_magnitude_and_no_heuristic_beats_it(instance):
    graph, devices = instance
    best = assert_feasible(S.optimal, graph, devices)
    if best is not None:
        for policy in HEURISTICS:
            schedule = schedule_or_refusal(policy, graph, devices)
            if schedule is not None:
                assert schedule.makespan >= best.makespan * (1 - 1e-12), policy.__name__


@settings(deterministic, max_examples=60)
@given(magnitude_instances(max_tasks=10), st.sampled_from([0.0, 1e-12, 1.0, 1e12]),
       st.sampled_from(["round_robin", "block", "first"]), st.integers(0, 3))
def test_work_stealing_is_feasible_at_every_magnitude(instance, latency, initial, seed):
    graph, devices = instance
    assert_feasible(lambda g, d: S.work_stealing(g, d, steal_latency=latency, initial=initial, seed=seed),
                    graph, devices)


@settings(deterministic, max_examples=160)
@given(instances())
def test_every_policy_is_feasible_on_mixed_instances_and_no_better_than_the_lower_bound(instance):
    # Zero-duration tasks, zero-data edges, devices that cannot run some tasks, one magnitude 1e-3 .. 1e200.
    graph, devices, _ = instance
    bound = S.lower_bound(graph, devices)
    assert math.isfinite(bound) and bound >= 0
    for policy in HEURISTICS:
        schedule = assert_feasible(policy, graph, devices)
        if schedule is not None:
            assert schedule.makespan >= bound * (1 - 1e-9), policy.__name__


@settings(deterministic, max_examples=60)
@given(instances(max_tasks=6, max_devices=3))
def test_no_heuristic_beats_optimal_and_optimal_is_feasible(instance):
    graph, devices, _ = instance
    best = assert_feasible(S.optimal, graph, devices)
    assert best.makespan >= S.lower_bound(graph, devices) * (1 - 1e-9)
    for policy in HEURISTICS:
        schedule = schedule_or_refusal(policy, graph, devices)
        if schedule is not None:
            assert schedule.makespan >= best.makespan * (1 - 1e-9), policy.__name__


@settings(deterministic, max_examples=60)
@given(instances(max_tasks=9, edges=False))
def test_independent_task_sets(instance):
    # Without edges the article's demo takes part too, and earliest free / LPT / EFT / HEFT must fill every
    # device they use from time 0 on without idling (no inputs to wait for).
    graph, devices, _ = instance
    for policy in HEURISTICS:
        schedule = assert_feasible(policy, graph, devices)
        if schedule is not None and policy in (S.earliest_free, S.eft, S.lpt, S.heft):
            for j in range(len(devices)):
                busy = sorted((s, e) for s, e, d in zip(schedule.start, schedule.end, schedule.device_of) if d == j)
                clock = 0.0
                for s, e in busy:
                    assert s <= clock, (policy.__name__, j, busy)
                    clock = max(clock, e)


# --- the reproductions of the review (shared/review/2026-12-04/adversarial.md) -------------------------------

def test_sixty_random_dags_from_1e_minus_12_to_1e12_give_feasible_schedules_under_every_policy():
    # Review, part 2A: CPOP overlapped tasks on 8 of 60 such DAGs (9 of these 60 before the fix).
    for seed in range(60):
        graph, devices = random_instance(seed)
        for policy in POLICIES:
            if policy is S.optimal and len(graph.tasks) > 12:
                continue
            assert_feasible(policy, graph, devices)


@pytest.mark.parametrize("policy", [S.serial, S.round_robin, S.block, S.by_affinity])
def test_static_policies_start_no_task_before_the_previous_one_ends(policy):
    # Review defect 16: start = cumsum - duration put 5 (serial) to 18 (round-robin) of 1e5 tasks an ulp early.
    # (Serial on the CPU, speed 10: 4 of these 20,000 tasks started an ulp early.)
    rng = np.random.default_rng(0)
    graph = independent_tasks(rng.uniform(1, 10, 20_000).tolist())
    s = policy(graph, kitchen())
    for j in np.unique(s.device_of):
        idx = np.flatnonzero(s.device_of == j)
        idx = idx[np.argsort(s.start[idx], kind="stable")]
        assert s.start[idx[0]] == 0.0 and (s.start[idx[1:]] == s.end[idx[:-1]]).all()   # back to back


def test_a_tiny_task_after_a_huge_one_starts_when_the_huge_one_ends():
    # Review defect 16: w1 "started" at 0 while w0 ran over [0, 1e-300].
    tasks = [Task("w0", 1e-300), Task("w1", 1e290)]
    s = S.serial(tasks, [Device("a")])
    assert s.start.tolist() == [0.0, 1e-300] and infeasibilities(s, TaskGraph(tasks), [Device("a")]) == []


def test_validate_refuses_what_the_exact_checker_refuses_with_a_long_task_elsewhere():
    # Review defect 8: with rtol x max(end), one 1e12 task widened the tolerance to 1000 time units.
    graph = TaskGraph([Task("a", 1.0), Task("b", 1.0), Task("huge", 1e12)])
    overlap = Schedule(graph, identical(2), [0, 0, 1], [0.0, 0.5, 0.0], [1.0, 1.5, 1e12])
    assert infeasibilities(overlap, graph, identical(2))
    with pytest.raises(ScheduleError, match="'a' and 'b' overlap on D0"):
        overlap.validate()


def test_cpop_keeps_tasks_apart_when_a_tiny_run_time_vanishes_at_a_large_start():
    # Review reproduction 4: t0's 1e-12 at start 1e11 rounds away, and CPOP put t3 [1e11, 4e11] and
    # t4 [1e11, 1e11 + 1000] on P0 together. One device runs the five tasks back to back: 1e11 + 1e11 + 3e11 + 1e3.
    graph = TaskGraph([Task("t0", times={"P0": 1e-12}), Task("t1", times={"P0": 1e11}),
                       Task("t2", times={"P0": 1e11}), Task("t3", times={"P0": 3e11}),
                       Task("t4", times={"P0": 1e3})],
                      [("t0", "t2"), ("t0", "t3"), ("t0", "t4"), ("t1", "t3")])
    devices = [Device("P0")]
    s = S.cpop(graph, devices).validate()
    assert infeasibilities(s, graph, devices) == []
    assert s.makespan == pytest.approx(5e11 + 1e3, rel=1e-15)
