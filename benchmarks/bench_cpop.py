"""Benchmark 2b: CPOP scaling next to HEFT, which shares its gap-list engine (issue 19, item 9).

CPOP scanned every earlier busy slot of a device for each task: 2.0 s for 8,000 independent tasks and more than
240 s for 100,000 in the review of 2026-12-04 (HEFT: 0.006 s for 8,000). Goal: 100,000 independent tasks in
under 2 s. Measured here on the kitchen (three devices) for independent tasks with run time work / speed, with
explicit per-device times (the general insertion path), and on random DAGs on 16 related devices with links;
HEFT on the same instance in the same run is the baseline. Wall-clock and CPU seconds, best of 2.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import timed  # noqa: E402
from bench_heft import related_devices  # noqa: E402

from hetlab import schedulers as S  # noqa: E402
from hetlab.devices import kitchen  # noqa: E402
from hetlab.tasks import Task, TaskGraph, independent_tasks, random_dag  # noqa: E402

GOAL_SECONDS = 2.0


def with_times(graph: TaskGraph, devices) -> TaskGraph:
    """The same tasks with explicit per-device run times, so no fast path for work / speed applies."""
    return TaskGraph([Task(t.name, times={d.name: t.work / d.speed for d in devices}) for t in graph.tasks],
                     graph.edges)


def row(label: str, graph: TaskGraph, devices) -> dict:
    cpop_wall, cpop_cpu, s = timed(lambda: S.cpop(graph, devices), 2)
    heft_wall, heft_cpu, h = timed(lambda: S.heft(graph, devices), 2)
    s.validate()
    print(f"    {label:<34} n={len(graph.tasks):>7,}: CPOP {cpop_wall:6.3f} s wall ({cpop_cpu:6.3f} s CPU), "
          f"HEFT {heft_wall:6.3f} s ({heft_cpu:6.3f} s CPU); makespans {s.makespan:.1f} / {h.makespan:.1f}")
    return {"n": len(graph.tasks), "cpop_wall": cpop_wall, "cpop_cpu": cpop_cpu, "heft_wall": heft_wall,
            "heft_cpu": heft_cpu}


def main() -> dict:
    print(f"[2b] CPOP next to HEFT (issue 19 item 9: 100,000 independent tasks in < {GOAL_SECONDS:.0f} s)")
    rng = np.random.default_rng(0)
    shop = kitchen()
    out = {}
    for n in (8_000, 100_000):
        graph = independent_tasks(rng.uniform(1, 10, n).tolist())
        out[f"independent_{n}"] = row("independent, work / speed", graph, shop)
    out["independent_times"] = row("independent, per-device times", with_times(graph, shop), shop)
    devices = related_devices()
    for n in (10_000, 100_000):
        out[f"dag_{n}"] = row("random DAG, 16 devices with links", random_dag(n, mean_degree=3, seed=n), devices)
    big = out["independent_100000"]
    verdict = "met" if big["cpop_wall"] < GOAL_SECONDS else "NOT met"
    print(f"    100,000 independent tasks: {big['cpop_wall']:.3f} s (goal < {GOAL_SECONDS:.0f} s: {verdict}); "
          f"DAG growth for 10x tasks: {out['dag_100000']['cpop_cpu'] / out['dag_10000']['cpop_cpu']:.1f}x CPU")
    return out


if __name__ == "__main__":
    main()
