"""Property tests for every scheduling policy (issue 11): random task graphs and independent task sets with
zero-duration tasks, zero-data edges, devices that cannot run some tasks, per-device links and magnitudes
from 1e-3 to 1e200. Every schedule must pass ``Schedule.validate()`` *and* the independent checker below,
which recomputes run times and transfers from the definitions (not from hetlab's cost matrices).

Sizes: up to 9 tasks on up to 4 devices for the heuristics (160 examples), up to 6 tasks on up to 3
devices for ``optimal`` (60 examples); derandomised, so every run draws the same examples.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetlab import schedulers as S
from hetlab.devices import Device, Link
from hetlab.tasks import Task, TaskGraph

SCALES = [1e-3, 1.0, 1e6, 1e200]
KINDS = ["CPU", "GPU", "NPU", "GPU"]
OPS = ["matmul", "conv", "control"]

# Refusals a policy may give, with the reason it must be given for (anything else is a failure).
CANNOT_RUN = ("cannot run", "needs every task to run on every device")
INDEPENDENT_ONLY = "independent tasks only"

deterministic = settings(derandomize=True, database=None, deadline=None, print_blob=True,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- random instances ------------------------------------------------------------------------------

@st.composite
def instances(draw, max_tasks=9, max_devices=4, edges=None):
    """(graph, devices, scale): tasks are plain work, work with an operation kind (device affinity), or
    explicit per-device times that leave some devices out (those devices cannot run the task)."""
    scale = draw(st.sampled_from(SCALES))
    m = draw(st.integers(1, max_devices))
    devices = []
    for j in range(m):
        speed = draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))
        affinity = draw(st.sampled_from([{}, {"matmul": 4.0, "control": 0.25}, {"conv": 2.0}]))
        latency = draw(st.sampled_from([0.0, 0.5, 2.0])) * scale
        bandwidth = draw(st.sampled_from([math.inf, 1.0, 4.0]))
        devices.append(Device(f"D{j}", KINDS[j], speed, affinity, link=Link(latency, bandwidth)))
    n = draw(st.integers(1, max_tasks))
    style = draw(st.sampled_from(["work", "ops", "times"]))
    tasks = []
    for i in range(n):
        work = draw(st.sampled_from([0.0, 1.0, 2.0, 3.0, 5.0, 8.0])) * scale
        kind = draw(st.sampled_from([None, "CPU", "GPU", "NPU"]))
        if style == "times":
            times = {}
            for d in devices:
                t = draw(st.sampled_from([None, 0.0, 1.0, 2.0, 4.0, 7.0]))
                if t is not None:
                    times[d.name] = t * scale
            if not any(math.isfinite(t) for t in times.values()):
                times[devices[draw(st.integers(0, m - 1))].name] = 1.0 * scale
            tasks.append(Task(f"t{i}", work, kind, times=times))
        else:
            op = draw(st.sampled_from([None, *OPS])) if style == "ops" else None
            tasks.append(Task(f"t{i}", work, kind, op=op))
    with_edges = draw(st.sampled_from([True, True, True, False])) if edges is None else edges
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=min(len(pairs), 14))) \
        if with_edges and pairs else []
    data = [draw(st.sampled_from([0.0, 0.0, 1.0, 3.0])) * scale for _ in chosen]
    graph = TaskGraph(tasks, [(f"t{a}", f"t{b}", d) for (a, b), d in zip(chosen, data)])
    return graph, devices, scale


# --- an independent checker --------------------------------------------------------------------------

def run_time(task: Task, device: Device) -> float:
    """From the definitions: an explicit time for this device (none: cannot run), else work / (speed * affinity)."""
    if task.times is not None:
        return task.times.get(device.name, math.inf)
    factor = device.affinity.get(task.op, 1.0) if task.op is not None else 1.0
    return task.work / (device.speed * factor)


def transfer(a: Device, b: Device, data: float) -> float:
    """Nothing on one device; otherwise the larger latency plus data over the smaller bandwidth."""
    if a.name == b.name:
        return 0.0
    bandwidth = min(a.link.bandwidth, b.link.bandwidth)
    return max(a.link.latency, b.link.latency) + (data / bandwidth if data else 0.0)


def check(schedule, graph: TaskGraph, devices: list[Device]) -> None:
    """Assert the schedule is feasible, recomputing everything with plain loops."""
    names = [t.name for t in graph.tasks]
    n = len(names)
    assert len(schedule.device_of) == len(schedule.start) == len(schedule.end) == n   # every task once
    place = {}
    for i, name in enumerate(names):
        j = int(schedule.device_of[i])
        assert 0 <= j < len(devices), (name, j)
        start, end = float(schedule.start[i]), float(schedule.end[i])
        assert math.isfinite(start) and math.isfinite(end), (name, start, end)
        place[name] = (devices[j], start, end)
    horizon = max((e for _, _, e in place.values()), default=0.0)
    tol = 1e-9 * max(horizon, 1e-300)
    for task in graph.tasks:
        device, start, end = place[task.name]
        assert start >= -tol, (task.name, start)
        expected = run_time(task, device)
        assert math.isfinite(expected), f"{task.name} is on {device.name}, which cannot run it"
        assert abs((end - start) - expected) <= tol + 1e-9 * expected, (task.name, end - start, expected)
    for (src, dst), data in graph.edges.items():
        a, _, end_a = place[src]
        b, start_b, _ = place[dst]
        assert start_b >= end_a + transfer(a, b, data) - tol, (src, dst, start_b, end_a, transfer(a, b, data))
    for x in names:
        for y in names:
            dx, sx, ex = place[x]
            dy, sy, ey = place[y]
            if x < y and dx.name == dy.name and ex > sx and ey > sy:   # two positive-length runs on one device
                assert min(ex, ey) - max(sx, sy) <= tol, f"{x} [{sx}, {ex}] and {y} [{sy}, {ey}] overlap"
    assert schedule.makespan == horizon


def schedule_or_refusal(name, graph, devices):
    """The policy's schedule, or None when it refuses for a reason this instance really has."""
    try:
        return S.POLICIES[name](graph, devices)
    except ValueError as error:
        message = str(error)
        if INDEPENDENT_ONLY in message:
            assert graph.edges and name == "article demo", message
            return None
        assert any(reason in message for reason in CANNOT_RUN), message
        assert any(not math.isfinite(run_time(t, d)) for t in graph.tasks for d in devices), message
        return None


