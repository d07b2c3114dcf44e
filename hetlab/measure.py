"""Short, bounded measurements on this machine, for the chapters that compare models with reality.

Every function caps its own run time (a few seconds at most) and returns plain numbers;
the chapters print them in cells marked ``NBVAL_IGNORE_OUTPUT`` because they differ
from machine to machine.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ._validate import check_int

__all__ = ["busy_loop", "PoolTiming", "time_pools", "split_matmul", "dispatch_overhead", "cpu_count"]


def cpu_count() -> int:
    """CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def busy_loop(n: int) -> int:
    """A CPU-bound pure-Python function: holds the GIL the whole time."""
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


@dataclass(frozen=True)
class PoolTiming:
    """Wall-clock seconds for the same jobs run serially, on threads and on processes."""

    jobs: int
    workers: int
    serial: float
    threads: float
    processes: float

    def text(self) -> str:
        return (f"{self.jobs} jobs, {self.workers} workers: serial {self.serial:.3f} s, "
                f"threads {self.threads:.3f} s ({self.serial / self.threads:.2f}x), "
                f"processes {self.processes:.3f} s ({self.serial / self.processes:.2f}x)")


def time_pools(jobs: int = 8, size: int = 300_000, workers: int | None = None) -> PoolTiming:
    """Run ``jobs`` calls of :func:`busy_loop` serially, on a thread pool and on a process pool."""
    jobs = check_int("jobs", jobs, low=1, high=64)
    size = check_int("size", size, low=1, high=5_000_000)
    workers = check_int("workers", workers or cpu_count(), low=1, high=64)
    t = time.perf_counter()
    for _ in range(jobs):
        busy_loop(size)
    serial = time.perf_counter() - t
    with ThreadPoolExecutor(workers) as pool:
        t = time.perf_counter()
        list(pool.map(busy_loop, [size] * jobs))
        threads = time.perf_counter() - t
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(busy_loop, [1] * workers))  # start the workers before timing
        t = time.perf_counter()
        list(pool.map(busy_loop, [size] * jobs))
        processes = time.perf_counter() - t
    return PoolTiming(jobs, workers, serial, threads, processes)


def split_matmul(n: int = 1000, pieces=(1, 4, 16, 64, 256, 1000), workers: int | None = None,
                 repeat: int = 3) -> dict[int, float]:
    """Seconds to compute an ``n x n`` matrix product split into row blocks, one pool task per
    block, for each piece count (best of ``repeat``). numpy releases the GIL inside the product,
    so threads do run in parallel here; what grows with the piece count is the per-task overhead."""
    n = check_int("n", n, low=1, high=4096)
    repeat = check_int("repeat", repeat, low=1, high=10)
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    out: dict[int, float] = {}
    with ThreadPoolExecutor(workers or cpu_count()) as pool:
        for k in pieces:
            k = check_int("pieces", k, low=1, high=n)
            blocks = np.array_split(np.arange(n), k)
            best = np.inf
            for _ in range(repeat):
                t = time.perf_counter()
                parts = list(pool.map(lambda rows: a[rows[0]:rows[-1] + 1] @ b, blocks))
                np.concatenate(parts)
                best = min(best, time.perf_counter() - t)
            out[k] = best
    return out


def dispatch_overhead(tasks: int = 2000, workers: int | None = None) -> float:
    """Seconds per task of submitting an empty function to a thread pool and collecting it."""
    tasks = check_int("tasks", tasks, low=1, high=100_000)
    with ThreadPoolExecutor(workers or cpu_count()) as pool:
        t = time.perf_counter()
        for f in [pool.submit(int) for _ in range(tasks)]:
            f.result()
        return (time.perf_counter() - t) / tasks
