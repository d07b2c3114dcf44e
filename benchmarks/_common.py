"""Helpers shared by the benchmark scripts: best-of-k timing, in wall-clock and CPU seconds."""
from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int = 3) -> tuple[float, object]:
    """(fastest wall-clock seconds over ``repeat`` calls, the last result)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def timed(fn: Callable[[], object], repeat: int = 1) -> tuple[float, float, object]:
    """(best wall-clock seconds, best CPU seconds of this process, last result) over ``repeat`` calls; on a
    shared machine the CPU time is the steadier figure."""
    wall, cpu, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        result = fn()
        wall, cpu = min(wall, time.perf_counter() - w), min(cpu, time.process_time() - c)
    return wall, cpu, result
