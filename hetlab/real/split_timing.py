"""Measured granularity: split one matrix product into N row blocks and see where the time goes.

Chapter 12 asks whether "cutting a big matrix product into 1,000 pieces, one per thread" is fastest.
Timing only the thread pool mixes three effects; this module measures them apart, on this machine:

- ``pool``: wall time of the N blocks on a thread pool of ``workers`` threads (what a user sees);
- ``kernel``: the same N blocks computed one after another in this thread, no pool: the arithmetic
  alone. It grows with N because a thin block is a less efficient product (a 1-row block is a
  matrix-vector product that re-reads all of ``b`` for one row of output);
- ``dispatch``: N empty tasks through the same pool: the scheduling cost ``N * O_s`` alone.

BLAS is pinned to ``blas_threads`` threads (threadpoolctl) while measuring, so the pool's threads
are the only parallelism: otherwise a multi-threaded BLAS already uses every core at N = 1 and
the pool can only add overhead. The model the chapter compares with is the P-device form of
chapter 4's ``T = N * O_s + W / N``: ``pool(N) ~ dispatch(N) + kernel(N) / min(N, workers)``.

Assumptions: the machine is otherwise idle (a busy machine makes every figure noisier); numpy
releases the GIL inside ``@``, so threads do run products in parallel; each figure is the best of
``repeat`` runs, which filters out interruptions but not a slow machine.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from hetlab._validate import check_int, check_nonnegative, check_seed, check_sequence

__all__ = ["SplitTiming", "split_matmul_timing", "plot_split_timing"]

#: Most seconds the default experiment should take on a 2-core machine (a chapter cell has 10 s).
_MAX_ELEMENTS = 1500 * 1500


@dataclass(frozen=True)
class SplitTiming:
    """Seconds per piece count for the three measurements described in the module docstring."""

    n: int
    workers: int
    blas_threads: int
    pieces: tuple[int, ...]
    pool: tuple[float, ...]
    kernel: tuple[float, ...]
    dispatch: tuple[float, ...]

    def __post_init__(self) -> None:
        # Contract (issue 11): a record built by hand is checked like the arguments of a function.
        for name in ("n", "workers", "blas_threads"):
            check_int(name, getattr(self, name), low=1)
        counts = tuple(check_int("pieces", k, low=1) for k in check_sequence("pieces", self.pieces))
        object.__setattr__(self, "pieces", counts)
        for name in ("pool", "kernel", "dispatch"):
            times = tuple(check_nonnegative(name, t) for t in check_sequence(name, getattr(self, name)))
            if len(times) != len(counts):
                raise ValueError(f"pieces and {name} must have the same length, got {len(counts)} and {len(times)}")
            object.__setattr__(self, name, times)

    def model(self) -> tuple[float, ...]:
        """``dispatch + kernel / min(N, workers)`` for each piece count (seconds)."""
        return tuple(d + k / min(p, self.workers) for p, k, d in zip(self.pieces, self.kernel, self.dispatch))

    @property
    def best(self) -> int:
        """The piece count with the smallest pool time."""
        return self.pieces[int(np.argmin(self.pool))]

    def table(self) -> str:
        """An aligned Chinese table in milliseconds."""
        head = f"{'块数 N':>6} {'线程池实测':>10} {'纯计算(串行)':>10} {'派发开销':>8} {'模型预测':>8}"
        rows = [head]
        for p, t, k, d, m in zip(self.pieces, self.pool, self.kernel, self.dispatch, self.model()):
            rows.append(f"{p:>8} {t * 1e3:>12.2f} {k * 1e3:>14.2f} {d * 1e3:>11.3f} {m * 1e3:>11.2f}")
        rows.append(f"（单位：毫秒；{self.n}×{self.n} 矩阵乘，线程池 {self.workers} 个线程，"
                    f"BLAS 固定为 {self.blas_threads} 个线程）")
        return "\n".join(rows)


def _best_of(repeat: int, run) -> float:
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return float(best)


def split_matmul_timing(n: int = 600, pieces=(1, 2, 4, 16, 64, 150, 300, 600), *, workers: int = 2,
                        repeat: int = 3, blas_threads: int = 1, seed: int = 0,
                        interleave: bool = False) -> SplitTiming:
    """Measure an ``n x n`` float64 product split into row blocks (see the module docstring).

    ``pieces`` must lie in [1, n]; ``workers`` threads in the pool; each figure is the best of
    ``repeat`` runs. Takes about a second for the defaults on an idle 2-core machine.

    ``interleave=False`` (the default) takes the ``repeat`` runs of one column back to back.
    ``interleave=True`` runs ``repeat`` rounds; each round measures, for every piece count, the
    pool, the kernel and the dispatch once, one right after the other, so a change in the
    machine's load during the experiment falls on the three columns of a row alike; each figure
    is still the best of its ``repeat`` readings.
    """
    n = check_int("n", n, low=1, high=1500)
    workers = check_int("workers", workers, low=1, high=64)
    repeat = check_int("repeat", repeat, low=1, high=10)
    blas_threads = check_int("blas_threads", blas_threads, low=1, high=64)
    if not isinstance(interleave, (bool, np.bool_)):
        raise TypeError(f"interleave must be True or False, got {type(interleave).__name__} {interleave!r}")
    if isinstance(pieces, (str, bytes)) or not hasattr(pieces, "__iter__"):
        raise TypeError(f"pieces must be a sequence of integers, got {type(pieces).__name__} {pieces!r}")
    counts = tuple(check_int("pieces", k, low=1, high=n) for k in pieces)
    if not counts:
        raise ValueError("pieces must hold at least one piece count, got an empty sequence")
    if n * n * len(counts) > _MAX_ELEMENTS * 8:
        raise ValueError(f"n * n * len(pieces) must be at most {_MAX_ELEMENTS * 8}, got {n * n * len(counts)}")
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(check_seed("seed", seed))
    a, b = rng.random((n, n)), rng.random((n, n))
    pool_t, kernel_t, dispatch_t = [], [], []

    def product(rows: tuple[int, int]) -> np.ndarray:
        return a[rows[0]:rows[1]] @ b

    with threadpool_limits(blas_threads, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        list(pool.map(int, range(workers)))        # start the threads before any clock runs
        runs = []
        for k in counts:
            blocks = [(r[0], r[-1] + 1) for r in np.array_split(np.arange(n), k)]
            runs.append((lambda bs=blocks: np.concatenate(list(pool.map(product, bs))),
                         lambda bs=blocks: np.concatenate([product(r) for r in bs]),
                         lambda bs=blocks: [f.result() for f in [pool.submit(int) for _ in bs]]))
        if interleave:
            best = np.full((len(counts), 3), np.inf)
            for _ in range(repeat):
                for i, row in enumerate(runs):
                    for j, run in enumerate(row):
                        best[i, j] = min(best[i, j], _best_of(1, run))
            pool_t, kernel_t, dispatch_t = (list(map(float, best[:, j])) for j in range(3))
        else:
            for run_pool, run_kernel, run_dispatch in runs:
                pool_t.append(_best_of(repeat, run_pool))
                kernel_t.append(_best_of(repeat, run_kernel))
                dispatch_t.append(_best_of(repeat, run_dispatch))
    return SplitTiming(n, workers, blas_threads, counts, tuple(pool_t), tuple(kernel_t), tuple(dispatch_t))


def plot_split_timing(timing: SplitTiming, ax=None, model_label: tuple[str, str] | None = None):
    """The three measured curves and the model against the piece count (log-log). ``model_label``
    is an optional (Chinese, English) legend text for the model line."""
    from hetlab import plotting as P

    if not isinstance(timing, SplitTiming):
        raise TypeError(f"timing must be a SplitTiming, got {type(timing).__name__}")
    if model_label is not None and (not isinstance(model_label, (tuple, list)) or len(model_label) != 2
                                    or not all(isinstance(x, str) for x in model_label)):
        raise TypeError(f"model_label must be None or a (Chinese, English) pair of strings, got {model_label!r}")
    ax = P.new_axes(ax, figsize=(7, 3.4))
    ms = lambda values: np.asarray(values) * 1e3  # noqa: E731
    ax.plot(timing.pieces, ms(timing.pool), "o-", color="#4C72B0",
            label=P.label(f"线程池实测（{timing.workers} 线程）", f"thread pool ({timing.workers} threads)"))
    ax.plot(timing.pieces, ms(timing.kernel), "s--", color="#DD8452",
            label=P.label("纯计算（串行，无线程池）", "kernel only (serial, no pool)"))
    ax.plot(timing.pieces, ms(timing.dispatch), "^:", color="#8C8C8C",
            label=P.label("派发开销（空任务）", "dispatch only (empty tasks)"))
    ax.plot(timing.pieces, ms(timing.model()), "-", color="#C44E52", lw=1, alpha=0.8,
            label=P.label(*(model_label or ("模型：派发 + 计算 / min(N, P)", "model: dispatch + kernel / min(N, P)"))))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(P.label("块数 N（对数轴）", "pieces N (log)"))
    ax.set_ylabel(P.label("时间（毫秒，对数轴）", "time (ms, log)"))
    size = f"{timing.n}×{timing.n}"
    ax.set_title(P.label(f"{size} 矩阵乘按行切块（实测）", f"{size} matmul split by rows (measured)"))
    ax.legend(fontsize=8)
    return ax
