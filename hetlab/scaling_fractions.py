"""Amdahl and Gustafson are one law with two different ``p``: where the parallel fraction is measured.

Amdahl (1967) measures the parallel fraction ``p`` on the *one-device* run of a fixed problem:
``S = 1 / ((1 - p) + p / N)``. Gustafson (1988) measures it on the *N-device* run (of a problem that
may have grown with N), call it ``p_N``: ``S = (1 - p_N) + p_N N``. For one and the same run the
two fractions are related by

    p_N = (p / N) / ((1 - p) + p / N)        and back        p = N p_N / ((1 - p_N) + N p_N),

and both formulas then give the same speed-up. Plugging Amdahl's ``p`` into Gustafson's formula
(or the reverse) compares two different programs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hetlab._validate import as_float_array

__all__ = ["scaled_fraction", "unscaled_fraction"]


def _out(arr: np.ndarray) -> Any:
    return float(arr) if arr.ndim == 0 else arr


def _n(N: Any) -> np.ndarray:
    return as_float_array("N", N, low=1.0, finite=True)


def scaled_fraction(p: Any, N: Any) -> Any:
    """Parallel fraction of the N-device run's time, for a program whose one-device fraction is ``p``.

    >>> round(scaled_fraction(0.95, 1024), 4)      # 0.95/1024 / (0.05 + 0.95/1024)
    0.0182
    """
    pp = as_float_array("p", p, low=0.0, high=1.0)
    n = _n(N)
    return _out((pp / n) / ((1.0 - pp) + pp / n))


def unscaled_fraction(p: Any, N: Any) -> Any:
    """Inverse of :func:`scaled_fraction`: ``p`` is the parallel fraction measured on the N-device run
    (``p_N``); returns the fraction the same program has on one device.

    >>> round(unscaled_fraction(0.95, 64), 4)      # 64*0.95 / (0.05 + 64*0.95)
    0.9992
    """
    q = as_float_array("p", p, low=0.0, high=1.0)
    n = _n(N)
    return _out(n * q / ((1.0 - q) + n * q))
