"""Measured granularity: split one matrix product into N row blocks and see where the time goes.

Chapter 12 asks whether "cutting a big matrix product into 1,000 pieces, one per thread" is fastest.
Timing only the thread pool mixes three effects; :func:`split_matmul_timing` measures them apart:

- ``pool``: wall seconds of the N blocks on a thread pool of ``workers`` threads (what a user sees);
- ``pool_cpu``: CPU seconds of this process (``time.process_time``, all its threads) during that same pool
  run: what the pool's threads computed, dispatched and handed over; wall minus this CPU spread over the
  cores the rounds use is time the threads waited (for a core, or for the GIL). Over a window of a few
  milliseconds this clock can misread by up to one scheduler tick (4 ms at CONFIG_HZ = 250): Linux charges a
  thread running on another CPU with its runtime as of its last tick. The chapter's readings add that tick to
  their noise band and flag rows whose CPU exceeds the cores times the wall;
- ``kernel``: CPU seconds (``time.thread_time``) to compute the same N blocks one after another in one
  thread, no pool: the arithmetic alone. It grows with N because a thin block is a less efficient
  product (a 1-row block is a matrix-vector product that re-reads all of ``b`` for one row of output);
- ``dispatch``: CPU seconds of this process (``time.process_time``, all its threads) to push N empty
  tasks through the same pool: the scheduling cost ``N * O_s`` alone.

CPU seconds, not wall seconds, for the last two: a busy machine makes a thread wait for a core, which
stretches wall time but not the CPU time the work needs, so the kernel's growth and the dispatch cost
read the same on an idle, a busy or a one-CPU machine. Before the sweep, the same function calibrates
the two figures chapter 4's model needs: ``w0``, the CPU seconds of the whole product in one block, and
``os0``, the CPU seconds of this process (all its threads) per empty task pushed through the pool, in bursts
of the sweep's most pieces (the size of the ``dispatch`` column's largest burst) repeated until
:data:`CALIBRATION_CPU` seconds, the least of three such windows as each column is the least of its repeats
(after :func:`_wait_until_idle`: no thread of this process is still busy from earlier work), the same clock as
the ``dispatch`` column (a wall-clock calibration would count, on a
busy machine, the time the dispatcher waited for a core as dispatch; the garbage collector is off during the
sweep, so a collection of the caller's heap cannot land in one and not the other); a prediction
``N * os0 + ceil(N / workers) * w0 / N`` made from them uses nothing the sweep measures.

Every block writes its rows straight into one preallocated result (``np.matmul(..., out=...)``): no result
is assembled or allocated while a clock runs, whose cost would vary with the allocator's state (fresh pages
fault). So ``w0`` and the kernel column at N = 1 are the same code timed twice, and their difference is the
run's noise.

BLAS is pinned to ``blas_threads`` threads (threadpoolctl) while measuring, so the pool's threads are
the only parallelism: otherwise a multi-threaded BLAS already uses every core at N = 1. numpy releases
the GIL inside ``@``, so the pool's threads do run products in parallel when there are free cores.

A pool run of a few milliseconds is one short clock window, misread by up to one tick per thread: on 2 CPUs
8 ms against a run of 10 ms. ``window`` (seconds) times k back-to-back pool runs of the same blocks inside ONE
clock pair of at least that long: runs follow one another until the clock has passed ``window`` (review
ch12-18 #1: k planned from trial runs came out 1 on a busy machine, a 9 ms window); ``pool`` and ``pool_cpu``
are then per-run means and ``pool_runs`` holds the k of the kept reading, so the tick error per run shrinks to
1/k of itself. :func:`nested_pair` measures chapter 12's nested-BLAS pair that way.
"""
from __future__ import annotations

import gc
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from hetlab._validate import check_int, check_nonnegative, check_positive, check_seed, check_sequence
from hetlab.real.measure import cpu_count

__all__ = ["PIECES", "CALIBRATION_CPU", "PAIR_WINDOW", "SplitTiming", "split_matmul_timing", "nested_pair",
           "blas_spin"]

#: Most matrix elements times piece counts one call may ask for (a few seconds on one core).
_MAX_ELEMENTS = 1500 * 1500 * 8
#: The piece counts chapter 12 sweeps; :func:`split_matmul_timing` adds the pool's size P to them by default,
#: so that the N = 1 -> P step is measured on any machine (3, 6, 8, 12 CPUs...).
PIECES = (1, 2, 4, 16, 64, 150, 300, 600)

