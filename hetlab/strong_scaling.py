"""Strong scaling when every step ends with a gradient all-reduce: Amdahl's law plus a communication term.

Amdahl's law (Amdahl 1967) has no communication: with a parallel share ``p`` the speed-up on ``N``
devices is ``1 / ((1 - p) + p / N)``, which only rises towards ``1 / (1 - p)``. A data-parallel
training step also synchronises gradients; with a ring all-reduce (Patarasuk & Yuan 2009) that costs

    t_comm(N) = 2 (N - 1) * latency + 2 (N - 1) / N * grad_bytes / bandwidth,

which *grows* with N. The step then takes ``T(N) = (1 - p) T1 + p T1 / N + t_comm(N)`` and the
speed-up ``T1 / T(N)`` has a maximum: past it, adding devices makes the step slower.

Assumptions: ``T1`` is the step on one device, which needs no all-reduce; communication is not
overlapped with computation (chapter 6 shows overlap, capped by the compute time); every device is
identical and the ring uses one link speed.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hetlab._validate import as_float_array, check_finite_result, check_positive, check_real

__all__ = ["step_time", "speedup_with_allreduce", "best_device_count", "efficiency_knee"]


def _p(p: Any) -> np.ndarray:
    return as_float_array("p", p, low=0.0, high=1.0)


def _out(value: np.ndarray) -> Any:
    return float(value) if np.ndim(value) == 0 else value


def step_time(p: Any, n_devices: Any, *, step_seconds: float = 1.0, grad_bytes: float = 0.5e9,
              bandwidth: float = 25e9, latency: float = 20e-6) -> Any:
    """Seconds per step on ``n_devices`` (see the module docstring); accepts numpy arrays.

    >>> round(step_time(0.95, 1), 3)     # one device: no all-reduce, the whole step
    1.0
    """
    share = _p(p)
    n = as_float_array("n_devices", n_devices, low=1.0, finite=True)
    if np.any(n != np.floor(n)):
        raise ValueError(f"n_devices must be whole numbers >= 1, got {n_devices!r}")
    t1 = check_positive("step_seconds", step_seconds)
    size = check_real("grad_bytes", grad_bytes)
    if not 0 <= size < np.inf:
        raise ValueError(f"grad_bytes must be in [0, inf), got {grad_bytes!r}")
    link = check_positive("bandwidth", bandwidth)
    lat = check_real("latency", latency)
    if not 0 <= lat < np.inf:
        raise ValueError(f"latency must be in [0, inf), got {latency!r}")
    with np.errstate(over="ignore"):
        comm = 2.0 * (n - 1.0) * lat + 2.0 * (n - 1.0) / n * size / link
        total = (1.0 - share) * t1 + share * t1 / n + comm
    check_finite_result(total, step_seconds=t1, grad_bytes=size, bandwidth=link, latency=lat)
    return _out(total)


def speedup_with_allreduce(p: Any, n_devices: Any, **link: float) -> Any:
    """``T(1) / T(N)`` with the all-reduce term; equals Amdahl's law when ``grad_bytes = latency = 0``.

    >>> from hetlab.formulas import amdahl
    >>> speedup_with_allreduce(0.95, 64, grad_bytes=0, latency=0) == amdahl(0.95, 64)
    True
    """
    return _out(step_time(p, 1, **link) / np.asarray(step_time(p, n_devices, **link)))


def best_device_count(p: float, *, max_devices: int = 4096, **link: float) -> int:
    """The device count in [1, max_devices] with the highest speed-up (the smallest on ties)."""
    p = check_real("p", p)      # one fraction: the answer is one count
    if isinstance(max_devices, bool) or not isinstance(max_devices, (int, np.integer)):
        raise TypeError(f"max_devices must be an integer, got {type(max_devices).__name__} {max_devices!r}")
    if not 1 <= max_devices <= 1_000_000:
        raise ValueError(f"max_devices must be in [1, 1000000], got {max_devices}")
    counts = np.arange(1, int(max_devices) + 1)
    return int(counts[np.argmin(step_time(p, counts, **link))])


def efficiency_knee(p: float, *, min_efficiency: float = 0.5, max_devices: int = 4096, **link: float) -> int:
    """A cost-aware device count: the largest N in [1, max_devices] whose parallel efficiency
    ``E(N) = S(N) / N`` (speed-up with the all-reduce term, per device) is still at least
    ``min_efficiency``. ``best_device_count`` maximises speed-up regardless of what each extra
    device buys; near that optimum the curve is flat and E is small.

    >>> efficiency_knee(0.95, min_efficiency=0.5, max_devices=1024)   # default link: 0.5 GB, 25 GB/s, 20 us
    12
    """
    p = check_real("p", p)
    e_min = check_real("min_efficiency", min_efficiency)
    if not 0.0 < e_min <= 1.0:
        raise ValueError(f"min_efficiency must be in (0, 1], got {min_efficiency!r}")
    if isinstance(max_devices, bool) or not isinstance(max_devices, (int, np.integer)):
        raise TypeError(f"max_devices must be an integer, got {type(max_devices).__name__} {max_devices!r}")
    if not 1 <= max_devices <= 1_000_000:
        raise ValueError(f"max_devices must be in [1, 1000000], got {max_devices}")
    counts = np.arange(1, int(max_devices) + 1)
    eff = np.asarray(speedup_with_allreduce(p, counts, **link)) / counts
    ok = counts[eff >= e_min - 1e-12]
    return int(ok.max())
