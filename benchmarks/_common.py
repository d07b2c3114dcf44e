"""Helpers shared by the benchmark scripts: best-of-k timing."""
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
