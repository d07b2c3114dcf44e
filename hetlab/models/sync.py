"""Synchronisation costs: waiting at a barrier and queueing for a lock, as small seeded simulations, and
the expected-maximum model that predicts the barrier's wait.

Barrier (bulk-synchronous phases, Valiant 1990): ``workers`` devices repeat ``phases`` steps; in
each step every device computes for ``mean`` times a seeded log-normal factor (``noise`` is the
standard deviation of its logarithm), then waits at a barrier until the slowest has arrived. A
device's wait in a phase is ``max - its own time``; the phase lasts ``max``.

Lock (a mutex, FIFO hand-over): each of ``workers`` devices repeats ``iterations`` times: compute
for ``compute`` (times a seeded log-normal factor), then hold one shared lock for ``critical``.
A request waits while the lock is held. The lock can serve at most one critical section per
``critical`` time, so throughput saturates at ``1 / critical`` sections per time unit and the
speed-up over one worker at ``(compute + critical) / critical`` (Amdahl's ceiling with
``1 - p = critical / (compute + critical)``). Unlike Amdahl's model, one worker's critical section
overlaps the others' computation, so below saturation the speed-up stays close to N.

Predicting the barrier's wait. With a barrier after every phase, a phase lasts as long as its slowest
device. If the N devices' times in a phase are independent and log-normal, ``t = mean * exp(sigma * z)``
with ``z`` standard normal (the model of :func:`barrier_run`), and the barrier itself costs nothing, then
over many phases the share of all device time spent waiting tends to

    idle = 1 - E[t] / E[max_w t_w] = 1 - exp(sigma**2 / 2) / E[max_w exp(sigma * z_w)]

:func:`expected_max_lognormal` computes the denominator by numerical integration;
:func:`expected_max_normal` gives ``m_N = E[max of N standard normals]`` (0.56, 1.42, 2.07 for
N = 2, 8, 32; it grows like ``sqrt(2 ln N)``). Since exp is increasing, ``max_w exp(sigma z_w)`` *is*
``exp(sigma M_N)`` with ``M_N = max_w z_w``; the one-line estimate ``1 - exp(sigma**2 / 2 - sigma * m_N)``
swaps the expectation and the exponential, ``E[exp(sigma M_N)] ~ exp(sigma E[M_N])``. exp is convex, so
(Jensen) this underestimates the denominator and the wait, by a factor of about
``exp(sigma**2 Var(M_N) / 2)``; ``Var(M_N)`` shrinks with N (``1 - 1/pi`` ~ 0.68 for N = 2, about 0.24
for N = 32), so the estimate is worst for few devices.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from hetlab._validate import (
    as_float_array,
    check_bool,
    check_fields,
    check_int,
    check_nonnegative,
    check_positive,
    check_seed,
)

__all__ = ["BarrierRun", "barrier_run", "LockRun", "lock_run", "lock_speedups", "expected_max_normal",
           "expected_max_lognormal", "predicted_idle_fraction", "mean_idle_fraction"]


def _noise(noise) -> float:
    return check_nonnegative("noise", noise, high=3.0)


@dataclass(frozen=True)
class BarrierRun:
    """``times[k, w]``: compute time of worker w in phase k (a 1-D ``times`` is one phase)."""

    times: np.ndarray

    def __post_init__(self) -> None:
        times = as_float_array("times", self.times, low=0.0, finite=True, empty=False)
        if times.ndim == 0 or times.ndim > 2:
            raise ValueError(f"times must be 1-D (one phase) or 2-D (phases x workers), got shape {times.shape}")
        times = np.atleast_2d(times).copy()
        times.setflags(write=False)
        object.__setattr__(self, "times", times)

    @property
    def phase_times(self) -> np.ndarray:
        """Each phase lasts as long as its slowest worker."""
        return self.times.max(axis=1)

    @property
    def waits(self) -> np.ndarray:
        """``waits[k, w] = max_k - times[k, w]``: time worker w idles at barrier k."""
        return self.phase_times[:, None] - self.times

    @property
    def total(self) -> float:
        """Run time with a barrier after every phase: the sum of the phase maxima."""
        return float(self.phase_times.sum())

    @property
    def total_without_barriers(self) -> float:
        """Run time if the phases needed no barrier: the slowest worker's own sum."""
        return float(self.times.sum(axis=0).max())

    @property
    def idle_fraction(self) -> float:
        """Share of all device time spent waiting at barriers."""
        return float(self.waits.sum() / (self.times.shape[1] * self.total))


def barrier_run(workers: int, phases: int, *, mean: float = 1.0, noise: float = 0.2, seed: int = 0) -> BarrierRun:
    """Simulate ``phases`` barrier-separated steps on ``workers`` devices (see the module docstring).

    >>> run = barrier_run(4, 10, noise=0.0)
    >>> run.total, run.idle_fraction     # equal work: nobody waits
    (10.0, 0.0)
    """
    workers = check_int("workers", workers, low=1, high=4096)
    phases = check_int("phases", phases, low=1, high=100_000)
    mean = check_positive("mean", mean, high=1e12)
    noise = _noise(noise)
    seed = check_seed("seed", seed)
    rng = np.random.default_rng(seed)
    times = mean * np.exp(noise * rng.standard_normal((phases, workers)))
    times.setflags(write=False)
    return BarrierRun(times)