#: Least CPU seconds of the ``os0`` calibration: bursts of the sweep's most pieces (600 by default), like the
#: dispatch column's largest burst, repeated until this much CPU; os0 = total CPU / total tasks. 50 ms spans a
#: dozen 4 ms scheduler ticks, so one misread tick moves O_s by under a tenth (review ch12-10 #1: 2,000 tasks were
#: three ticks). Bursts stay small (review ch12-11 #1: one burst of 10,000 tasks keeps ~40,000 new objects alive,
#: which sets off full garbage collections that a 600-task burst does not; O_s read up to 3x the dispatch column).
#: The whole sweep runs with the collector off, so no collection of a big heap (a notebook's) lands in the
#: calibration's 50 ms and not in the dispatch column's shorter bursts.
CALIBRATION_CPU = 0.05

#: Seconds of one clock window per pool reading in :func:`nested_pair`: 0.1 s spans 25 ticks of 4 ms, so one tick
#: per thread (2 CPUs: 8 ms) misreads each of the k runs in it by 8 ms / k (review ch12-10 #2: one ~6 ms run per
#: window hid a burn below about +160 %).
PAIR_WINDOW = 0.1
#: Most runs of one pool reading inside one clock window (a one-row product takes microseconds).
_MAX_RUNS = 1000


@dataclass(frozen=True)
class SplitTiming:
    """One sweep of :func:`split_matmul_timing`: per piece count, ``pool`` (wall s), ``kernel`` (CPU s)
    and ``dispatch`` (CPU s), each the minimum of the repeats; ``w0`` (CPU s) and ``os0`` (CPU s per task;
    wall s in readings stored before 2026-12-04 23:00), calibrated before the sweep; ``pool_cpu`` (CPU s of
    the pool run whose wall time is the minimum), empty for readings stored before it was measured;
    ``pool_runs``: per piece count, how many back-to-back pool runs one clock window timed (``pool`` and
    ``pool_cpu`` are per-run means), empty for one run each (readings stored before 2026-12-05)."""

    n: int
    workers: int
    blas_threads: int
    pieces: tuple[int, ...]
    pool: tuple[float, ...]
    kernel: tuple[float, ...]
    dispatch: tuple[float, ...]
    w0: float
    os0: float
    pool_cpu: tuple[float, ...] = ()
    pool_runs: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        for name in ("n", "workers", "blas_threads"):
            check_int(name, getattr(self, name), low=1)
        counts = tuple(check_int("pieces", k, low=1) for k in check_sequence("pieces", self.pieces))
        object.__setattr__(self, "pieces", counts)
        for name in ("pool", "kernel", "dispatch", "pool_cpu"):
            if name == "pool_cpu" and isinstance(self.pool_cpu, tuple) and not self.pool_cpu:
                continue                    # a reading stored before the pool's CPU seconds were measured
            times = tuple(check_nonnegative(name, t) for t in check_sequence(name, getattr(self, name)))
            if len(times) != len(counts):
                raise ValueError(f"pieces and {name} must have the same length, got {len(counts)} and {len(times)}")
            object.__setattr__(self, name, times)
        runs = (() if isinstance(self.pool_runs, tuple) and not self.pool_runs else   # one run each
                tuple(check_int("pool_runs", k, low=1) for k in check_sequence("pool_runs", self.pool_runs)))
        if runs and len(runs) != len(counts):
            raise ValueError(f"pieces and pool_runs must have the same length, got {len(counts)} and {len(runs)}")
        object.__setattr__(self, "pool_runs", runs)
        object.__setattr__(self, "w0", check_positive("w0", self.w0))
        object.__setattr__(self, "os0", check_nonnegative("os0", self.os0))

    def at(self, pieces: int) -> tuple[float, float, float]:
        """(pool, kernel, dispatch) seconds measured at ``pieces`` blocks."""
        pieces = check_int("pieces", pieces, low=1)
        if pieces not in self.pieces:
            raise ValueError(f"pieces must be one of the measured counts {self.pieces}, got {pieces!r}")
        k = self.pieces.index(pieces)
        return self.pool[k], self.kernel[k], self.dispatch[k]


