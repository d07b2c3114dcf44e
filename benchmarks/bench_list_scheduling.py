"""Benchmark 1: earliest-free list scheduling of 200,000 independent tasks on 64 devices.

hetlab.earliest_free against the article's own algorithm (benchmarks/article_demo.py, copied
verbatim), on the same tasks in the same run. Both must give the same makespan.

Goal stated in the issue: hetlab >= 10x faster. Two hetlab paths are timed: the pure-Python one
(one heapreplace per task; the article also scans the other 63 heap entries per task for its dead
preference branch) and the compiled numba kernel that ``hetlab[fast]`` adds (used automatically from
20,000 tasks). The kernel's first call in a process loads or compiles it; that time is printed apart.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import article_demo  # noqa: E402
from _common import best_of  # noqa: E402

from hetlab import _kernels  # noqa: E402
from hetlab import schedulers as S  # noqa: E402
from hetlab.devices import Device  # noqa: E402
from hetlab.tasks import Task, TaskGraph  # noqa: E402


def main(n: int = 200_000, m: int = 64) -> dict:
    rng = np.random.default_rng(0)
    work = rng.integers(1, 100, n).astype(float)
    speeds = rng.integers(5, 50, m).astype(float)
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
    return out


if __name__ == "__main__":
    main()
