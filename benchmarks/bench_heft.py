"""Benchmark 2: HEFT scaling on 16 related devices, and against anrg-saga's HEFT.

(a) Independent tasks, 10,000 -> 100,000 (issue 11, item 11: 10.3 s and > 150 s before; goal: at most 15x the
    time for 10x the tasks). (b) Random DAGs (``random_dag``, mean in-degree 3), 10,000 -> 100,000 tasks
    (95.6 s at 100k before). Each size prints wall-clock and CPU seconds (best of 3 at 10k, of 2 at 100k); the
    machine may be shared, so the CPU time is the steadier figure for the growth.

(c) hetlab.heft against the HEFT of the PyPI package anrg-saga on DAGs of 1,000 to 5,000 tasks. saga needs
Python >= 3.12 and about 700 MB of dependencies, so it lives in its own venv (``make bench-saga-venv`` makes
``benchmarks/.venv-saga``) and runs in a subprocess on the same instance (JSON). saga's upward rank averages
communication over all links including each device's link to itself (time 0), and it adds zero-cost super
source / sink tasks, so its ranks, and sometimes its order, differ slightly from the paper's definition that
hetlab follows; both makespans are printed.

Run time = cost / speed, transfer = data / bandwidth (bandwidth of a pair: the slower end).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import timed  # noqa: E402

from hetlab import schedulers as S  # noqa: E402
from hetlab.devices import Device, Link  # noqa: E402
from hetlab.tasks import independent_tasks, random_dag  # noqa: E402

HERE = Path(__file__).parent
SAGA_PYTHON = HERE / ".venv-saga" / "bin" / "python"


def related_devices(m: int = 16) -> list[Device]:
    rng = np.random.default_rng(0)
    speeds, bandwidths = rng.uniform(1, 4, m), rng.uniform(5, 20, m)
    return [Device(f"P{j:02d}", "CPU", float(s), link=Link(0.0, float(b)))
            for j, (s, b) in enumerate(zip(speeds, bandwidths))]


def instance(n: int, devices: int = 16):
    devs = related_devices(devices)
    graph = random_dag(n, mean_degree=3, seed=n)
    exported = {"devices": [d.name for d in devs], "speeds": [d.speed for d in devs],
                "bandwidths": [d.link.bandwidth for d in devs],
                "tasks": [t.name for t in graph.tasks], "work": graph.work.tolist(),
                "edges": [[a, b, d] for (a, b), d in graph.edges.items()]}
    return graph, devs, exported


def scaling(label: str, make, sizes=(10_000, 100_000)) -> dict:
    devs = related_devices()
    rows = []
    for n in sizes:
        graph = make(n)
        wall, cpu, s = timed(lambda g=graph: S.heft(g, devs), 3 if n <= 20_000 else 2)
        s.validate()
        rows.append((n, wall, cpu))
        print(f"    {label} n={n:>7,}, edges={len(graph.edges):>7,}: {wall:7.3f} s wall, {cpu:7.3f} s CPU, "
              f"makespan {s.makespan:.3f}")
    (n0, w0, c0), (n1, w1, c1) = rows[0], rows[-1]
    print(f"    {label} growth for {n1 / n0:.0f}x tasks: {w1 / w0:.1f}x wall, {c1 / c0:.1f}x CPU (goal <= 15x)")
    return {"sizes": sizes, "wall": [r[1] for r in rows], "cpu": [r[2] for r in rows],
            "growth_wall": w1 / w0, "growth_cpu": c1 / c0}


def run_saga(exported: dict) -> dict | None:
    if not SAGA_PYTHON.exists():
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(exported, f)
    out = subprocess.run([str(SAGA_PYTHON), str(HERE / "saga_heft_runner.py"), f.name], capture_output=True,
                         text=True, timeout=600)
    Path(f.name).unlink()
    if out.returncode != 0:
        print(out.stderr[-2000:])
        return None
    return json.loads(out.stdout.splitlines()[-1])


def saga_available() -> bool:
    if not SAGA_PYTHON.exists():
        print("    anrg-saga: benchmarks/.venv-saga does not exist, comparison skipped "
              "(`make bench-saga-venv` creates it; needs Python >= 3.12)")
        return False
    probe = subprocess.run([str(SAGA_PYTHON), "-c", "import saga"], capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        print("    anrg-saga: benchmarks/.venv-saga exists but cannot import saga, comparison skipped "
              f"({probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else 'no message'})")
        return False
    return True


def against_saga(sizes=(1000, 2000, 5000)) -> list[dict]:
    if not saga_available():
        return []
    rows = []
    for n in sizes:
        graph, devs, exported = instance(n)
        wall, _, s = timed(lambda g=graph, d=devs: S.heft(g, d), 3)
        s.validate()
        saga = run_saga(exported)
        if not saga:
            print(f"    n={n:>5}: saga run failed")
            continue
        row = {"n": n, "hetlab_s": wall, "hetlab_makespan": s.makespan, "saga_s": saga["seconds"],
               "saga_makespan": saga["makespan"], "ratio": saga["seconds"] / wall,
               "makespan_diff": (s.makespan - saga["makespan"]) / saga["makespan"]}
        print(f"    n={n:>5}, e={len(graph.edges):>6}: hetlab {wall:.3f} s, makespan {s.makespan:.3f}; "
              f"saga {saga['seconds']:.3f} s, makespan {saga['makespan']:.3f}; hetlab {row['ratio']:.1f}x faster, "
              f"makespans differ {row['makespan_diff']:+.2%}")
        rows.append(row)
    return rows


def main(sizes=(10_000, 100_000)) -> dict:
    print("[2] HEFT on 16 related devices (issue 11 item 11: goal <= 15x time for 10x tasks)")
    rng = np.random.default_rng(1)
    out = {"independent": scaling("independent", lambda n: independent_tasks(rng.uniform(1, 10, n)), sizes),
           "dag": scaling("DAG", lambda n: random_dag(n, mean_degree=3, seed=n), sizes)}
    out["saga"] = against_saga()
    return out


if __name__ == "__main__":
    main()
