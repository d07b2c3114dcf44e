"""The roofline model (Williams, Waterman & Patterson, "Roofline: an insightful visual performance
model for multicore architectures", Communications of the ACM 52(4), 2009).

A kernel that does ``F`` floating-point operations and moves ``B`` bytes to and from memory has
*arithmetic intensity* ``I = F / B`` (FLOP/byte). On a chip with peak compute ``P`` (FLOP/s) and
memory bandwidth ``beta`` (byte/s) it cannot run faster than

    attainable(I) = min(P, I * beta).

Left of the *ridge point* ``I* = P / beta`` the kernel is memory-bound (the slanted roof), right of it
compute-bound (the flat roof). The model assumes the kernel overlaps compute and memory traffic
perfectly and counts only the traffic to the memory whose bandwidth is given (here DRAM/HBM); caches,
latency and launch overhead are outside it, so real kernels sit under the roof.

>>> ridge_point(19.5e12, 1.555e12)          # A100 40 GB, FP32: FLOP per byte at the ridge
12.540192926045016
>>> float(attainable(0.25, 19.5e12, 1.555e12)) / 1e12   # a = b + c in FP32 is memory-bound
0.38875
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hetlab._validate import as_float_array, check_finite_result, check_int, check_nonnegative, check_positive
from hetlab.models.serving import kv_cache_bytes

__all__ = ["attainable", "ridge_point", "memory_bound", "matmul_intensity", "elementwise_intensity",
           "kernel_time", "dense_layer_intensity", "llm_iteration_costs"]


def _out(arr: np.ndarray) -> Any:
    return float(arr) if arr.ndim == 0 else arr


def attainable(intensity: float | Any, peak: float, bandwidth: float) -> Any:
    """Attainable FLOP/s ``min(peak, intensity * bandwidth)``; ``intensity`` may be an array (FLOP/byte)."""
    peak = check_positive("peak", peak)
    bandwidth = check_positive("bandwidth", bandwidth)
    i = as_float_array("intensity", intensity, low=0.0)
    if i.size == 0:
        raise ValueError("intensity must hold at least one value, got an empty array")
    if np.isinf(i).any():
        raise ValueError("intensity must be in [0, inf), got inf")
    return _out(np.minimum(peak, i * bandwidth))


def ridge_point(peak: float, bandwidth: float) -> float:
    """``I* = peak / bandwidth`` (FLOP/byte): the intensity at which a kernel stops being memory-bound."""
    return check_positive("peak", peak) / check_positive("bandwidth", bandwidth)


def memory_bound(intensity: float, peak: float, bandwidth: float) -> bool:
    """True when a kernel of this intensity sits left of the ridge point (limited by bandwidth)."""
    i = as_float_array("intensity", intensity, low=0.0)
    if i.ndim:
        raise TypeError("intensity must be a single number here")
    return bool(float(i) < ridge_point(peak, bandwidth))


def matmul_intensity(n: int, bytes_per_element: int = 4) -> float:
    """Intensity of C = A @ B for n x n matrices: ``2 n^3`` FLOPs over ``3 n^2`` elements moved once
    (read A and B, write C; the ideal case where caches keep every reuse on chip) = ``2n / (3b)``."""
    n = check_int("n", n, low=1, high=10**7)
    b = check_int("bytes_per_element", bytes_per_element, low=1, high=16)
    return 2.0 * n**3 / (3.0 * n**2 * b)


def elementwise_intensity(flops_per_element: int = 1, operands: int = 3, bytes_per_element: int = 4) -> float:
    """Intensity of an elementwise kernel: ``flops_per_element`` FLOPs per element over ``operands``
    arrays touched (inputs read plus the output written). ``c = a + b`` in FP32: 1 / 12."""
    f = check_int("flops_per_element", flops_per_element, low=1, high=10**6)
    k = check_int("operands", operands, low=1, high=64)
    b = check_int("bytes_per_element", bytes_per_element, low=1, high=16)
    return f / (k * b)


def kernel_time(flops: float, bytes_moved: float, peak: float, bandwidth: float) -> float:
    """Roofline time of a kernel, ``max(flops / peak, bytes / bandwidth)`` (perfect overlap assumed)."""
    flops = check_nonnegative("flops", flops)
    bytes_moved = check_nonnegative("bytes_moved", bytes_moved)
    return max(flops / check_positive("peak", peak), bytes_moved / check_positive("bandwidth", bandwidth))


def dense_layer_intensity(k: int, n: int, batch: int = 1, bytes_per_value: float = 1.0) -> float:
    """Operations per byte of a fully connected layer ``y = x W`` with ``W`` of shape ``k x n`` on
    ``batch`` input rows: ``2 batch k n`` operations over ``(k n + batch k + batch n) * bytes_per_value``
    bytes (weights, inputs and outputs each moved once). A 1x1 convolution on an ``h x w`` image is the
    same layer with ``batch = h * w``. Default one byte per value (INT8).

    >>> round(dense_layer_intensity(4096, 4096), 2)          # batch 1: each weight used once
    2.0
    """
    k = check_int("k", k, low=1, high=10**9)
    n = check_int("n", n, low=1, high=10**9)
    batch = check_int("batch", batch, low=1, high=10**12)
    b = check_positive("bytes_per_value", bytes_per_value)
    if b > 64:
        raise ValueError(f"bytes_per_value must be in (0, 64], got {b:g}")
    return 2 * batch * k * n / ((k * n + batch * k + batch * n) * b)


def llm_iteration_costs(params: float, *, layers: int, hidden: int, peak_flops: float = 312e12, mfu: float = 0.5,
                    bandwidth: float = 2.039e12, mbu: float = 0.6, context: float = 250.0,
                    memory: float = 80e9, reserve: float = 0.1, bytes_per_value: float = 2.0) -> dict[str, float]:
    """Per-iteration costs of :func:`hetlab.models.serving.simulate`, from a model's size and a GPU's datasheet:
    prefill is compute-bound (the flat roof), decode memory-bound (the slanted roof).

    A dense decoder with ``params`` parameters (16-bit, ``bytes_per_value`` = 2) on one GPU with ``peak_flops``
    (A100: 312 TFLOP/s BF16 dense) and HBM ``bandwidth`` (A100 80 GB SXM: 2.039 TB/s):

    - ``prefill_per_token`` = 2 * params / (peak_flops * mfu): a prompt token costs 2 FLOPs per parameter
      (a multiply and an add) and prefill is compute-bound, running at ``mfu`` (model FLOPs utilisation) of peak;
    - ``step_base`` = bytes_per_value * params / (bandwidth * mbu): every decode iteration reads all weights once
      at ``mbu`` (memory bandwidth utilisation) of the HBM bandwidth;
    - ``step_per_sequence`` = kv_per_token * context / (bandwidth * mbu): each running sequence also reads its
      KV cache, ``kv_per_token`` = 2 (K and V) * layers * hidden * bytes_per_value
      (:func:`hetlab.models.serving.kv_cache_bytes`), at ``context`` tokens;
    - ``kv_capacity``: tokens of KV cache that fit in ``memory`` after the weights and a ``reserve`` share for
      workspace (full multi-head attention; grouped-query attention would store fewer bytes per token).

    >>> c = llm_iteration_costs(13e9, layers=40, hidden=5120)
    >>> round(c["prefill_per_token"] * 1e3, 3), round(c["step_base"] * 1e3, 1)   # ms
    (0.167, 21.3)
    """
    psi = check_positive("params", params)
    if psi > 1e13:
        raise ValueError(f"params must be at most 1e13, got {psi:g}")
    n_layers = check_int("layers", layers, low=1, high=10_000)
    h = check_int("hidden", hidden, low=1, high=10 ** 6)
    peak = check_positive("peak_flops", peak_flops)
    bw = check_positive("bandwidth", bandwidth)
    ctx = check_positive("context", context)
    mem = check_positive("memory", memory)
    width = check_positive("bytes_per_value", bytes_per_value)
    if not 0.5 <= width <= 8:
        raise ValueError(f"bytes_per_value must be in [0.5, 8] (4-bit to 64-bit values), got {bytes_per_value!r}")
    for name, value in (("mfu", mfu), ("mbu", mbu)):
        check_positive(name, value)
        if value > 1:
            raise ValueError(f"{name} must be in (0, 1], got {value:g}")
    share = check_nonnegative("reserve", reserve)
    if share >= 1:
        raise ValueError(f"reserve must be in [0, 1), got {share:g}")
    weights = width * psi
    # Full multi-head attention: one key/value head of the whole hidden size holds the same numbers.
    kv_per_token = kv_cache_bytes(layers=n_layers, kv_heads=1, head_dim=h, bytes_per_value=width)
    free = mem * (1.0 - share) - weights
    if free < kv_per_token:
        raise ValueError(f"memory = {memory!r} bytes must hold the weights of params = {params!r} at "
                         f"bytes_per_value = {bytes_per_value!r} ({weights / 1e9:.1f} GB), the reserve = {reserve!r} "
                         f"and one token of KV cache")
    effective = bw * mbu
    costs = {"prefill_per_token": 2.0 * psi / (peak * mfu), "step_base": weights / effective,
             "step_per_sequence": kv_per_token * ctx / effective}
    check_finite_result(list(costs.values()), params=params, peak_flops=peak_flops, bandwidth=bandwidth,
                        context=context)
    return {**costs, "kv_capacity": int(free // kv_per_token), "kv_bytes_per_token": kv_per_token}
