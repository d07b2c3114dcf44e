"""Optional compiled kernels (numba), used for large inputs when ``hetlab[fast]`` is installed.

Each kernel has a pure-Python twin in the public module and the tests check that both give
identical results; without numba the twin is used and nothing else changes.
"""
from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = ["earliest_free_kernel", "earliest_free_ready", "earliest_free_cached"]


@lru_cache(maxsize=1)
def earliest_free_kernel():
    """Compiled earliest-free list scheduling ``(work, speeds) -> (device_of, start)``, or None."""
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(cache=True)
    def kernel(work, speeds):
        n, m = work.size, speeds.size
        heap_t = np.zeros(m)
        heap_j = np.arange(m)
        device_of = np.empty(n, dtype=np.int64)
        start = np.empty(n)
        for i in range(n):
            free_at, j = heap_t[0], heap_j[0]
            device_of[i] = j
            start[i] = free_at
            heap_t[0] = free_at + work[i] / speeds[j]     # replace the root, then sift it down
            # Order by (free time, device index), exactly like Python's tuple comparison.
            k = 0
            while True:
                smallest = k
                for child in (2 * k + 1, 2 * k + 2):
                    if child < m and (heap_t[child] < heap_t[smallest] or (
                            heap_t[child] == heap_t[smallest] and heap_j[child] < heap_j[smallest])):
                        smallest = child
                if smallest == k:
                    break
                heap_t[k], heap_t[smallest] = heap_t[smallest], heap_t[k]
                heap_j[k], heap_j[smallest] = heap_j[smallest], heap_j[k]
                k = smallest
        return device_of, start

    return kernel


def earliest_free_ready() -> bool:
    """True when this process has already compiled or loaded the kernel (its next call costs microseconds).
    Imports nothing: False whenever numba has not been imported."""
    if "numba" not in sys.modules:
        return False
    info = getattr(earliest_free_kernel, "cache_info", None)
    if info is None or info().currsize == 0:
        return False
    kernel = earliest_free_kernel()
    return kernel is not None and bool(kernel.signatures)


def earliest_free_cached() -> bool:
    """True when numba's on-disk cache holds the kernel for this Python, so a fresh process loads it
    instead of compiling it (numba still checks that the cache matches the source)."""
    pattern = f"_kernels.earliest_free_kernel.locals.kernel-*.py{sys.version_info[0]}{sys.version_info[1]}.nbi"
    places = [Path(__file__).parent / "__pycache__"]
    if os.environ.get("NUMBA_CACHE_DIR"):
        places.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    return any(next(place.rglob(pattern), None) is not None for place in places if place.is_dir())
