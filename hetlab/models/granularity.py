"""Granularity with a finite number of devices: ``T = N * Os + W / min(N, P)`` and an integer N*.

Chapter 4's model ``T(N) = N * Os + W / N`` (:func:`hetlab.formulas.total_time`) hides two
assumptions: one dispatcher hands out the N tasks one after another (so dispatching costs ``N * Os``
in total, not ``Os``), and there are at least N devices, so all N pieces run at once. With P devices
only ``min(N, P)`` pieces run at a time:

- ``model="ideal"``: the work spreads perfectly over the busy devices, ``T = N Os + W / min(N, P)``;
- ``model="rounds"``: N equal pieces run in ``ceil(N / P)`` rounds of ``W / N`` each,
  ``T = N Os + ceil(N / P) W / N`` (what a real pool of P workers does with equal tasks; appendix A1
  fits this form to a measured sweep).

For ``N >= P`` the first term grows and the second cannot fall below ``W / P``, so in both models
the best task count never exceeds P; below P the models equal ``N Os + W / N``, which is convex.
The best *integer* count is therefore the better of ``floor`` and ``ceil`` of ``sqrt(W / Os)``,
clamped to ``[1, P]`` (:func:`optimal_task_count`).

The real size of ``Os`` depends on the mechanism (:data:`OVERHEADS`): microseconds for a CUDA
kernel launch or a thread-pool task, hundreds of microseconds for a process pool, about a
millisecond for a Dask task.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetlab._validate import as_float_array, check_fields, check_finite_result, check_int, check_positive

__all__ = ["total_time_on", "optimal_task_count", "Overhead", "OVERHEADS", "GrainLevel", "GRAIN_LEVELS"]

_MODELS = ("ideal", "rounds")


def _model(model: str) -> str:
    if model not in _MODELS:
        raise ValueError(f"model must be 'ideal' or 'rounds', got {model!r}")
    return model


def total_time_on(N: Any, W: Any, Os: Any, P: int, *, model: str = "ideal") -> Any:
    """Total time of W split into N tasks on P devices behind one serial dispatcher.

    ``model="ideal"``: ``N Os + W / min(N, P)``; ``model="rounds"``: ``N Os + ceil(N / P) W / N``.
    ``N`` may be an array (for curves); ``P`` is a positive integer.

    >>> total_time_on(100, 10_000, 1.0, 8)          # 100 + 10000 / 8
    1350.0
    >>> total_time_on(12, 1200, 1.0, 8, model="rounds")   # 12 + 2 rounds * 100
    212.0
    """
    n = as_float_array("N", N, low=1.0, finite=True, empty=False)
    w = as_float_array("W", W, low=0.0, finite=True)
    o = as_float_array("Os", Os, low=0.0, finite=True)
    p = check_int("P", P, low=1, high=10**9)
    if _model(model) == "ideal":
        t = n * o + w / np.minimum(n, p)
    else:
        t = n * o + np.ceil(n / p) * w / n
    check_finite_result(t, N=N, W=W, Os=Os)
    return float(t) if t.ndim == 0 else t


def optimal_task_count(W: float, Os: float, P: int | None = None) -> int:
    """The best integer task count for ``N Os + W / N`` (P = None: unlimited devices) or for either
    P-device model of :func:`total_time_on` (both have the same optimum).

    The real optimum ``sqrt(W / Os)`` is rarely an integer: compare its floor and ceiling (T is
    convex in N, so one of them wins), then clamp to P, because no model gains from more tasks
    than devices. Ties go to the smaller count (fewer tasks, less dispatching).

    >>> optimal_task_count(10_000, 1.0)        # sqrt = 100 exactly
    100
    >>> optimal_task_count(2000, 3.0)          # sqrt = 25.8: T(25) = 155.0, T(26) = 154.9
    26
    >>> optimal_task_count(10_000, 1.0, P=8)
    8
    """
    w = check_positive("W", W)
    o = check_positive("Os", Os)
    if P is not None:
        P = check_int("P", P, low=1, high=10**9)
    if w > 1e24:
        raise ValueError(f"W must be at most 1e24, got {w:g}")
    if o < 1e-24:
        raise ValueError(f"Os must be at least 1e-24, got {o:g}")
    root = math.sqrt(w / o)
    if root > 1e12:
        raise ValueError(f"W / Os must be at most 1e24 (W = {w:g}, Os = {o:g}), got {w / o:g}")
    lo = max(1, math.floor(root))
    hi = lo + 1
    best = lo if lo * o + w / lo <= hi * o + w / hi else hi
    return best if P is None else min(best, P)


@dataclass(frozen=True)
class Overhead:
    """A typical per-task scheduling overhead ``seconds`` of one mechanism, and where the figure comes from."""

    mechanism: str
    seconds: float
    source: str

    def __post_init__(self) -> None:
        check_fields(self)


#: Orders of magnitude of Os (seconds). Thread and process pools: measured on the book's 2-core build
#: machine by ``hetlab.real.measure.dispatch_overhead`` (appendix A1 re-measures them on yours).
#: A data table of labels: the mechanism and source are in Chinese because chapter 4 prints them as its table.
OVERHEADS: tuple[Overhead, ...] = (
    Overhead("CUDA 核函数启动（GPU kernel launch）", 5e-6,
             "NVIDIA CUDA C++ Best Practices Guide；Gray 2019, Getting Started with CUDA Graphs（数微秒量级）"),
    Overhead("线程池任务（Python ThreadPoolExecutor）", 12e-6, "本书构建机实测，附录 A1"),
    Overhead("进程池任务（Python ProcessPoolExecutor）", 120e-6, "本书构建机实测，附录 A1"),
    Overhead("Dask 分布式任务", 1e-3, "Dask 文档（Shared Memory、Array Best Practices）：每个任务约 200 µs 至 1 ms"),
)


@dataclass(frozen=True)
class GrainLevel:
    """One level of parallel granularity: an example of "one task" there, its typical length, the
    cheapest software mechanism that could dispatch it, and that mechanism's per-task overhead."""

    level: str
    example: str
    task_seconds: float
    dispatcher: str
    overhead_seconds: float

    def __post_init__(self) -> None:
        check_fields(self)
        check_positive("task_seconds", self.task_seconds)
        check_positive("overhead_seconds", self.overhead_seconds)

    @property
    def ratio(self) -> float:
        """Task length over dispatch overhead: far above 1, splitting at this level pays; below 1 it cannot."""
        return self.task_seconds / self.overhead_seconds


#: Orders of magnitude for chapter 4's three levels. Task lengths are illustrative round figures; the
#: overheads are those of :data:`OVERHEADS` (a thread pool task for the instruction level shows why no
#: software scheduler works there: the hardware issues instructions at no per-instruction software cost).
#: A data table of labels, in Chinese as chapter 4 prints it.
GRAIN_LEVELS: tuple[GrainLevel, ...] = (
    GrainLevel("任务级", "一个子图或一批数据，交给进程池 / Dask", 10e-3, "进程池任务", 120e-6),
    GrainLevel("算子级", "一次 CUDA 核函数，或张量并行的一个分片", 100e-6, "CUDA 核函数启动", 5e-6),
    GrainLevel("指令级", "一条乘加指令（约 3 个时钟周期，3 GHz）", 1e-9, "线程池任务（最便宜的软件派发）", 12e-6),
)
