"""Communication and offload: the closed forms with a data-movement term.

The scaling laws without communication (Amdahl, Gustafson and their fractions, Karp-Flatt,
``N* = sqrt(W / Os)``, efficiency, pipelines, imbalance) are in :mod:`hetlab.formulas`. Here:

- the all-reduce of data-parallel training in the alpha-beta (Hockney) model: the ring
  (:func:`ring_allreduce_time`, ``2 (N - 1)`` steps) and recursive halving-doubling
  (:func:`halving_doubling_allreduce_time`, ``2 log2 N`` steps, the same bytes), and Amdahl's law with one of
  them in the step, ``T(N) = C (1 - p) + C p / N + T_allreduce(N)`` (:func:`allreduce_step_time`,
  :func:`speedup_with_allreduce`). The latency term grows with ``N`` while the parallel part shrinks, so the
  speed-up rises, peaks and falls: :func:`peak_devices` is the calculus optimum (for the ring
  ``sqrt((C p - 2 G / B) / (2 alpha))``), :func:`best_device_count` the best whole count, and
  :func:`efficiency_knee` the largest count whose efficiency ``S / N`` stays above a threshold;
- the other collectives, reduce-scatter, all-gather and all-to-all (:func:`collective_time`), and the bus
  bandwidth nccl-tests reports (:func:`bus_bandwidth`);
- overlapping the gradient all-reduce with the backward pass in buckets (:func:`exposed_allreduce`,
  :func:`best_bucket_count`; PyTorch DDP), and copies with compute (:func:`copy_compute_pipeline`);
- offloading to an accelerator: one copy (:func:`copy_time`), an ``n x n`` matrix product with its copies
  (:func:`matmul_offload_time`), the smallest ``n`` worth offloading (:func:`offload_breakeven`), and the
  arithmetic intensity of a row block of the product (:func:`row_block_intensity`).

Units: seconds, bytes, bytes/s and FLOP/s (the book converts for display). Assumptions shared by the models:
identical devices on one link speed, the all-reduce owns the network, and communication does not overlap
computation unless the function says so (chapter 6 shows overlap).

>>> round(speedup_with_allreduce(0.95, 64), 2)    # 1 s step, 0.5 GB of gradients, 25 GB/s, 14 us per hop
9.44
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetlab._validate import (
    as_float_array,
    check_bool,
    check_choice,
    check_finite_result,
    check_int,
    check_nonnegative,
    check_positive,
    check_real,
)

__all__ = [
    "ALLREDUCE_ALGORITHMS", "ring_allreduce_time", "halving_doubling_allreduce_time", "allreduce_step_time",
    "speedup_with_allreduce", "peak_devices", "best_device_count",
    "efficiency_knee", "copy_compute_pipeline", "copy_time", "matmul_offload_time", "offload_breakeven",
    "row_block_intensity", "COLLECTIVES", "collective_time", "bus_bandwidth", "NVLINK_STEP_LATENCY",
    "NETWORK_STEP_LATENCY", "exposed_allreduce", "best_bucket_count",
]

#: Latency per step of a ring collective between GPUs (seconds), the alpha of the alpha-beta model, as NCCL's own
#: cost model charges it for the ring algorithm with the Simple protocol that large messages use (NVIDIA/nccl,
#: src/graph/tuning.cc, ``hwLatencies``): 3.4 us per step over NVLink inside a node and 14 us per step over the
#: network between nodes. The book uses these two values wherever it prices a collective between GPUs
#: (chapters 8, 10, 12 and 13); the functions below that model a training step default to the network's.
NVLINK_STEP_LATENCY = 3.4e-6
NETWORK_STEP_LATENCY = 14e-6


def _out(arr: Any, **inputs: Any) -> Any:
    """A scalar for scalar inputs, else the array; ValueError naming ``inputs`` on overflow."""
    arr = np.asarray(arr)
    check_finite_result(arr, **inputs)
    return float(arr) if arr.ndim == 0 else arr


def ring_allreduce_time(n_devices: Any, nbytes: Any, bandwidth: Any, latency: Any = 0.0) -> Any:
    """Seconds for a ring all-reduce of ``nbytes`` over ``n_devices`` (Patarasuk & Yuan 2009):
    ``2 (n - 1) latency + 2 (n - 1) / n * nbytes / bandwidth``; zero for one device. Arrays allowed.

    >>> ring_allreduce_time(4, 1e9, 10e9)       # each device sends 2 * 3/4 GB at 10 GB/s
    0.15

    See also :func:`hetlab.models.training.ring_allreduce` (the two phases apart).
    """
    n = as_float_array("n_devices", n_devices, low=1.0, finite=True, integer=True)
    s = as_float_array("nbytes", nbytes, low=0.0, finite=True)
    b = as_float_array("bandwidth", bandwidth, low=0.0, low_open=True)   # inf: only latency counts
    a = as_float_array("latency", latency, low=0.0, finite=True)
    with np.errstate(over="ignore"):
        return _out(2.0 * (n - 1.0) * a + 2.0 * (n - 1.0) / n * s / b, n_devices=n_devices, nbytes=nbytes,
                    bandwidth=bandwidth, latency=latency)


def halving_doubling_allreduce_time(n_devices: Any, nbytes: Any, bandwidth: Any, latency: Any = 0.0) -> Any:
    """Seconds for Rabenseifner's all-reduce: a reduce-scatter by recursive halving, then an all-gather by
    recursive doubling (Thakur, Rabenseifner & Gropp 2005), ``2 ceil(log2 n) latency + 2 (n - 1) / n *
    nbytes / bandwidth``: the ring's bytes in ``2 log2 n`` steps instead of ``2 (n - 1)``. Exact for ``n`` a
    power of two; other counts are rounded up to the next power (real libraries add a step or two there).
    Zero for one device. Arrays allowed.

    >>> halving_doubling_allreduce_time(4, 1e9, 10e9)      # same bytes as the ring: 2 * 3/4 GB at 10 GB/s
    0.15
    >>> round(halving_doubling_allreduce_time(1024, 0.0, 10e9, 1e-3), 6)   # 2 * 10 steps of 1 ms
    0.02

    See also :func:`ring_allreduce_time` (``2 (n - 1)`` latency steps).
    """
    n = as_float_array("n_devices", n_devices, low=1.0, finite=True, integer=True)
    s = as_float_array("nbytes", nbytes, low=0.0, finite=True)
    b = as_float_array("bandwidth", bandwidth, low=0.0, low_open=True)
    a = as_float_array("latency", latency, low=0.0, finite=True)
    with np.errstate(over="ignore"):
        steps = np.ceil(np.log2(n) - 1e-12)      # 1e-12: log2 of an exact power of two may land a hair above
        return _out(2.0 * steps * a + 2.0 * (n - 1.0) / n * s / b, n_devices=n_devices, nbytes=nbytes,
                    bandwidth=bandwidth, latency=latency)


#: The all-reduce algorithms of :func:`allreduce_step_time`, by name.
ALLREDUCE_ALGORITHMS = {"ring": ring_allreduce_time, "halving_doubling": halving_doubling_allreduce_time}


#: The collectives of :func:`collective_time` and :func:`bus_bandwidth`.
COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all")


def _bus_factor(collective: str, n: np.ndarray) -> np.ndarray:
    """Share of its buffer each device must send: ``2 (n - 1) / n`` for an all-reduce, ``(n - 1) / n`` else."""
    return (2.0 if collective == "all_reduce" else 1.0) * (n - 1.0) / n


def collective_time(collective: str, n_devices: Any, nbytes: Any, bandwidth: Any, latency: Any = 0.0) -> Any:
    """Seconds for one ``collective`` (one of :data:`COLLECTIVES`) over ``n_devices``, each sending through a link
    of ``bandwidth`` bytes/s, on a buffer of ``nbytes`` per device: the array an all-reduce sums, an all-gather
    ends with, a reduce-scatter starts from, an all-to-all sends out in ``n`` pieces. Ring (pairwise for the
    all-to-all) algorithms: ``f(n) * nbytes / bandwidth + steps * latency``, with ``f = 2 (n - 1) / n`` and
    ``2 (n - 1)`` steps for the all-reduce (:func:`ring_allreduce_time`: a reduce-scatter, then an all-gather)
    and ``f = (n - 1) / n`` and ``n - 1`` steps for the others. ``f(n) * nbytes`` is what every device must send
    whatever the algorithm (nccl-tests, doc/PERFORMANCE.md); an all-to-all across nodes is further limited by
    the network's bisection bandwidth, which this model does not see. Arrays allowed.

    >>> collective_time("all_gather", 8, 8e9, 100e9)       # each device sends the 7 pieces it does not hold
    0.07
    >>> collective_time("all_reduce", 8, 8e9, 100e9) == 2 * collective_time("reduce_scatter", 8, 8e9, 100e9)
    True
    """
    check_choice("collective", collective, COLLECTIVES)
    if collective == "all_reduce":
        return ring_allreduce_time(n_devices, nbytes, bandwidth, latency)
    n = as_float_array("n_devices", n_devices, low=1.0, finite=True, integer=True)
    s = as_float_array("nbytes", nbytes, low=0.0, finite=True)
    b = as_float_array("bandwidth", bandwidth, low=0.0, low_open=True)
    a = as_float_array("latency", latency, low=0.0, finite=True)
    with np.errstate(over="ignore"):
        return _out((n - 1.0) * a + _bus_factor(collective, n) * s / b, n_devices=n_devices, nbytes=nbytes,
                    bandwidth=bandwidth, latency=latency)


def bus_bandwidth(collective: str, n_devices: Any, nbytes: Any, seconds: Any) -> Any:
    """nccl-tests' bus bandwidth (bytes/s) of a ``collective`` that moved a buffer of ``nbytes`` per device over
    ``n_devices`` in ``seconds``: the algorithm bandwidth ``nbytes / seconds`` times the share each device had to
    send (all-reduce ``2 (n - 1) / n``, the others ``(n - 1) / n``). It is the rate each device's link ran at, so
    it compares with the link's peak at any ``n``; the algorithm bandwidth falls as ``n`` grows even on a
    perfect link. Arrays allowed.

    >>> round(bus_bandwidth("all_reduce", 8, 2**30, 5.2e-3) / 1e9, 1)   # 1 GiB on 8 GPUs in 5.2 ms
    361.4
    """
    check_choice("collective", collective, COLLECTIVES)
    n = as_float_array("n_devices", n_devices, low=1.0, finite=True, integer=True)
    s = as_float_array("nbytes", nbytes, low=0.0, finite=True)
    t = as_float_array("seconds", seconds, low=0.0, low_open=True, finite=True)
    with np.errstate(over="ignore"):
        return _out(s / t * _bus_factor(collective, n), n_devices=n_devices, nbytes=nbytes, seconds=seconds)


def _step(compute_time: Any, grad_bytes: Any, bandwidth: Any, latency: Any) -> tuple[float, float, float, float]:
    """The single-device step and the link, checked under their own names."""
    c = check_positive("compute_time", compute_time, high=1e12)
    g = check_nonnegative("grad_bytes", grad_bytes, high=1e18)
    b = check_positive("bandwidth", bandwidth, allow_inf=True)
    a = check_nonnegative("latency", latency, high=1e6)
    return c, g, b, a


def allreduce_step_time(p: Any, n_devices: Any, *, compute_time: float = 1.0, grad_bytes: float = 0.5e9,
                        bandwidth: float = 25e9, latency: float = NETWORK_STEP_LATENCY, algorithm: str = "ring") -> Any:
    """Seconds per data-parallel step on ``n_devices``: a serial share ``1 - p`` of the one-device step
    ``compute_time``, the rest split over the devices, plus an all-reduce of ``grad_bytes`` (none on one
    device): ``C (1 - p) + C p / N + T_allreduce(N, G, B, alpha)``, the all-reduce named by ``algorithm``
    (``"ring"``: :func:`ring_allreduce_time`; ``"halving_doubling"``: :func:`halving_doubling_allreduce_time`).
    Arrays allowed.

    Defaults: a 1 s step, 0.5 GB of gradients, 25 GB/s and :data:`NETWORK_STEP_LATENCY` (14 us) per ring step
    (chapter 12).

    >>> allreduce_step_time(0.95, 1)              # one device: no all-reduce, the whole step
    1.0
    >>> round(allreduce_step_time(0.95, 2), 4)     # 0.05 + 0.475 + 2 * 14 us + 0.5 GB / 25 GB/s
    0.545

    See also :func:`speedup_with_allreduce`, :func:`ring_allreduce_time`.
    """
    share = as_float_array("p", p, low=0.0, high=1.0)
    n = as_float_array("n_devices", n_devices, low=1.0, finite=True, integer=True)
    c, g, b, a = _step(compute_time, grad_bytes, bandwidth, latency)
    allreduce = ALLREDUCE_ALGORITHMS[check_choice("algorithm", algorithm, ALLREDUCE_ALGORITHMS)]
    with np.errstate(over="ignore"):
        total = c * (1.0 - share) + c * share / n + allreduce(n, g, b, a)
    return _out(total, p=p, n_devices=n_devices, compute_time=c, grad_bytes=g, bandwidth=b, latency=a)


def speedup_with_allreduce(p: Any, n_devices: Any, *, compute_time: float = 1.0, grad_bytes: float = 0.5e9,
                           bandwidth: float = 25e9, latency: float = NETWORK_STEP_LATENCY,
                           algorithm: str = "ring") -> Any:
    """Speed-up over one device, ``compute_time / allreduce_step_time(...)``; Amdahl's law when
    ``grad_bytes = latency = 0``. Arrays allowed.

    >>> from hetlab.formulas import amdahl
    >>> speedup_with_allreduce(0.95, 64, grad_bytes=0, latency=0) == amdahl(0.95, 64)
    True
    >>> round(speedup_with_allreduce(0.95, 1024), 2)          # Amdahl would give 19.64
    8.37
    >>> round(speedup_with_allreduce(0.95, 1024, algorithm="halving_doubling"), 2)   # 20 latency steps, not 2046
    10.97

    See also :func:`best_device_count`, :func:`peak_devices`, :func:`efficiency_knee`.
    """
    step = allreduce_step_time(p, n_devices, compute_time=compute_time, grad_bytes=grad_bytes,
                               bandwidth=bandwidth, latency=latency, algorithm=algorithm)
    return _out(compute_time / np.asarray(step), p=p, n_devices=n_devices)


def peak_devices(p: float, *, compute_time: float = 1.0, grad_bytes: float = 0.5e9, bandwidth: float = 25e9,
                 latency: float = NETWORK_STEP_LATENCY, algorithm: str = "ring") -> float:
    """Where :func:`speedup_with_allreduce` peaks, from ``dT/dN = 0`` with ``N`` continuous: for the ring
    (latency ``2 (N - 1) alpha``) ``sqrt((C p - 2 G / B) / (2 alpha))``; for halving-doubling (latency
    ``2 log2(N) alpha``) ``(C p - 2 G / B) ln 2 / (2 alpha)``. At least 1 (when ``C p <= 2 G / B`` one device is
    already best). ``latency`` must be positive: without it the speed-up never stops rising.

    >>> round(peak_devices(0.95), 1)                 # sqrt((0.95 - 0.04) / 28e-6)
    180.3
    >>> round(peak_devices(0.95, algorithm="halving_doubling"))     # (0.95 - 0.04) ln 2 / 28e-6
    22527

    See also :func:`best_device_count` (the best whole count, by a scan).
    """
    share = check_real("p", p)
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    c, g, b, a = _step(compute_time, grad_bytes, bandwidth, latency)
    check_choice("algorithm", algorithm, ALLREDUCE_ALGORITHMS)
    if a == 0.0:
        raise ValueError("latency must be in (0, 1e+06] for a peak: without latency the speed-up never falls, got 0")
    gain = c * share - 2.0 * g / b
    if gain <= 0:
        return 1.0
    if algorithm == "ring":
        return max(1.0, math.sqrt(gain / (2.0 * a)))
    return max(1.0, gain * math.log(2.0) / (2.0 * a))


def _counts(max_devices: Any) -> np.ndarray:
    if isinstance(max_devices, bool) or not isinstance(max_devices, (int, np.integer)):
        raise TypeError(f"max_devices must be an integer, got {type(max_devices).__name__} {max_devices!r}")
    if not 1 <= max_devices <= 1_000_000:
        raise ValueError(f"max_devices must be in [1, 1000000], got {max_devices}")
    return np.arange(1, int(max_devices) + 1)


def best_device_count(p: float, *, max_devices: int = 4096, compute_time: float = 1.0, grad_bytes: float = 0.5e9,
                      bandwidth: float = 25e9, latency: float = NETWORK_STEP_LATENCY) -> int:
    """The device count in ``[1, max_devices]`` with the shortest :func:`allreduce_step_time` (the smallest
    on ties): past it, adding devices makes the step slower.

    >>> best_device_count(0.95)                       # peak_devices gives 180.3
    180
    >>> best_device_count(0.95, max_devices=64, grad_bytes=0, latency=0)   # no communication: use them all
    64

    See also :func:`peak_devices`, :func:`efficiency_knee`.
    """
    share = check_real("p", p)      # one fraction: the answer is one count
    counts = _counts(max_devices)
    step = allreduce_step_time(share, counts, compute_time=compute_time, grad_bytes=grad_bytes,
                               bandwidth=bandwidth, latency=latency)
    return int(counts[np.argmin(step)])


def efficiency_knee(p: float, *, min_efficiency: float = 0.5, max_devices: int = 4096, compute_time: float = 1.0,
                    grad_bytes: float = 0.5e9, bandwidth: float = 25e9, latency: float = NETWORK_STEP_LATENCY) -> int:
    """A cost-aware device count: the largest ``N`` in ``[1, max_devices]`` whose parallel efficiency
    ``S(N) / N`` (speed-up with the all-reduce, per device) is still at least ``min_efficiency``.
    :func:`best_device_count` maximises the speed-up regardless of what each extra device buys; near that
    optimum the curve is flat and the efficiency small.

    >>> efficiency_knee(0.95, min_efficiency=0.5, max_devices=1024)
    12

    See also :func:`best_device_count`.
    """
    share = check_real("p", p)
    e_min = check_real("min_efficiency", min_efficiency)
    if not 0.0 < e_min <= 1.0:
        raise ValueError(f"min_efficiency must be in (0, 1], got {min_efficiency!r}")
    counts = _counts(max_devices)
    eff = np.asarray(speedup_with_allreduce(share, counts, compute_time=compute_time, grad_bytes=grad_bytes,
                                            bandwidth=bandwidth, latency=latency)) / counts
    return int(counts[eff >= e_min - 1e-12].max())


def exposed_allreduce(buckets: Any, *, backward_time: float, grad_bytes: float, n_devices: int, bandwidth: float,
                      latency: float = 0.0) -> Any:
    """Seconds of gradient all-reduce still running when the backward pass ends, with the gradients sent in
    ``buckets`` equal buckets as they are produced (PyTorch DDP's gradient bucketing, Li et al. 2020).

    Model: the backward pass lasts ``backward_time`` = T_b and produces the ``grad_bytes`` at an even rate, so
    bucket ``i`` (1..k) is ready at ``i T_b / k``; the buckets are all-reduced one after another in that order
    (one communication stream: a communicator runs its collectives in order), each a ring all-reduce of
    ``grad_bytes / k`` taking ``t = 2 (n - 1) latency + 2 (n - 1) / n * grad_bytes / (k bandwidth)``; compute
    does not slow down while communication runs. The last all-reduce ends at ``max_j (j T_b / k + (k - j + 1) t)``,
    so the exposed time is ``max(t, T_b / k + k t - T_b)``: only the last bucket's ``t`` when each bucket is sent
    before the next is ready (``t <= T_b / k``), else everything the link could not keep up with. Few buckets
    expose a big last bucket; many pay the latency ``2 (n - 1) latency`` once each. Arrays of ``buckets`` allowed.

    >>> round(exposed_allreduce(1, backward_time=0.3, grad_bytes=3e9, n_devices=64, bandwidth=50e9) * 1e3, 2)
    118.12
    >>> round(exposed_allreduce(120, backward_time=0.3, grad_bytes=3e9, n_devices=64, bandwidth=50e9,
    ...                         latency=10e-6) * 1e3, 2)     # 25 MB buckets: only the last one shows
    2.24
    """
    k = as_float_array("buckets", buckets, low=1.0, high=1e9, finite=True, integer=True)
    tb = check_nonnegative("backward_time", backward_time, high=1e6)
    g = check_nonnegative("grad_bytes", grad_bytes, high=1e18)
    n = check_int("n_devices", n_devices, low=1, high=10 ** 7)
    b = check_positive("bandwidth", bandwidth, high=1e15)
    a = check_nonnegative("latency", latency, high=1.0)
    with np.errstate(over="ignore"):
        each = np.asarray(ring_allreduce_time(n, g / k, b, a))
        left = np.maximum(each, tb / k + k * each - tb)
    check_finite_result(left, buckets=buckets, grad_bytes=g, bandwidth=b, latency=a)
    return float(left) if left.ndim == 0 else left


def best_bucket_count(*, backward_time: float, grad_bytes: float, n_devices: int, bandwidth: float,
                      latency: float = 0.0, max_buckets: int = 100_000) -> int:
    """The bucket count in ``[1, max_buckets]`` that leaves the least all-reduce after the backward pass
    (:func:`exposed_allreduce`; the smallest count on ties). While the link keeps up, more buckets shrink the last
    one; past ``k = (T_b - c) / (2 (n - 1) latency)``, with ``c`` the ring's bandwidth term for all the gradients,
    the latencies add up to more than the backward pass and the exposed time climbs again.

    >>> best_bucket_count(backward_time=0.3, grad_bytes=3e9, n_devices=64, bandwidth=50e9, latency=10e-6)
    144
    """
    top = check_int("max_buckets", max_buckets, low=1, high=10 ** 7)
    counts = np.arange(1, top + 1)
    left = exposed_allreduce(counts, backward_time=backward_time, grad_bytes=grad_bytes, n_devices=n_devices,
                             bandwidth=bandwidth, latency=latency)
    return int(counts[np.argmin(np.atleast_1d(left))])


def copy_compute_pipeline(batches: int = 8, copy: float = 1.0, compute: float = 1.0) -> tuple[float, float]:
    """``(sequential, overlapped)`` seconds for ``batches`` batches, each copied host -> device in ``copy``
    and then computed in ``compute``. In sequence every batch pays both, ``k (copy + compute)``; with two
    buffers (pinned host memory, a copy engine, two streams) the copy of batch ``i + 1`` runs during the
    compute of batch ``i``: ``copy + compute + (k - 1) max(copy, compute)``.

    >>> copy_compute_pipeline(8, 1.0, 3.0)            # the shorter stage hides behind the longer one
    (32.0, 25.0)
    """
    k = check_int("batches", batches, low=1, high=10**9)
    tc = check_positive("copy", copy, high=1e12)
    tp = check_positive("compute", compute, high=1e12)
    return k * (tc + tp), tc + tp + (k - 1) * max(tc, tp)


def copy_time(nbytes: Any, bandwidth: float = 25e9, latency: float = 1e-5) -> Any:
    """Seconds to copy ``nbytes`` between host and device: ``latency + nbytes / bandwidth`` (one copy
    launch plus the bytes; defaults: PCIe 4.0 x16 at about 25 GB/s achieved, 10 us per launch). Arrays allowed.

    >>> round(2 * copy_time(2e6) * 1e6, 1)           # a 2 MB tensor there and back: 2 x (10 + 80) us
    180.0

    See also :func:`matmul_offload_time`; :func:`hetlab.devices.transfer_time` between two Device models.
    """
    size = as_float_array("nbytes", nbytes, low=0.0, finite=True)
    bw = check_positive("bandwidth", bandwidth, high=1e15)
    lat = check_nonnegative("latency", latency, high=1.0)
    with np.errstate(over="ignore"):
        return _out(lat + size / bw, nbytes=nbytes, bandwidth=bw, latency=lat)


def _offload_model(cpu_flops: float, gpu_flops: float, bandwidth: float, latency: float, copies: int,
                   element_bytes: int) -> dict[str, Any]:
    return dict(cpu_flops=check_positive("cpu_flops", cpu_flops, high=1e16),
                gpu_flops=check_positive("gpu_flops", gpu_flops, high=1e18),
                bandwidth=check_positive("bandwidth", bandwidth, high=1e14),
                latency=check_nonnegative("latency", latency, high=1.0),
                copies=check_int("copies", copies, low=0, high=1000),
                element_bytes=check_int("element_bytes", element_bytes, low=1, high=16))


def _offload_times(size: Any, m: dict[str, Any]) -> tuple[Any, Any, Any]:
    with np.errstate(over="ignore"):
        flops = 2.0 * size ** 3
        copies = m["copies"] * (m["latency"] + m["element_bytes"] * size ** 2 / m["bandwidth"])
        return flops / m["cpu_flops"], flops / m["gpu_flops"] + copies, copies


def matmul_offload_time(n: Any, *, cpu_flops: float = 1e12, gpu_flops: float = 15e12, bandwidth: float = 25e9,
                        latency: float = 1e-5, copies: int = 3, element_bytes: int = 4) -> tuple[Any, Any, Any]:
    """Seconds for an ``n x n`` matrix product (``2 n**3`` FLOP) on the CPU, and on the GPU counting
    ``copies`` host-device copies (two inputs in, one result out), each a :func:`copy_time` of
    ``element_bytes * n**2`` bytes (4: float32; 8: float64). Returns ``(cpu, gpu_with_copies, copies)``.

    >>> cpu, gpu, copies = matmul_offload_time(64)
    >>> gpu > cpu      # a small operator loses on the GPU: the copies cost more than the work
    True
    >>> round(copies * 1e6, 2)                       # 3 x (10 us + 16 KiB at 25 GB/s)
    31.97

    See also :func:`offload_breakeven`; :func:`hetlab.models.hardware.offload_times` for an elementwise kernel.
    """
    size = as_float_array("n", n, low=1.0, finite=True)
    model = _offload_model(cpu_flops, gpu_flops, bandwidth, latency, copies, element_bytes)
    inputs = {"n": n, "cpu_flops": cpu_flops, "gpu_flops": gpu_flops, "bandwidth": bandwidth, "latency": latency}
    return tuple(_out(t, **inputs) for t in _offload_times(size, model))


def offload_breakeven(*, cpu_flops: float = 1e12, gpu_flops: float = 15e12, bandwidth: float = 25e9,
                      latency: float = 1e-5, copies: int = 3, element_bytes: int = 4) -> int:
    """The smallest ``n`` for which an ``n x n`` matrix product is faster on the GPU, copies included, in
    :func:`matmul_offload_time`'s model (same parameters; both speeds in the same precision). Returns 0 when
    the GPU is not faster per FLOP (no ``n`` breaks even); ValueError when no ``n`` up to 1e9 does. The
    search has no upper size limit below that.

    >>> offload_breakeven()                           # 1 TFLOP/s CPU, 15 TFLOP/s GPU, 25 GB/s, 3 copies
    373
    >>> offload_breakeven(cpu_flops=100e9)            # a single core: the GPU wins sooner
    124
    >>> offload_breakeven(cpu_flops=40e9, gpu_flops=9.7e12, latency=0.0, element_bytes=8)   # FP64
    20

    See also :func:`matmul_offload_time`.
    """
    m = _offload_model(cpu_flops, gpu_flops, bandwidth, latency, copies, element_bytes)
    if m["gpu_flops"] <= m["cpu_flops"]:
        return 0

    def wins(n: float) -> bool:
        cpu, gpu, _ = _offload_times(float(n), m)
        return gpu < cpu

    # Seconds saved per n**3 against copy seconds per n**2: the crossing is near their ratio.
    hi = max(1.0, (m["copies"] * m["element_bytes"] / m["bandwidth"])
             / (2.0 * (1.0 / m["cpu_flops"] - 1.0 / m["gpu_flops"])))
    while hi <= 1e9 and not wins(hi):
        hi *= 2.0
    if hi > 1e9:
        raise ValueError(f"no break-even size up to n = 1e9 for cpu_flops={cpu_flops!r}, gpu_flops={gpu_flops!r}, "
                         f"bandwidth={bandwidth!r}, latency={latency!r}: the copy never pays off in practice")
    if wins(1):
        return 1
    lo = 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if wins(mid) else (mid, hi)
    n = max(1, math.floor(hi))
    while not wins(n):
        n += 1
    while n > 1 and wins(n - 1):
        n -= 1
    return int(n)


def row_block_intensity(rows: int = 1, n: int = 600, element_bytes: int = 8, reads_all_of_b: bool = True) -> float:
    """Arithmetic intensity (FLOP/byte) of one ``rows x n`` block of an ``n x n`` matrix product:
    ``2 rows n^2`` FLOP over ``element_bytes * (2 rows n + n^2)`` bytes (read the block of A and all of B,
    write the block of C; each moved once). ``reads_all_of_b=False`` drops the ``n^2`` term: the common slip
    of forgetting that every block re-reads all of B (it gives ``n / b`` for any ``rows``), kept so that
    chapter 12's quiz can show where that slip leads.

    >>> round(row_block_intensity(1, 600), 2), round(row_block_intensity(600, 600), 2)
    (0.25, 50.0)

    See also :func:`hetlab.models.roofline.kernel_time` (time from intensity).
    """
    size = check_int("n", n, low=1, high=10**6)
    r = check_int("rows", rows, low=1, high=size)
    b = check_int("element_bytes", element_bytes, low=1, high=16)
    check_bool("reads_all_of_b", reads_all_of_b)
    moved = 2 * r * size + (size * size if reads_all_of_b else 0)
    return float(2.0 * r * size * size / (b * moved))
