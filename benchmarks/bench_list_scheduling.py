"""Benchmark 1: earliest-free list scheduling of 200,000 independent tasks on 64 devices.

hetlab.earliest_free (the greedy engine, hetlab.schedulers.list_scheduling.central_queue) against the article's own
algorithm (hetlab/book/_article_program.py, via benchmarks/article_demo.py; the article's code unchanged), on the same
tasks in the same run. Both must give the same makespan. The article breaks ties between devices free at the same
moment by device name, the engine by speed (then listing order): the devices are named in order of decreasing speed
(D00 fastest), so the two rules pick the same device and the schedules are identical.

Goal stated in the issue: hetlab >= 10x faster. Two hetlab paths are timed: the pure-Python one
(one heapreplace per task; the article also scans the other 63 heap entries per task for its dead
preference branch) and the compiled numba kernel that ``hetlab[fast]`` adds. The kernel's first call in a
process imports numba and loads (or compiles) it; that time is printed apart.

Issue 11, item 12: a fresh process pays that first call, so ``compiled=None`` uses the kernel only once it
is loaded in the process (from 20,000 tasks) or, in a fresh process, from ``FRESH_FROM`` tasks with a warm
on-disk cache. The last section runs each path in a fresh process (the call's time, numba import included)
and what the automatic choice does there.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import article_demo  # noqa: E402
from _common import best_of  # noqa: E402

from hetlab import schedulers as S  # noqa: E402
from hetlab.devices import Device  # noqa: E402
from hetlab.schedulers import _kernels  # noqa: E402
from hetlab.tasks import Task, TaskGraph  # noqa: E402


def instance(n: int, m: int):
    rng = np.random.default_rng(0)
    work = rng.integers(1, 100, n).astype(float)
    speeds = np.sort(rng.integers(5, 50, m).astype(float))[::-1]      # D00 fastest: name order = speed order
    graph = TaskGraph(Task(f"T{i}", w) for i, w in enumerate(work.tolist()))
    return graph, [Device(f"D{j:02d}", "CPU", s) for j, s in enumerate(speeds.tolist())]


def fresh_call(mode: str, n: int, m: int) -> None:
    """Run in a fresh process: time one earliest_free call (numba's import and load included)."""
    graph, devices = instance(n, m)
    compiled = {"python": False, "compiled": True, "auto": None}[mode]
    start = time.perf_counter()
    S.earliest_free(graph, devices, compiled=compiled)
    used = "numba" in sys.modules
    print(f"{time.perf_counter() - start:.4f} {int(used)}")


def fresh_processes(sizes=(20_000, 200_000, 1_000_000), m: int = 64) -> list[dict]:
    cached = _kernels.earliest_free_cached()
    print(f"    fresh process per call (numba import and kernel load included; on-disk cache "
          f"{'warm' if cached else 'cold: first compiled call compiles'}; FRESH_FROM = {S.FRESH_FROM:,})")
    rows = []
    for n in sizes:
        row = {"n": n}
        for mode in ("python", "compiled", "auto"):
            out = subprocess.run([sys.executable, __file__, "--fresh", mode, str(n), str(m)], capture_output=True,
                                 text=True, timeout=600)
            if out.returncode != 0:
                print(out.stderr[-1000:])
                return rows
            seconds, used = out.stdout.split()
            row[mode] = float(seconds)
            if mode == "auto":
                row["auto_used_numba"] = used == "1"
        print(f"      n={n:>9,}: Python {row['python']:.3f} s, numba {row['compiled']:.3f} s, automatic "
              f"{row['auto']:.3f} s ({'numba' if row['auto_used_numba'] else 'Python'})")
        rows.append(row)
    return rows


def main(n: int = 200_000, m: int = 64) -> dict:
    rng = np.random.default_rng(0)
    work = rng.integers(1, 100, n).astype(float)
    speeds = np.sort(rng.integers(5, 50, m).astype(float))[::-1]      # D00 fastest: name order = speed order
    names = [f"D{j:02d}" for j in range(m)]
    prefs = [names[k] for k in rng.integers(0, m, n)]
    article_tasks = list(zip(work.tolist(), prefs))
    article_devices = dict(zip(names, speeds.tolist()))
    graph = TaskGraph(Task(f"T{i}", w, k) for i, (w, k) in enumerate(article_tasks))
    devices = [Device(name, "CPU", s) for name, s in article_devices.items()]

    t_article, span_article = best_of(lambda: article_demo.parallel_time(article_tasks, article_devices))
    t_python, python = best_of(lambda: S.earliest_free(graph, devices, compiled=False))
    python.validate()
    print(f"[1] earliest-free list scheduling, {n:,} tasks on {m} devices (best of 3)")
    print(f"    article algorithm:     {t_article:.3f} s, makespan {span_article:.6f}")
    print(f"    hetlab (pure Python):  {t_python:.3f} s, makespan {python.makespan:.6f} "
          f"(identical: {span_article == python.makespan}), {t_article / t_python:.1f}x")
    out = {"article_s": t_article, "python_s": t_python, "python_ratio": t_article / t_python}
    if _kernels.earliest_free_kernel() is None:
        print("    hetlab (compiled): numba not installed (pip install 'hetlab[fast]')")
        return out
    start = time.perf_counter()
    S.earliest_free(graph, devices, compiled=True)
    first = time.perf_counter() - start
    t_compiled, compiled = best_of(lambda: S.earliest_free(graph, devices, compiled=True))
    compiled.validate()
    same = span_article == compiled.makespan and (compiled.device_of == python.device_of).all()
    print(f"    hetlab (numba kernel): {t_compiled:.3f} s, makespan {compiled.makespan:.6f} "
          f"(identical schedule: {same}), {t_article / t_compiled:.1f}x (goal 10x); "
          f"first call in this process {first:.2f} s (load/compile)")
    out.update(compiled_s=t_compiled, compiled_ratio=t_article / t_compiled, first_call_s=first)
    out["fresh"] = fresh_processes(m=m)
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--fresh"]:
        fresh_call(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        main()
