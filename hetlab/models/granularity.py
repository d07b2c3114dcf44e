"""Granularity with a finite number of devices: ``T = N * Os + W / min(N, P)`` and an integer N*.

Chapter 4's model ``T(N) = N * Os + W / N`` (:func:`hetlab.formulas.total_time`) hides two
assumptions: one dispatcher hands out the N tasks one after another (so dispatching costs ``N * Os``
in total, not ``Os``), and there are at least N devices, so all N pieces run at once. With P devices
only ``min(N, P)`` pieces run at a time:

- ``model="ideal"``: the work spreads perfectly over the busy devices, ``T = N Os + W / min(N, P)``;
- ``model="rounds"``: N equal pieces run in ``ceil(N / P)`` rounds of ``W / N`` each,
  ``T = N Os + ceil(N / P) W / N`` (what a real pool of P workers does with equal tasks; appendix A1
  predicts a measured sweep with this form from a calibrated ``Os``).

For ``N >= P`` the first term grows and the second cannot fall below ``W / P``, so in both models
the best task count never exceeds P; below P the models equal ``N Os + W / N``, which is convex.
The best *integer* count is therefore the better of ``floor`` and ``ceil`` of ``sqrt(W / Os)``,
clamped to ``[1, P]`` (:func:`optimal_task_count`).

On one device that runs the pieces one after another (kernels in one GPU stream), dispatch overlaps
execution but the pieces do not overlap each other: :func:`in_order_time`, about ``max(N Os, W)``, which
never falls below ``W``. Splitting also costs communication: a block of a grid exchanges its boundary with
its neighbours, and :func:`halo_ratio` gives boundary points per computed point, which grows as the blocks
shrink.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetlab._validate import as_float_array, check_choice, check_finite_result, check_int, check_positive

__all__ = ["total_time_on", "optimal_task_count", "in_order_time", "halo_ratio"]

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


def in_order_time(N: Any, W: Any, Os: Any) -> Any:
    """Total time of W split into N equal pieces that one dispatcher issues asynchronously, ``Os`` apiece,
    to one device that runs them one after another (kernels launched into one GPU stream).

    A two-stage pipeline, issue then run: piece k can start once it is issued, ``(k + 1) Os``, and once
    piece k - 1 has finished, so ``T = Os + W / N + (N - 1) max(Os, W / N)``, about ``max(N Os, W)``: the
    dispatch hides behind the work while a piece runs longer than it takes to issue one, and the pieces
    never overlap, so splitting cannot bring ``T`` below ``W``. ``N`` may be an array.

    >>> in_order_time(1, 100.0, 5.0)          # issue one piece, then run all of it
    105.0
    >>> in_order_time(4, 100.0, 5.0)          # pieces of 25 > 5: the launches hide, 5 + 100
    105.0
    >>> in_order_time(40, 100.0, 5.0)         # pieces of 2.5 < 5: the device waits, 40 * 5 + 2.5
    202.5
    """
    n = as_float_array("N", N, low=1.0, finite=True, empty=False, integer=True)
    w = as_float_array("W", W, low=0.0, finite=True)
    o = as_float_array("Os", Os, low=0.0, finite=True)
    with np.errstate(over="ignore"):
        t = o + w / n + (n - 1) * np.maximum(o, w / n)
    check_finite_result(t, N=N, W=W, Os=Os)
    return float(t) if t.ndim == 0 else t


def halo_ratio(n: int, pieces: Any, layout: str = "blocks") -> Any:
    """Boundary points a piece exchanges per point it computes, for an ``n x n`` grid split into ``pieces``
    equal parts (periodic edges, so every piece has a neighbour on every side; a stencil that reads one
    neighbour in each direction).

    ``layout="blocks"``: square blocks of side ``b = n / sqrt(pieces)`` exchange ``4 b`` points for ``b^2``
    computed, ``4 sqrt(pieces) / n`` (exact when ``pieces`` is a square number whose root divides ``n``);
    ``layout="strips"``: strips of ``n / pieces`` rows (at most ``n`` strips) exchange two rows,
    ``2 pieces / n``. Both grow as the pieces shrink (surface against volume).

    >>> halo_ratio(1024, 16)                  # blocks of 256 x 256: 1024 boundary points for 65,536
    0.015625
    >>> halo_ratio(1024, 16, layout="strips") # strips of 64 rows: 2 rows of 1024 for 64 rows
    0.03125
    """
    size = check_int("n", n, low=1, high=10**9)
    check_choice("layout", layout, ("blocks", "strips"))
    # a strip holds at least one row, a block at least one point
    top = float(size) if layout == "strips" else float(size) ** 2
    p = as_float_array("pieces", pieces, low=1.0, high=top, finite=True, empty=False, integer=True)
    return _out(4.0 * np.sqrt(p) / size if layout == "blocks" else 2.0 * p / size)


def _out(arr: np.ndarray) -> Any:
    return float(arr) if arr.ndim == 0 else arr
