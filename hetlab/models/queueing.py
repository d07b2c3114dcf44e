"""Latency of a stream of requests at one server: Little's law, the M/M/1 queue and its tail.

One idea: as a server's utilisation approaches 1, requests wait longer, and the slowest ones far longer than
the mean. The model is the textbook M/M/1 queue (Kleinrock 1975): requests arrive as a Poisson stream of rate
``arrival_rate`` (lambda), one server takes them first come first served, each needs an exponentially
distributed service time of mean ``1 / service_rate`` (mu), and the utilisation is ``rho = lambda / mu < 1``.
In the long run a request spends ``W = 1 / (mu - lambda)`` in the system (waiting plus service), and that time
is itself exponential, so its ``q`` quantile is ``-ln(1 - q) / (mu - lambda)``: the 99th percentile is
``ln 100 ~ 4.6`` times the mean (:func:`mm1_latency`, :func:`mm1_latency_quantile`).

:func:`single_server` simulates the same queue with a seed, and :class:`QueueRun` reads the run:
latencies and their percentiles, throughput, the server's busy share and the time-average number of requests in
the system ``L``. On any run that starts and ends empty, Little's law ``L = lambda W`` holds exactly when
``lambda`` is the measured arrival rate ``n / T`` and ``W`` the mean latency (Little 1961): both sides are the
area under the number-in-system curve divided by ``T``.

>>> round(mm1_latency(0.8, 1.0), 6), round(mm1_latency_quantile(0.8, 1.0, 0.99), 2)   # rho = 0.8: 5 and 23.03
(5.0, 23.03)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hetlab._validate import as_float_array, check_int, check_positive, check_real, check_seed

__all__ = ["mm1_latency", "mm1_latency_quantile", "QueueRun", "single_server"]


def _rates(arrival_rate, service_rate) -> tuple[float, float]:
    lam = check_positive("arrival_rate", arrival_rate, high=1e12)
    mu = check_positive("service_rate", service_rate, high=1e12)
    if not lam < mu:
        raise ValueError(f"arrival_rate must be below service_rate ({mu!r}) for a stable queue, got {lam!r}")
    return lam, mu


def mm1_latency(arrival_rate: float, service_rate: float) -> float:
    """Mean time a request spends in an M/M/1 queue (waiting plus service): ``1 / (mu - lambda)``.

    >>> mm1_latency(0.5, 1.0), mm1_latency(0.9, 1.0)      # half busy: twice the service time; 90%: ten times
    (2.0, 10.000000000000002)
    """
    lam, mu = _rates(arrival_rate, service_rate)
    return 1.0 / (mu - lam)


def mm1_latency_quantile(arrival_rate: float, service_rate: float, q: float) -> float:
    """The ``q`` quantile of an M/M/1 request's time in the system: ``-ln(1 - q) / (mu - lambda)`` (the time is
    exponential with rate ``mu - lambda``).

    >>> round(mm1_latency_quantile(0.5, 1.0, 0.5), 4)     # the median is ln 2 times the mean
    1.3863
    """
    lam, mu = _rates(arrival_rate, service_rate)
    q = check_real("q", q)
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    return -math.log1p(-q) / (mu - lam)


@dataclass(frozen=True)
class QueueRun:
    """Arrival and departure times of the requests of one first-come-first-served server (same order), with
    each request's service time.

    >>> run = QueueRun(arrivals=[0.0, 1.0], departures=[2.0, 3.0], services=[2.0, 1.0])
    >>> run.latencies.tolist(), run.utilisation, run.mean_in_system    # the second waits 1, then is served 1
    ([2.0, 2.0], 1.0, 1.3333333333333333)
    """

    arrivals: np.ndarray
    departures: np.ndarray
    services: np.ndarray

    def __post_init__(self) -> None:
        a = as_float_array("arrivals", self.arrivals, low=0.0, finite=True, empty=False)
        d = as_float_array("departures", self.departures, low=0.0, finite=True, empty=False)
        s = as_float_array("services", self.services, low=0.0, finite=True, empty=False)
        if not (a.ndim == d.ndim == s.ndim == 1 and a.shape == d.shape == s.shape):
            raise ValueError(f"arrivals, departures and services must be 1-D of one length, got shapes "
                             f"{a.shape}, {d.shape}, {s.shape}")
        if np.any(d < a + s - 1e-9 * np.maximum(1.0, d)):
            raise ValueError("departures must be at least arrivals + services for every request (a request "
                             "leaves after it arrived and was served)")
        for name, arr in (("arrivals", a), ("departures", d), ("services", s)):
            arr = arr.copy()
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def latencies(self) -> np.ndarray:
        """Each request's time in the system, departure minus arrival."""
        return self.departures - self.arrivals

    @property
    def mean_latency(self) -> float:
        return float(self.latencies.mean())

    def percentile(self, q: float) -> float:
        """The ``q``-th percentile (0-100) of the latencies (numpy's linear interpolation)."""
        q = check_real("q", q)
        if not 0.0 <= q <= 100.0:
            raise ValueError(f"q must be in [0, 100], got {q!r}")
        return float(np.percentile(self.latencies, q))

    @property
    def span(self) -> float:
        """From the first arrival to the last departure."""
        return float(self.departures.max() - self.arrivals.min())

    @property
    def arrival_rate(self) -> float:
        """Requests per time unit over the span, ``n / T``: the lambda of Little's law on this run."""
        return len(self.arrivals) / self.span

    @property
    def utilisation(self) -> float:
        """Share of the span the server is busy."""
        return float(self.services.sum() / self.span)

    @property
    def mean_in_system(self) -> float:
        """Time-average number of requests in the system over the span, ``L``: the area under the
        number-in-system curve (the sum of the latencies) divided by the span."""
        return float(self.latencies.sum() / self.span)


def single_server(arrival_rate: float, service_rate: float, *, requests: int = 20_000, seed: int = 0) -> QueueRun:
    """Simulate ``requests`` requests of an M/M/1 queue (Poisson arrivals of rate ``arrival_rate``, exponential
    service times of rate ``service_rate``, one first-come-first-served server, empty at the start).

    >>> run = single_server(0.5, 1.0, requests=50_000, seed=1)
    >>> abs(run.mean_latency - 2.0) < 0.1, round(run.mean_in_system - run.arrival_rate * run.mean_latency, 12)
    (True, 0.0)
    """
    lam, mu = _rates(arrival_rate, service_rate)
    n = check_int("requests", requests, low=1, high=10_000_000)
    seed = check_seed("seed", seed)
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1.0 / lam, n))
    services = rng.exponential(1.0 / mu, n)
    departures = np.empty(n)
    free = 0.0
    for i in range(n):        # Lindley's recursion: start when both the request and the server are there
        free = max(free, arrivals[i]) + services[i]
        departures[i] = free
    return QueueRun(arrivals, departures, services)