HEURISTICS = [name for name in S.POLICIES if name != "optimal"]


# --- properties --------------------------------------------------------------------------------------

@settings(deterministic, max_examples=160)
@given(instances())
def test_every_policy_gives_a_feasible_schedule_no_better_than_the_lower_bound(instance):
    graph, devices, _ = instance
    bound = S.lower_bound(graph, devices)
    assert math.isfinite(bound) and bound >= 0
    for name in HEURISTICS:
        schedule = schedule_or_refusal(name, graph, devices)
        if schedule is None:
            continue
        schedule.validate()
        check(schedule, graph, devices)
        assert schedule.makespan >= bound * (1 - 1e-9), name
    # Policies that may place any task anywhere never refuse: every task can run somewhere.
    for name in ("EFT", "LPT", "HEFT", "by affinity"):
        assert schedule_or_refusal(name, graph, devices) is not None, name


@settings(deterministic, max_examples=60)
@given(instances(max_tasks=6, max_devices=3))
def test_no_heuristic_beats_optimal_and_optimal_is_feasible(instance):
    graph, devices, _ = instance
    best = S.optimal(graph, devices).validate()
    check(best, graph, devices)
    assert best.makespan >= S.lower_bound(graph, devices) * (1 - 1e-9)
    for name in HEURISTICS:
        schedule = schedule_or_refusal(name, graph, devices)
        if schedule is not None:
            assert schedule.makespan >= best.makespan * (1 - 1e-9), name


@settings(deterministic, max_examples=60)
@given(instances(max_tasks=9, edges=False))
def test_independent_task_sets(instance):
    # Without edges the article's demo takes part too, and earliest free / LPT / EFT must fill every device
    # they use from time 0 on without idling (no inputs to wait for).
    graph, devices, _ = instance
    for name in HEURISTICS:
        schedule = schedule_or_refusal(name, graph, devices)
        if schedule is None:
            continue
        check(schedule, graph, devices)
        if name in ("earliest free", "EFT", "LPT", "HEFT"):
            for j in range(len(devices)):
                busy = sorted((s, e) for s, e, d in zip(schedule.start, schedule.end, schedule.device_of) if d == j)
                clock = 0.0
                for s, e in busy:
                    assert s <= clock * (1 + 1e-9) + 1e-300, (name, j, busy)
                    clock = max(clock, e)


def test_the_checker_catches_what_it_should():
    # The checker must be able to fail: an overlap, a short run, a missing transfer and an unrunnable device.
    from hetlab.schedule import Schedule

    devices = [Device("D0", link=Link(1.0, 2.0)), Device("D1", link=Link(0.0, 4.0))]
    graph = TaskGraph([Task("a", 2.0), Task("b", 2.0, times={"D0": 2.0})], [("a", "b", 4.0)])
    good = Schedule(graph, devices, [1, 0], [0.0, 5.0], [2.0, 7.0])   # 2 + max(1, 0) + 4 / min(2, 4) = 5
    check(good, graph, devices)
    bad = [Schedule(graph, devices, [1, 0], [0.0, 4.5], [2.0, 6.5]),     # input not there yet
           Schedule(graph, devices, [0, 0], [0.0, 1.0], [2.0, 3.0]),     # overlap on D0
           Schedule(graph, devices, [1, 0], [0.0, 5.0], [1.0, 7.0]),     # a runs 1, not 2
           Schedule(graph, devices, [0, 1], [0.0, 5.0], [2.0, 7.0])]     # D1 cannot run b
    for schedule in bad:
        with pytest.raises(AssertionError):
            check(schedule, graph, devices)