@dataclass(frozen=True)
class LockRun:
    """Result of :func:`lock_run`: when the last worker finished and how long all workers queued in total."""

    workers: int
    iterations: int
    compute: float
    critical: float
    makespan: float
    total_wait: float

    def __post_init__(self) -> None:
        check_fields(self)
        check_int("workers", self.workers, low=1, high=4096)
        check_int("iterations", self.iterations, low=1, high=100_000)
        check_positive("makespan", self.makespan)

    @property
    def throughput(self) -> float:
        """Critical sections completed per time unit (one per loop iteration)."""
        return self.workers * self.iterations / self.makespan

    @property
    def lock_busy(self) -> float:
        """Fraction of the run during which the lock is held."""
        return self.workers * self.iterations * self.critical / self.makespan

    @property
    def wait_fraction(self) -> float:
        """Share of all device time spent queued for the lock."""
        return self.total_wait / (self.workers * self.makespan)


def lock_run(workers: int, iterations: int, *, compute: float = 1.0, critical: float = 0.1, noise: float = 0.2,
             seed: int = 0) -> LockRun:
    """Simulate ``workers`` devices sharing one FIFO lock (see the module docstring).

    >>> lock_run(4, 5, compute=0.0, critical=1.0, noise=0.0).makespan   # all 20 sections in a row
    20.0
    """
    workers = check_int("workers", workers, low=1, high=4096)
    iterations = check_int("iterations", iterations, low=1, high=100_000)
    if workers * iterations > 1_000_000:
        raise ValueError(f"workers * iterations must be at most 1000000, got {workers * iterations}")
    compute = check_nonnegative("compute", compute, high=1e12)
    critical = check_nonnegative("critical", critical, high=1e12)
    if compute + critical <= 0:
        raise ValueError("compute + critical must be positive, got 0")
    noise = _noise(noise)
    seed = check_seed("seed", seed)
    rng = np.random.default_rng(seed)
    work = compute * np.exp(noise * rng.standard_normal((workers, iterations)))
    waited = np.zeros(workers)
    finish = np.zeros(workers)
    done = [0] * workers
    # (request time, worker): requests are served in time order, ties by worker id (FIFO).
    requests = [(float(work[w, 0]), w) for w in range(workers)]
    heapq.heapify(requests)
    lock_free = 0.0
    while requests:
        t, w = heapq.heappop(requests)
        grant = max(t, lock_free)
        waited[w] += grant - t
        lock_free = grant + critical
        done[w] += 1
        if done[w] < iterations:
            heapq.heappush(requests, (lock_free + float(work[w, done[w]]), w))
        else:
            finish[w] = lock_free
    return LockRun(workers, iterations, compute, critical, float(finish.max()), float(waited.sum()))


def lock_speedups(max_workers: int, *, iterations: int = 50, compute: float = 1.0, critical: float = 0.1,
                  noise: float = 0.2, seed: int = 0) -> np.ndarray:
    """Speed-up ``throughput(N) / throughput(1)`` for N = 1 .. max_workers (same seed for every N)."""
    max_workers = check_int("max_workers", max_workers, low=1, high=256)
    runs = [lock_run(n, iterations, compute=compute, critical=critical, noise=noise, seed=seed)
            for n in range(1, max_workers + 1)]
    return np.array([r.throughput for r in runs]) / runs[0].throughput


# --- the expected-maximum model of the barrier's wait -------------------------------------------------------

_ROOT_2PI, _SQRT2 = math.sqrt(2 * math.pi), math.sqrt(2)


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
    ``1 - exp(sigma**2/2 - sigma * m_N)`` (clipped at 0), which puts ``exp(sigma * E[max z])`` in place of
    ``E[exp(sigma * max z)]`` (Jensen: an underestimate).
    """
    n, s = _workers(workers), _sigma(sigma)
    exact = check_bool("exact", exact)
    mean = math.exp(s * s / 2)
    if exact:
        return 1.0 - mean / expected_max_lognormal(n, s)
    return max(0.0, 1.0 - math.exp(s * s / 2 - s * expected_max_normal(n)))


def mean_idle_fraction(workers: int, phases: int, *, noise: float, seeds: int = 20) -> tuple[float, float]:
    """Mean and standard deviation, over seeds 0..seeds-1, of :func:`barrier_run`'s idle fraction."""
    if not isinstance(seeds, int) or isinstance(seeds, bool) or not 1 <= seeds <= 10_000:
        raise ValueError(f"seeds must be an integer in [1, 10000], got {seeds!r}")
    values = np.array([barrier_run(workers, phases, noise=noise, seed=k).idle_fraction for k in range(seeds)])
    return float(values.mean()), float(values.std(ddof=1)) if seeds > 1 else 0.0
