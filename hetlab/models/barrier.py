"""Predicting the wait at a barrier: the expected maximum of N run times.

With a barrier after every phase, a phase lasts as long as its slowest device. If the N devices'
times in a phase are independent and log-normal, ``t = mean * exp(sigma * z)`` with ``z`` standard
normal (the model of :func:`hetlab.models.sync.barrier_run`), and the barrier itself costs nothing, then
over many phases the share of all device time spent waiting tends to

    idle = 1 - E[t] / E[max_w t_w] = 1 - exp(sigma**2 / 2) / E[max_w exp(sigma * z_w)]

:func:`expected_max_lognormal` computes the denominator by numerical integration;
:func:`expected_max_normal` gives ``m_N = E[max of N standard normals]`` (0.56, 1.42, 2.07 for
N = 2, 8, 32; it grows like ``sqrt(2 ln N)``), and the one-line estimate
``1 - exp(sigma**2 / 2 - sigma * m_N)`` replaces the maximum of the exponentials by the
exponential of the maximum (Jensen: a slight underestimate of the wait).
"""
from __future__ import annotations

import math

import numpy as np

from hetlab._validate import check_bool, check_int, check_nonnegative
from hetlab.models import sync

_ROOT_2PI, _SQRT2 = math.sqrt(2 * math.pi), math.sqrt(2)

__all__ = ["expected_max_normal", "expected_max_lognormal", "predicted_idle_fraction", "mean_idle_fraction"]


def _workers(n) -> int:
    return check_int("workers", n, low=1, high=1_000_000)


def _sigma(sigma) -> float:
    return check_nonnegative("sigma", sigma, high=3.0)


#: Quadrature grid for :func:`_expect_of_max`: [-12, 12] in steps of 1/2000 (the density of the maximum of up to
#: a million normals is smooth there, and the trapezoid rule is exact to about 1e-9 on it).
_GRID = np.linspace(-12.0, 12.0, 48_001)
_PHI = np.exp(-_GRID * _GRID / 2) / _ROOT_2PI
_CDF = np.array([0.5 * math.erfc(-x / _SQRT2) for x in _GRID])


def _expect_of_max(n: int, f) -> float:
    """E[f(max of n standard normals)] by quadrature of f(x) * n * phi(x) * Phi(x)**(n-1) (numpy only:
    the library's dependencies stay numpy, matplotlib, sympy and ipywidgets)."""
    with np.errstate(under="ignore", divide="ignore"):
        density = n * _PHI * np.exp((n - 1) * np.log(_CDF))
    return float(np.trapezoid(f(_GRID) * density, _GRID))


def expected_max_normal(workers: int) -> float:
    """m_N: the expected maximum of ``workers`` independent standard normal numbers.

    >>> round(expected_max_normal(2), 4)   # 1 / sqrt(pi)
    0.5642
    """
    n = _workers(workers)
    return 0.0 if n == 1 else _expect_of_max(n, lambda x: x)


def expected_max_lognormal(workers: int, sigma: float) -> float:
    """E[max_w exp(sigma * z_w)] over ``workers`` independent standard normals z_w."""
    n, s = _workers(workers), _sigma(sigma)
    if s == 0:
        return 1.0
    return _expect_of_max(n, lambda x: np.exp(s * x))


def predicted_idle_fraction(workers: int, sigma: float, *, exact: bool = True) -> float:
    """Long-run share of device time spent waiting at barriers (see the module docstring).

    ``exact=True`` integrates E[max exp(sigma z)]; ``exact=False`` is the one-line estimate
    ``1 - exp(sigma**2/2 - sigma * m_N)`` (clipped at 0).
    """
    n, s = _workers(workers), _sigma(sigma)
    exact = check_bool("exact", exact)
    mean = math.exp(s * s / 2)
    if exact:
        return 1.0 - mean / expected_max_lognormal(n, s)
    return max(0.0, 1.0 - math.exp(s * s / 2 - s * expected_max_normal(n)))


def mean_idle_fraction(workers: int, phases: int, *, noise: float, seeds: int = 20) -> tuple[float, float]:
    """Mean and standard deviation, over seeds 0..seeds-1, of :func:`hetlab.models.sync.barrier_run`'s idle fraction."""
    if not isinstance(seeds, int) or isinstance(seeds, bool) or not 1 <= seeds <= 10_000:
        raise ValueError(f"seeds must be an integer in [1, 10000], got {seeds!r}")
    values = np.array([sync.barrier_run(workers, phases, noise=noise, seed=k).idle_fraction for k in range(seeds)])
    return float(values.mean()), float(values.std(ddof=1)) if seeds > 1 else 0.0
