"""The book's formulas, as functions that accept scalars or numpy arrays.

Every function checks its inputs at the boundary and raises ``ValueError`` naming
the parameter and its allowed range (``p must be in [0, 1], got 1.3``) instead of
returning a meaningless number. Scalars in give Python floats out; arrays in give
arrays out, so the same functions draw curves and answer slider callbacks.

>>> amdahl(0.95, 1024)
19.6...
>>> round(amdahl_limit(0.95), 6)
20.0
>>> optimal_tasks(W=10_000, Os=1)
100.0
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import as_float_array

__all__ = [
    "serial_time", "parallel_time", "peak_compute", "total_time", "optimal_tasks", "GranularityDerivation",
    "derive_optimal_tasks", "speedup", "amdahl", "amdahl_limit", "efficiency", "amdahl_efficiency",
    "gustafson", "karp_flatt", "pipeline_period", "pipeline_throughput", "gpipe_bubble_fraction",
    "ring_allreduce_time", "matmul_offload_ms", "imbalance",
]


def _out(arr: np.ndarray) -> Any:
    return float(arr) if arr.ndim == 0 else arr


def _times(name: str, times: Any) -> np.ndarray:
    arr = as_float_array(name, times, low=0.0)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of times, got shape {arr.shape}")
    return arr


def serial_time(times: Any) -> float:
    """``T_serial = sum_i t_i``: one worker does every task in turn."""
    return float(_times("times", times).sum())


def parallel_time(times: Any) -> float:
    """``T_parallel = max_i t_i``: n tasks on n workers, all started together."""
    return float(_times("times", times).max())


def peak_compute(cores: Any, frequency_hz: Any, ipc: Any) -> Any:
    """``P = N_cores * f * IPC``: peak instructions per second.

    >>> peak_compute(64, 2.25e9, 16) / 1e12   # AMD EPYC 7742, FP64 FLOP
    2.304
    """
    n = as_float_array("cores", cores, low=1.0)
    f = as_float_array("frequency_hz", frequency_hz, low=0.0)
    i = as_float_array("ipc", ipc, low=0.0)
    return _out(n * f * i)


def total_time(N: Any, W: Any, Os: Any) -> Any:
    """``T_total(N) = N * Os + W / N``: N tasks, each costing ``Os`` to schedule, sharing work W."""
    n = as_float_array("N", N, low=1.0)
    w = as_float_array("W", W, low=0.0)
    o = as_float_array("Os", Os, low=0.0)
    return _out(n * o + w / n)


def optimal_tasks(W: Any, Os: Any) -> Any:
    """``N* = sqrt(W / Os)``, the task count that minimises :func:`total_time` (see
    :func:`derive_optimal_tasks` for the derivation). ``Os`` must be positive."""
    w = as_float_array("W", W, low=0.0)
    o = as_float_array("Os", Os, low=0.0, low_open=True)
    return _out(np.sqrt(w / o))


@dataclass(frozen=True)
class GranularityDerivation:
    """The steps of minimising ``T(N) = N Os + W / N`` symbolically.

    ``steps`` is a list of ``(explanation, sympy expression)``; ``latex()`` renders them
    as one aligned LaTeX block for a notebook's ``display(Math(...))``.
    """

    T: Any
    dT: Any
    solutions: list
    N_star: Any
    d2T_at_star: Any
    T_min: Any
    steps: list

    def at(self, W: float, Os: float) -> dict[str, float]:
        """The symbolic results evaluated at numbers: ``{"N_star": ..., "T_min": ...}``."""
        symbols = {str(sym): sym for expr in (self.N_star, self.T_min) for sym in expr.free_symbols}
        values = {symbols["W"]: W, symbols["O_s"]: Os}
        return {"N_star": float(self.N_star.subs(values)), "T_min": float(self.T_min.subs(values))}

    def latex(self) -> str:
        import sympy as sp

        lines = [rf"&\text{{{text}}} && {sp.latex(expr)}" for text, expr in self.steps]
        return r"\begin{aligned}" + r"\\ ".join(lines) + r"\end{aligned}"


def derive_optimal_tasks() -> GranularityDerivation:
    """Derive ``N* = sqrt(W / Os)`` with sympy: differentiate, solve, check the second derivative.

    >>> d = derive_optimal_tasks()
    >>> d.N_star
    sqrt(W)/sqrt(O_s)
    >>> d.d2T_at_star.is_positive
    True
    """
    import sympy as sp

    N, W, Os = sp.symbols("N W O_s", positive=True)
    T = N * Os + W / N
    dT = sp.diff(T, N)
    solutions = sp.solve(sp.Eq(dT, 0), N)
    if len(solutions) != 1:
        raise RuntimeError(f"expected one positive stationary point, sympy found {solutions}")
    N_star = sp.simplify(solutions[0])
    d2T = sp.diff(T, N, 2)
    d2T_at_star = sp.simplify(d2T.subs(N, N_star))
    T_min = sp.simplify(T.subs(N, N_star))
    steps = [
        ("total time", sp.Eq(sp.Symbol("T"), T)),
        ("first derivative", sp.Eq(sp.Derivative(sp.Symbol("T"), N), dT)),
        ("set it to zero and solve", sp.Eq(sp.Symbol("N^{*}"), N_star)),
        ("second derivative", sp.Eq(sp.Derivative(sp.Symbol("T"), (N, 2)), d2T)),
        ("at N* it is positive, so N* is a minimum", sp.Eq(sp.Symbol("T''(N^{*})"), d2T_at_star)),
        ("minimum total time", sp.Eq(sp.Symbol("T_{min}"), T_min)),
    ]
    return GranularityDerivation(T, dT, solutions, N_star, d2T_at_star, T_min, steps)


def speedup(t_serial: Any, t_parallel: Any) -> Any:
    """``S = T_serial / T_parallel``."""
    s = as_float_array("t_serial", t_serial, low=0.0)
    p = as_float_array("t_parallel", t_parallel, low=0.0, low_open=True)
    return _out(s / p)


def amdahl(p: Any, N: Any) -> Any:
    """Amdahl's law ``S = 1 / ((1 - p) + p / N)`` for parallel fraction ``p`` on ``N`` devices.

    >>> amdahl(0.5, 2)
    1.333...
    """
    pp = as_float_array("p", p, low=0.0, high=1.0)
    n = as_float_array("N", N, low=1.0)
    return _out(1.0 / ((1.0 - pp) + pp / n))


def amdahl_limit(p: Any) -> Any:
    """``lim_{N->inf} S = 1 / (1 - p)``; infinite for ``p = 1``."""
    pp = as_float_array("p", p, low=0.0, high=1.0)
    with np.errstate(divide="ignore"):
        return _out(1.0 / (1.0 - pp))


def efficiency(S: Any, N: Any) -> Any:
    """Parallel efficiency ``E = S / N``."""
    s = as_float_array("S", S, low=0.0)
    n = as_float_array("N", N, low=1.0)
    return _out(s / n)


def amdahl_efficiency(p: Any, N: Any) -> Any:
    """Efficiency under Amdahl's law, ``E = 1 / (N (1 - p) + p)``."""
    pp = as_float_array("p", p, low=0.0, high=1.0)
    n = as_float_array("N", N, low=1.0)
    return _out(1.0 / (n * (1.0 - pp) + pp))


