"""Amdahl's law with the gradient all-reduce inside it, and copy/compute overlap on one link.

Amdahl's law (:func:`hetlab.formulas.amdahl`) counts no communication, so its speed-up only rises
with the number of devices ``N``. Put the ring all-reduce of data parallel training
(:func:`hetlab.formulas.ring_allreduce_time`) into the same step time,

    T(N) = C (1 - p) + C p / N + 2 (N - 1) alpha + 2 (N - 1) / N * G / B,    S(N) = C / T(N),

and the latency term ``2 (N - 1) alpha`` grows with ``N`` while the parallel part shrinks: S(N)
rises, peaks and falls. Setting dT/dN = 0 gives the peak

    N* = sqrt((C p - 2 G / B) / (2 alpha))

(:func:`peak_devices`). Assumptions: no overlap of communication with computation, equal devices,
the all-reduce owns the network.

:func:`copy_compute_pipeline` is the other overlap a heterogeneous machine lives on: ``k`` batches
each copied host -> device (``copy_time``) and then computed (``compute_time``). In sequence every
batch pays both; with two buffers (pinned host memory, a separate copy engine, two CUDA streams) the
copy of batch ``i + 1`` runs during the compute of batch ``i``, and the total becomes
``copy + compute + (k - 1) * max(copy, compute)``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetlab._validate import as_float_array, check_finite_result, check_int, check_positive

__all__ = ["amdahl_with_allreduce", "peak_devices", "copy_compute_pipeline"]


def _common(p, compute_time, grad_size, bandwidth, latency):
    p = as_float_array("p", p, low=0.0, high=1.0)
    c = check_positive("compute_time", compute_time, high=1e12)
    g = check_positive("grad_size", grad_size, high=1e15)
    b = check_positive("bandwidth", bandwidth, high=1e15)
    a = check_positive("latency", latency, high=1e6)
    return p, c, g, b, a


def amdahl_with_allreduce(p: Any, N: Any, *, compute_time: float = 64.0, grad_size: float = 1.0,
                          bandwidth: float = 10.0, latency: float = 1e-3) -> Any:
    """Speed-up ``C / T(N)`` over one device (module docstring): a serial share ``1 - p`` of the
    single-device time ``compute_time``, the rest split over ``N`` devices, plus a ring all-reduce of
    ``grad_size`` over ``bandwidth`` with ``latency`` per hop (none for one device). Arrays allowed."""
    p, c, g, b, a = _common(p, compute_time, grad_size, bandwidth, latency)
    n = as_float_array("N", N, low=1.0, high=1e9, integer=True)
    with np.errstate(over="ignore", invalid="ignore"):
        step = c * (1.0 - p) + c * p / n + 2.0 * (n - 1.0) * a + 2.0 * (n - 1.0) / n * g / b
        s = c / step
    check_finite_result(s, p=p, N=N)
    return float(s) if np.ndim(s) == 0 else s


def peak_devices(p: float = 0.99, *, compute_time: float = 64.0, grad_size: float = 1.0, bandwidth: float = 10.0,
                 latency: float = 1e-3) -> float:
    """The device count where :func:`amdahl_with_allreduce` peaks, ``sqrt((C p - 2 G / B) / (2 alpha))``
    (continuous; at least 1: when ``C p <= 2 G / B`` one device is already best)."""
    p, c, g, b, a = _common(p, compute_time, grad_size, bandwidth, latency)
    if np.ndim(p):
        raise TypeError(f"p must be a single number here, got an array of shape {np.shape(p)}")
    gain = c * float(p) - 2.0 * g / b
    return max(1.0, math.sqrt(gain / (2.0 * a))) if gain > 0 else 1.0


def copy_compute_pipeline(batches: int = 8, copy_time: float = 1.0, compute_time: float = 1.0) -> tuple[float, float]:
    """``(sequential, overlapped)`` total time for ``batches`` batches, each copied in ``copy_time``
    and computed in ``compute_time``: ``k (copy + compute)`` against
    ``copy + compute + (k - 1) max(copy, compute)`` (double buffering; module docstring)."""
    k = check_int("batches", batches, low=1, high=10**9)
    tc = check_positive("copy_time", copy_time, high=1e12)
    tp = check_positive("compute_time", compute_time, high=1e12)
    return k * (tc + tp), tc + tp + (k - 1) * max(tc, tp)
