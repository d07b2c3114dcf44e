"""Measured granularity: split one matrix product into N row blocks and see where the time goes.

Chapter 12 asks whether "cutting a big matrix product into 1,000 pieces, one per thread" is fastest.
Timing only the thread pool mixes three effects; :func:`split_matmul_timing` measures them apart:

- ``pool``: wall seconds of the N blocks on a thread pool of ``workers`` threads (what a user sees);
- ``kernel``: CPU seconds (``time.thread_time``) to compute the same N blocks one after another in one
  thread, no pool: the arithmetic alone. It grows with N because a thin block is a less efficient
  product (a 1-row block is a matrix-vector product that re-reads all of ``b`` for one row of output);
- ``dispatch``: CPU seconds of this process (``time.process_time``, all its threads) to push N empty
  tasks through the same pool: the scheduling cost ``N * O_s`` alone.

CPU seconds, not wall seconds, for the last two: a busy machine makes a thread wait for a core, which
stretches wall time but not the CPU time the work needs, so the kernel's growth and the dispatch cost
read the same on an idle, a busy or a one-CPU machine. Before the sweep, the same function calibrates
the two figures chapter 4's model needs: ``w0``, the CPU seconds of the whole product in one block, and
``os0``, the wall seconds per task of 200 empty tasks pushed through the pool; a prediction
``N * os0 + ceil(N / workers) * w0 / N`` made from them uses nothing the sweep measures.

BLAS is pinned to ``blas_threads`` threads (threadpoolctl) while measuring, so the pool's threads are
the only parallelism: otherwise a multi-threaded BLAS already uses every core at N = 1. numpy releases
the GIL inside ``@``, so the pool's threads do run products in parallel when there are free cores.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from hetlab._validate import check_int, check_nonnegative, check_positive, check_seed, check_sequence
from hetlab.real.measure import cpu_count

__all__ = ["SplitTiming", "split_matmul_timing"]

#: Most matrix elements times piece counts one call may ask for (a few seconds on one core).
_MAX_ELEMENTS = 1500 * 1500 * 8


@dataclass(frozen=True)
class SplitTiming:
    """One sweep of :func:`split_matmul_timing`: per piece count, ``pool`` (wall s), ``kernel`` (CPU s)
    and ``dispatch`` (CPU s), each the minimum of the repeats; ``w0`` (CPU s) and ``os0`` (s per task),
    calibrated before the sweep."""

    n: int
    workers: int
    blas_threads: int
    pieces: tuple[int, ...]
    pool: tuple[float, ...]
    kernel: tuple[float, ...]
    dispatch: tuple[float, ...]
    w0: float
    os0: float

    def __post_init__(self) -> None:
        for name in ("n", "workers", "blas_threads"):
            check_int(name, getattr(self, name), low=1)
        counts = tuple(check_int("pieces", k, low=1) for k in check_sequence("pieces", self.pieces))
        object.__setattr__(self, "pieces", counts)
        for name in ("pool", "kernel", "dispatch"):
            times = tuple(check_nonnegative(name, t) for t in check_sequence(name, getattr(self, name)))
            if len(times) != len(counts):
                raise ValueError(f"pieces and {name} must have the same length, got {len(counts)} and {len(times)}")
            object.__setattr__(self, name, times)
        object.__setattr__(self, "w0", check_positive("w0", self.w0))
        object.__setattr__(self, "os0", check_nonnegative("os0", self.os0))

    def at(self, pieces: int) -> tuple[float, float, float]:
        """(pool, kernel, dispatch) seconds measured at ``pieces`` blocks."""
        pieces = check_int("pieces", pieces, low=1)
        if pieces not in self.pieces:
            raise ValueError(f"pieces must be one of the measured counts {self.pieces}, got {pieces!r}")
        k = self.pieces.index(pieces)
        return self.pool[k], self.kernel[k], self.dispatch[k]


def split_matmul_timing(n: int = 600, pieces=(1, 2, 4, 16, 64, 150, 300, 600), *, workers: int | None = None,
                        repeat: int = 5, blas_threads: int = 1, seed: int = 0) -> SplitTiming:
    """Measure an ``n x n`` float64 product split into row blocks (see the module docstring).

    ``pieces`` must lie in [1, n]; ``workers`` threads in the pool (None: :func:`hetlab.real.measure.cpu_count`).
    ``repeat`` rounds, each measuring the pool, the kernel and the dispatch for every piece count one right
    after the other, so a change in the machine's load falls on the three columns of a row alike; each
    figure is the minimum of its ``repeat`` readings. About a second for the defaults on one idle core.
    """
    n = check_int("n", n, low=1, high=1500)
    workers = cpu_count() if workers is None else check_int("workers", workers, low=1, high=64)
    repeat = check_int("repeat", repeat, low=1, high=10)
    blas_threads = check_int("blas_threads", blas_threads, low=1, high=64)
    if isinstance(pieces, (str, bytes)) or not hasattr(pieces, "__iter__"):
        raise TypeError(f"pieces must be a sequence of integers, got {type(pieces).__name__} {pieces!r}")
    counts = tuple(check_int("pieces", k, low=1, high=n) for k in pieces)
    if not counts:
        raise ValueError("pieces must hold at least one piece count, got an empty sequence")
    if n * n * len(counts) > _MAX_ELEMENTS:
        raise ValueError(f"n * n * len(pieces) must be at most {_MAX_ELEMENTS}, got {n * n * len(counts)}")
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(check_seed("seed", seed))
    a, b = rng.random((n, n)), rng.random((n, n))

    def product(rows: tuple[int, int]) -> np.ndarray:
        return a[rows[0]:rows[1]] @ b

    def cpu_of(run, clock) -> float:
        start = clock()
        run()
        return clock() - start

    def wall_of(run) -> float:
        return cpu_of(run, time.perf_counter)

    with threadpool_limits(blas_threads, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        list(pool.map(int, range(workers)))        # start the threads before any clock runs
        w0 = min(cpu_of(lambda: product((0, n)), time.thread_time) for _ in range(3))
        os0 = min(wall_of(lambda: [f.result() for f in [pool.submit(int) for _ in range(200)]])
                  for _ in range(3)) / 200
        best = np.full((len(counts), 3), np.inf)
        for _ in range(repeat):
            for i, k in enumerate(counts):
                blocks = [(r[0], r[-1] + 1) for r in np.array_split(np.arange(n), k)]
                row = (wall_of(lambda bs=blocks: np.concatenate(list(pool.map(product, bs)))),
                       cpu_of(lambda bs=blocks: np.concatenate([product(r) for r in bs]), time.thread_time),
                       cpu_of(lambda bs=blocks: [f.result() for f in [pool.submit(int) for _ in bs]],
                              time.process_time))
                best[i] = np.minimum(best[i], row)
    return SplitTiming(n, workers, blas_threads, counts, *(tuple(map(float, best[:, j])) for j in range(3)),
                       w0=float(w0), os0=float(os0))