def split_matmul_timing(n: int = 600, pieces=None, *, workers: int | None = None,
                        repeat: int = 5, blas_threads: int = 1, seed: int = 0, window: float = 0.0) -> SplitTiming:
    """Measure an ``n x n`` float64 product split into row blocks (see the module docstring).

    ``pieces`` must lie in [1, n] (None: :data:`PIECES` and ``workers``, those at most ``n``); ``workers``
    threads in the pool (None: :func:`hetlab.real.measure.cpu_count`).
    ``repeat`` rounds, each measuring the pool, the kernel and the dispatch for every piece count one right
    after the other, so a change in the machine's load falls on the three columns of a row alike; each
    figure is the minimum of its ``repeat`` readings. About a second for the defaults on one idle core.
    ``window`` in [0, 10] seconds: when positive, each pool reading is k back-to-back runs inside one clock pair
    of at least ``window`` (see the module docstring); 0: one run per reading.
    """
    n = check_int("n", n, low=1, high=1500)
    workers = cpu_count() if workers is None else check_int("workers", workers, low=1, high=64)
    repeat = check_int("repeat", repeat, low=1, high=10)
    blas_threads = check_int("blas_threads", blas_threads, low=1, high=64)
    window = check_nonnegative("window", window, high=10.0)
    if pieces is None:
        pieces = sorted({k for k in PIECES if k <= n} | {min(workers, n)})
    if isinstance(pieces, (str, bytes)) or not hasattr(pieces, "__iter__"):
        raise TypeError(f"pieces must be a sequence of integers, got {type(pieces).__name__} {pieces!r}")
    counts = tuple(check_int("pieces", k, low=1, high=n) for k in pieces)
    if not counts:
        raise ValueError("pieces must hold at least one piece count, got an empty sequence")
    if n * n * len(counts) > _MAX_ELEMENTS:
        raise ValueError(f"n * n * len(pieces) must be at most {_MAX_ELEMENTS}, got {n * n * len(counts)}")
    rng = np.random.default_rng(check_seed("seed", seed))
    a, b = rng.random((n, n)), rng.random((n, n))
    out = np.empty((n, n))
    collecting = gc.isenabled()
    gc.disable()          # no collection of the caller's heap lands in one column and not another (see CALIBRATION_CPU)
    try:
        return _sweep(a, b, out, counts, workers, repeat, blas_threads, window)
    finally:
        if collecting:
            gc.enable()


