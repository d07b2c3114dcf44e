"""Random scheduling instances for the property tests (hypothesis strategies and a seeded generator).

- :func:`graph_strategy` and :func:`devices_strategy`: small integer works, kinds, links; plenty of exact ties.
- :func:`instances`: plain work, work with an operation kind (affinity) or explicit per-device times that leave
  some devices out, zero-duration tasks, zero-data edges, one magnitude per instance from 1e-3 to 1e200.
- :func:`magnitude_instances` and :func:`random_instance`: every run time, latency, bandwidth and data amount
  drawn on its own from 1e-12 to 1e12, so tiny and huge quantities meet in one schedule (a tiny run time
  vanishes in rounding at a large start, ``s + c == s``).
"""
from __future__ import annotations

import math
import random

from hypothesis import strategies as st

from hetlab.devices import Device, Link
from hetlab.tasks import Task, TaskGraph

SCALES = [1e-3, 1.0, 1e6, 1e200]
KINDS = ["CPU", "GPU", "NPU", "GPU"]
OPS = ["matmul", "conv", "control"]


@st.composite
def devices_strategy(draw, max_devices=4, latency=True):
    m = draw(st.integers(1, max_devices))
    speeds = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 5.0]), min_size=m, max_size=m))
    bandwidth = draw(st.sampled_from([math.inf, 1.0, 4.0]))
    latencies = [0.0, 0.5] if latency else [0.0]
    return [Device(f"D{j}", KINDS[j], s, link=Link(draw(st.sampled_from(latencies)), bandwidth))
            for j, s in enumerate(speeds)]


@st.composite
def graph_strategy(draw, max_tasks=9, edges=True, data=True):
    n = draw(st.integers(1, max_tasks))
    works = draw(st.lists(st.integers(1, 20), min_size=n, max_size=n))
    kinds = draw(st.lists(st.sampled_from([None, "CPU", "GPU", "NPU"]), min_size=n, max_size=n))
    tasks = [Task(f"t{i}", float(w), k) for i, (w, k) in enumerate(zip(works, kinds))]
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    chosen = []
    if edges and pairs:
        chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=min(len(pairs), 12)))
    amounts = draw(st.lists(st.integers(0, 6), min_size=len(chosen), max_size=len(chosen))) if data else []
    es = [(f"t{a}", f"t{b}", float(amounts[k]) if data else 0.0) for k, (a, b) in enumerate(chosen)]
    return TaskGraph(tasks, es)


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


LOWEST, HIGHEST = -12, 12   # decimal exponents of every drawn time, latency, bandwidth and data amount


@st.composite
def magnitude_instances(draw, max_tasks=10, max_devices=4):
    """(graph, devices): each quantity ``mantissa * 10**e`` with its own ``e`` in [-12, 12], some zeros, some
    devices that cannot run a task, operation kinds with affinities; dense enough that tasks wait and gaps form."""
    def magnitude():
        return draw(st.sampled_from([1.0, 1.5, 3.0, 7.0])) * 10.0 ** draw(st.integers(LOWEST, HIGHEST))

    m = draw(st.integers(1, max_devices))
    devices = []
    for j in range(m):
        affinity = draw(st.sampled_from([{}, {"matmul": 4.0, "control": 0.25}]))
        latency = draw(st.sampled_from([0.0, None]))
        bandwidth = draw(st.sampled_from([math.inf, None]))
        devices.append(Device(f"D{j}", KINDS[j], draw(st.sampled_from([0.5, 1.0, 3.0])), affinity,
                              link=Link(magnitude() if latency is None else latency,
                                        magnitude() if bandwidth is None else bandwidth)))
    n = draw(st.integers(1, max_tasks))
    style = draw(st.sampled_from(["work", "ops", "times"]))
    tasks = []
    for i in range(n):
        if style == "times":
            times = {}
            for d in devices:
                pick = draw(st.sampled_from(["magnitude", "magnitude", "zero", "missing"]))
                if pick != "missing":
                    times[d.name] = 0.0 if pick == "zero" else magnitude()
            if not times:
                times[devices[0].name] = magnitude()
            tasks.append(Task(f"t{i}", times=times))
        else:
            work = 0.0 if draw(st.integers(0, 9)) == 0 else magnitude()
            tasks.append(Task(f"t{i}", work, op=draw(st.sampled_from([None, *OPS])) if style == "ops" else None))
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=min(len(pairs), 16))) if pairs else []
    data = [0.0 if draw(st.booleans()) else magnitude() for _ in chosen]
    return TaskGraph(tasks, [(f"t{a}", f"t{b}", d) for (a, b), d in zip(chosen, data)]), devices


def random_instance(seed: int, lowest: int = LOWEST, highest: int = HIGHEST) -> tuple[TaskGraph, list[Device]]:
    """A seeded random DAG of 5 to 40 tasks on 1 to 4 devices, each run time (per device, some devices left
    out), latency, bandwidth and data amount ``10**U(lowest, highest)`` on its own; about 3 edges a task."""
    r = random.Random(seed)

    def magnitude():
        return 10 ** r.uniform(lowest, highest)

    m = r.randint(1, 4)
    devices = [Device(f"P{j}", link=Link(r.choice([0.0, magnitude()]), r.choice([math.inf, magnitude()])))
               for j in range(m)]
    n = r.randint(5, 40)
    tasks = []
    for i in range(n):
        times = {d.name: magnitude() for d in devices if r.random() < 0.85} or {devices[0].name: magnitude()}
        tasks.append(Task(f"t{i}", times=times))
    edges = [(f"t{a}", f"t{b}", r.choice([0.0, magnitude()])) for b in range(n) for a in range(b)
             if r.random() < 3 / n]
    return TaskGraph(tasks, edges), devices
