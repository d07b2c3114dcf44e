"""Benchmark 2: HEFT on random DAGs of 1,000 and 5,000 tasks on 16 related devices.

Run time = cost / speed, transfer = data / bandwidth (bandwidth of a pair: the slower end).
hetlab.heft against the HEFT of the PyPI package anrg-saga, which needs Python >= 3.12 and
about 700 MB of dependencies, so it lives in its own venv (``make bench-saga-venv`` makes
``benchmarks/.venv-saga``) and runs in a subprocess on the same instance (JSON). saga's upward
rank averages communication over all links including each device's link to itself (time 0),
and it adds zero-cost super source / sink tasks, so its ranks, and sometimes its order, differ
slightly from the paper's definition that hetlab follows; both makespans are printed.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import best_of  # noqa: E402

from hetlab import schedulers as S  # noqa: E402
from hetlab.devices import Device, Link  # noqa: E402
from hetlab.tasks import random_dag  # noqa: E402

HERE = Path(__file__).parent
SAGA_PYTHON = HERE / ".venv-saga" / "bin" / "python"


def instance(n: int, devices: int = 16):
    rng = np.random.default_rng(0)
    speeds, bandwidths = rng.uniform(1, 4, devices), rng.uniform(5, 20, devices)
    devs = [Device(f"P{j:02d}", "CPU", float(s), link=Link(0.0, float(b)))
            for j, (s, b) in enumerate(zip(speeds, bandwidths))]
    graph = random_dag(n, mean_degree=3, seed=n)
    exported = {"devices": [d.name for d in devs], "speeds": speeds.tolist(), "bandwidths": bandwidths.tolist(),
                "tasks": [t.name for t in graph.tasks], "work": graph.work.tolist(),
                "edges": [[a, b, d] for (a, b), d in graph.edges.items()]}
    return graph, devs, exported


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


def main(sizes=(1000, 2000, 5000)) -> list[dict]:
    print("[2] HEFT on random DAGs, 16 related devices (hetlab best of 3, saga one run)")
    if not SAGA_PYTHON.exists():
        print("    anrg-saga venv missing: run `make bench-saga-venv` to compare; timing hetlab alone")
    rows = []
    for n in sizes:
        graph, devs, exported = instance(n)
        t, s = best_of(lambda g=graph, d=devs: S.heft(g, d))
        s.validate()
        e = len(graph.edges)
        row = {"n": n, "edges": e, "hetlab_s": t, "hetlab_makespan": s.makespan, "us_per_task_edge": t / (n + e) * 1e6}
        saga = run_saga(exported)
        line = f"    n={n:>5}, e={e:>6}: hetlab {t:.3f} s ({row['us_per_task_edge']:.2f} us per task+edge), " \
               f"makespan {s.makespan:.3f}"
        if saga:
            row.update(saga_s=saga["seconds"], saga_makespan=saga["makespan"], ratio=saga["seconds"] / t,
                       makespan_diff=(s.makespan - saga["makespan"]) / saga["makespan"])
            line += (f"; saga {saga['seconds']:.3f} s, makespan {saga['makespan']:.3f}; "
                     f"hetlab {row['ratio']:.1f}x faster, makespans differ {row['makespan_diff']:+.2%}")
        print(line)
        rows.append(row)
    growth = rows[-1]["hetlab_s"] / rows[0]["hetlab_s"]
    size_growth = (rows[-1]["n"] + rows[-1]["edges"]) / (rows[0]["n"] + rows[0]["edges"])
    print(f"    growth: time x{growth:.1f} for tasks+edges x{size_growth:.1f} (linear would be equal)")
    return rows


if __name__ == "__main__":
    main()