def _sweep(a, b, out, counts, workers, repeat, blas_threads, window) -> SplitTiming:
    """:func:`split_matmul_timing`'s measurement, its inputs checked."""
    from threadpoolctl import threadpool_limits

    n = a.shape[0]

    def product(rows: tuple[int, int]) -> np.ndarray:
        return np.matmul(a[rows[0]:rows[1]], b, out=out[rows[0]:rows[1]])

    def cpu_of(run, clock) -> float:
        start = clock()
        run()
        return clock() - start

    with threadpool_limits(blas_threads, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        list(pool.map(int, range(workers)))        # start the threads before any clock runs
        product((0, n))                            # touch the result's pages before any clock runs
        _wait_until_idle()
        w0 = min(cpu_of(lambda: product((0, n)), time.thread_time) for _ in range(repeat))
        os0 = min(_calibrate(pool, max(counts)) for _ in range(3))     # like the columns: the least of repeats
        splits = [[(r[0], r[-1] + 1) for r in np.array_split(np.arange(n), k)] for k in counts]

        runs = [1] * len(counts)
        if window:
            for blocks in splits:
                list(pool.map(product, blocks))        # start BLAS's threads before any clock runs
        best = np.full((len(counts), 4), np.inf)
        for _ in range(repeat):
            for i, blocks in enumerate(splits):
                wall, cpu, k = time.perf_counter(), time.process_time(), 0
                # timed, not planned: runs until the window has passed, however slow the machine is now
                while k < 1 or (k < _MAX_RUNS and time.perf_counter() - wall < window):
                    list(pool.map(product, blocks))
                    k += 1
                wall, cpu = (time.perf_counter() - wall) / k, (time.process_time() - cpu) / k
                row = (wall,
                       cpu_of(lambda bs=blocks: [product(r) for r in bs], time.thread_time),
                       cpu_of(lambda bs=blocks: [f.result() for f in [pool.submit(int) for _ in bs]],
                              time.process_time))
                if wall < best[i, 0]:      # the pool's CPU seconds and k belong to the run whose wall is kept
                    best[i, 3], runs[i] = cpu, k
                best[i, :3] = np.minimum(best[i, :3], row)
    cols = [tuple(map(float, best[:, j])) for j in range(4)]
    return SplitTiming(n, workers, blas_threads, counts, *cols[:3], w0=float(w0), os0=float(os0),
                       pool_cpu=cols[3], pool_runs=tuple(runs) if window else ())


#: :func:`_wait_until_idle`: this process is idle once a sleep of IDLE_PROBE seconds costs it under a tenth of that
#: in CPU seconds; it waits at most IDLE_LIMIT seconds.
IDLE_PROBE, IDLE_LIMIT = 0.02, 1.0


def _wait_until_idle() -> tuple[float, float]:
    """Sleep until no other thread of this process burns CPU, at most :data:`IDLE_LIMIT` seconds; return the wall
    seconds and the CPU seconds of this process that passed before the first quiet probe.

    Every clock here but ``thread_time`` is ``process_time``, all of this process's threads: a thread still busy
    from earlier work counts in whichever reading it overlaps. OpenBLAS's helper threads spin for about 2^28
    processor cycles (THREAD_TIMEOUT, ~0.1 s) after a multi-threaded call before they sleep, and a pool shutting
    down finishes on its own threads: measured on the build machine, O_s read 9.4-10.4 us right after a 2-thread
    product or chapter 12's GIL experiment, 5.0-5.2 us half a second later, against 5.5-5.8 us from the dispatch
    column of the same sweep."""
    start, cpu0 = time.perf_counter(), time.process_time()
    while time.perf_counter() < start + IDLE_LIMIT:
        wall, cpu = time.perf_counter(), time.process_time()
        time.sleep(IDLE_PROBE)
        if time.process_time() - cpu < IDLE_PROBE / 10:
            return wall - start, cpu - cpu0
    return time.perf_counter() - start, time.process_time() - cpu0


def blas_spin(threads: int = 2, n: int = 600) -> tuple[float, float]:
    """What one multi-threaded BLAS product leaves behind: after an ``n x n`` product with BLAS allowed ``threads``
    threads has returned, the wall seconds until this process stops burning CPU and the CPU seconds it burned
    meanwhile, measured in probes of :data:`IDLE_PROBE` seconds (so to about 20 ms; at most :data:`IDLE_LIMIT`).
    Nothing is computing then: whatever burns is a thread waiting for work (chapter 12: OpenBLAS's helper threads
    spin about 2^28 cycles before they sleep; with ``OPENBLAS_THREAD_TIMEOUT=4`` this reads about zero).

    >>> wall, cpu = blas_spin(threads=1, n=8)   # bounded (IDLE_LIMIT and a last probe) even if a thread keeps burning
    >>> 0 <= wall < 3 * IDLE_LIMIT and cpu >= 0
    True
    """
    from threadpoolctl import threadpool_limits

    threads = check_int("threads", threads, low=1, high=64)
    n = check_int("n", n, low=1, high=1500)
    a = np.random.default_rng(0).random((n, n))
    _wait_until_idle()
    with threadpool_limits(threads, user_api="blas"):
        a @ a
        return _wait_until_idle()


def _calibrate(pool: ThreadPoolExecutor, burst: int) -> float:
    """CPU seconds of this process per empty task: bursts of ``burst`` tasks through ``pool`` until
    :data:`CALIBRATION_CPU` seconds, the total CPU over the total tasks (see :data:`CALIBRATION_CPU`)."""
    tasks, start = 0, time.process_time()
    while time.process_time() - start < CALIBRATION_CPU:
        [f.result() for f in [pool.submit(int) for _ in range(burst)]]
        tasks += burst
    return (time.process_time() - start) / tasks


def nested_pair(n: int = 600, pieces: int | None = None, *, workers: int | None = None, repeat: int = 3,
                window: float = PAIR_WINDOW) -> tuple[SplitTiming, SplitTiming]:
    """Chapter 12's nested-BLAS pair: the same split (1 and ``pieces`` blocks of an ``n x n`` product) on a pool of
    ``workers`` threads (None: :func:`hetlab.real.measure.cpu_count`) with BLAS pinned to 1 thread and to
    T = max(2, workers) threads, each pool reading timed over one clock window of ``window`` seconds
    (:func:`split_matmul_timing`). ``pieces`` None: the least multiple of the pool's P threads that is at least
    16, at most ``n``, so the baseline's last round keeps all P cores busy (review ch12-11 #3: with 16 pieces on
    12 CPUs the baseline idles cores in its second round, and a nested pass could beat it). About 2-3 seconds on
    an idle 2-CPU machine.

    >>> nested_pair(n=64, workers=3, repeat=1, window=0.001)[0].pieces    # 3 x ceil(16 / 3) = 18
    (1, 18)
    """
    workers = cpu_count() if workers is None else check_int("workers", workers, low=1, high=64)
    n = check_int("n", n, low=1, high=1500)
    pieces = (min(n, workers * -(-16 // workers)) if pieces is None else check_int("pieces", pieces, low=1, high=n))
    return tuple(split_matmul_timing(n, (1, pieces), workers=workers, repeat=repeat, blas_threads=t, window=window)
                 for t in (1, max(2, workers)))