def gustafson(p: Any, N: Any) -> Any:
    """Gustafson's scaled speed-up ``S = (1 - p) + p N``: the problem grows with the machine."""
    pp = as_float_array("p", p, low=0.0, high=1.0)
    n = as_float_array("N", N, low=1.0)
    return _out((1.0 - pp) + pp * n)


def karp_flatt(S: Any, N: Any) -> Any:
    """Karp-Flatt experimentally determined serial fraction ``e = (1/S - 1/N) / (1 - 1/N)``.

    For a speed-up that follows Amdahl's law exactly, ``e = 1 - p``. ``N`` must exceed 1.
    """
    s = as_float_array("S", S, low=0.0, low_open=True)
    n = as_float_array("N", N, low=1.0, low_open=True)
    return _out((1.0 / s - 1.0 / n) / (1.0 - 1.0 / n))


def pipeline_period(stage_times: Any) -> float:
    """``T_pipeline = max_i t_i``: a pipeline moves one item per period of its slowest stage."""
    return float(_times("stage_times", stage_times).max())


def pipeline_throughput(stage_times: Any) -> float:
    """Items per time unit in steady state, ``1 / max_i t_i``."""
    return 1.0 / pipeline_period(stage_times)


def gpipe_bubble_fraction(stages: Any, micro_batches: Any) -> Any:
    """Idle share of a GPipe step, ``(p - 1) / (m + p - 1)`` for p stages and m micro-batches
    (Huang et al. 2019, GPipe), assuming equal stage times."""
    p = as_float_array("stages", stages, low=1.0)
    m = as_float_array("micro_batches", micro_batches, low=1.0)
    return _out((p - 1.0) / (m + p - 1.0))


def ring_allreduce_time(n_devices: Any, size: Any, bandwidth: Any, latency: Any = 0.0) -> Any:
    """Ring all-reduce of ``size`` data over ``n`` devices (Patarasuk & Yuan 2009):
    ``2 (n - 1) latency + 2 (n - 1) / n * size / bandwidth``; zero for one device."""
    n = as_float_array("n_devices", n_devices, low=1.0)
    s = as_float_array("size", size, low=0.0)
    b = as_float_array("bandwidth", bandwidth, low=0.0, low_open=True)
    a = as_float_array("latency", latency, low=0.0)
    return _out(2.0 * (n - 1.0) * a + 2.0 * (n - 1.0) / n * s / b)


def matmul_offload_ms(n: Any, *, cpu_flops: float = 1e12, gpu_flops: float = 15e12, bandwidth: float = 25e9,
                      launch: float = 1e-5, copies: int = 3) -> tuple[Any, Any, Any]:
    """Milliseconds for an ``n x n`` float32 matrix product on the CPU, and on the GPU counting
    ``copies`` host-device copies (two inputs in, one result out), each ``launch`` seconds plus
    its bytes over ``bandwidth``. Returns ``(cpu_ms, gpu_ms_with_copies, copies_ms)``.

    >>> cpu, gpu, copy = matmul_offload_ms(64)
    >>> gpu > cpu      # a small operator loses on the GPU: the copies cost more than the work
    True
    """
    size = as_float_array("n", n, low=1.0)
    for name, value in (("cpu_flops", cpu_flops), ("gpu_flops", gpu_flops), ("bandwidth", bandwidth)):
        as_float_array(name, value, low=0.0, low_open=True)
    as_float_array("launch", launch, low=0.0)
    flops = 2 * size ** 3
    copy = copies * launch * 1e3 + copies * 4 * size ** 2 / bandwidth * 1e3
    return _out(flops / cpu_flops * 1e3), _out(flops / gpu_flops * 1e3 + copy), _out(copy)


def imbalance(loads: Any) -> float:
    """Load imbalance ``(W_max - W_avg) / W_avg``; 0 means perfectly balanced.

    >>> imbalance([4, 2, 2, 4])
    0.333...
    """
    w = _times("loads", loads)
    mean = w.mean()
    if mean == 0:
        raise ValueError("loads must not all be zero: imbalance is undefined without work")
    return float((w.max() - mean) / mean)
