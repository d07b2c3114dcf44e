"""Optional compiled kernels (numba), used for large inputs when ``hetlab[fast]`` is installed.

Each kernel has a pure-Python twin in the public module and the tests check that both give
identical results; without numba the twin is used and nothing else changes.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["earliest_free_kernel"]


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
