"""Benchmark 1: earliest-free list scheduling of 200,000 independent tasks on 64 devices.

hetlab.earliest_free against the article's own algorithm (benchmarks/article_demo.py, copied
verbatim), on the same tasks in the same run. Both must give the same makespan.

Goal stated in the issue: hetlab >= 10x faster. Both are pure-Python loops of one heap step per
task; the article's also scans the other 63 heap entries per task (its dead preference branch).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import article_demo  # noqa: E402
from _common import best_of  # noqa: E402

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
    t_hetlab, schedule = best_of(lambda: S.earliest_free(graph, devices))
    schedule.validate()
    same = span_article == schedule.makespan
    print(f"[1] earliest-free list scheduling, {n:,} tasks on {m} devices (best of 3)")
    print(f"    article algorithm: {t_article:.3f} s, makespan {span_article:.6f}")
    print(f"    hetlab:            {t_hetlab:.3f} s, makespan {schedule.makespan:.6f} (identical: {same})")
    print(f"    speed-up: {t_article / t_hetlab:.1f}x (goal 10x)")
    return {"article_s": t_article, "hetlab_s": t_hetlab, "ratio": t_article / t_hetlab, "same_makespan": same}


if __name__ == "__main__":
    main()
