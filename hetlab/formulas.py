"""The book's scaling laws as closed forms that accept scalars or numpy arrays.

Here: serial and parallel time, the granularity model ``T(N) = N Os + W / N`` with its optimum
``N* = sqrt(W / Os)`` (and the sympy derivation of it), speed-up and efficiency, Amdahl and Gustafson and the
conversion between their parallel fractions, the Karp-Flatt serial fraction, pipeline period and throughput,
load imbalance, and model FLOPs utilisation (MFU). The formulas with a data-movement term (ring all-reduce,
Amdahl with the all-reduce and its best device count, copy/compute overlap, offloading to an accelerator) are
in :mod:`hetlab.communication`; peak compute ``N_cores * f * FLOPs/cycle`` is
:func:`hetlab.models.hardware.peak_flops`.

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

from hetlab._validate import (
    as_float_array,
    check_finite_result,
    check_instance,
    check_nonnegative,
    check_positive,
)

__all__ = [
    "serial_time", "parallel_time", "total_time", "optimal_tasks", "GranularityDerivation",
    "derive_optimal_tasks", "speedup", "amdahl", "amdahl_limit", "efficiency", "amdahl_efficiency",
    "gustafson", "gustafson_to_amdahl_fraction", "fraction_after_speedup", "karp_flatt", "overhead_time",
    "isoefficiency_work", "pipeline_period",
    "pipeline_throughput", "imbalance", "mfu",
]


def _out(arr: np.ndarray, **inputs: Any) -> Any:
    """A scalar for scalar inputs, else the array; ValueError naming ``inputs`` if the result overflowed
    (e.g. 1e300 * 1e300) instead of returning inf."""
    check_finite_result(arr, **inputs)
    return float(arr) if arr.ndim == 0 else arr


def _arr(name: str, value: Any, **bounds: Any) -> np.ndarray:
    """A formula's input: finite numbers in the given range (the book's formulas have no use for inf)."""
    bounds.setdefault("finite", True)
    return as_float_array(name, value, **bounds)


def _times(name: str, times: Any) -> np.ndarray:
    arr = as_float_array(name, times, low=0.0, finite=True)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of times, got shape {arr.shape}")
    return arr


def serial_time(times: Any) -> float:
    """``T_serial = sum_i t_i``: one worker does every task in turn.

    >>> serial_time([2, 5, 3])
    10.0

    See also :func:`parallel_time`.
    """
    arr = _times("times", times)
    return float(_out(np.asarray(arr.sum()), times=arr.max()))


def parallel_time(times: Any) -> float:
    """``T_parallel = max_i t_i``: n tasks on n workers, all started together.

    >>> parallel_time([2, 5, 3])
    5.0

    See also :func:`serial_time`.
    """
    return float(_times("times", times).max())


def total_time(N: Any, W: Any, Os: Any) -> Any:
    """``T_total(N) = N * Os + W / N``: N tasks, each costing ``Os`` to schedule, sharing work W.

    >>> total_time(100, W=10_000, Os=1)      # at the optimum N* = 100: half overhead, half work
    200.0

    See also :func:`optimal_tasks`; :func:`hetlab.models.granularity.total_time_on` for P devices.
    """
    n = _arr("N", N, low=1.0)
    w = _arr("W", W, low=0.0)
    o = _arr("Os", Os, low=0.0)
    with np.errstate(over="ignore"):
        return _out(n * o + w / n, N=N, W=W, Os=Os)


def optimal_tasks(W: Any, Os: Any) -> Any:
    """``N* = sqrt(W / Os)``, the task count that minimises :func:`total_time` (see
    :func:`derive_optimal_tasks` for the derivation). ``Os`` must be positive.

    >>> optimal_tasks(W=400, Os=4)
    10.0
    """
    w = _arr("W", W, low=0.0)
    o = _arr("Os", Os, low=0.0, low_open=True)
    # sqrt(W) / sqrt(Os), not sqrt(W / Os): W / Os overflows for W = 1e300, Os = 1e-10.
    with np.errstate(over="ignore"):
        return _out(np.sqrt(w) / np.sqrt(o), W=W, Os=Os)


@dataclass(frozen=True)
class GranularityDerivation:
    """The steps of minimising ``T(N) = N Os + W / N`` symbolically.

    ``steps`` is a list of ``(explanation, sympy expression)``; ``latex()`` renders them
    as one aligned LaTeX block for a notebook's ``display(Math(...))``.

    >>> d = derive_optimal_tasks()
    >>> [text for text, _ in d.steps][:3]
    ['total time', 'first derivative', 'set it to zero and solve']
    >>> d.T_min
    2*sqrt(O_s)*sqrt(W)
    """

    T: Any
    dT: Any
    solutions: list
    N_star: Any
    d2T_at_star: Any
    T_min: Any
    steps: list

    def __post_init__(self) -> None:
        import sympy as sp

        for name in ("T", "dT", "N_star", "d2T_at_star", "T_min"):
            check_instance(name, getattr(self, name), sp.Basic, "a sympy expression")
        for name in ("solutions", "steps"):
            check_instance(name, getattr(self, name), list)
            if not getattr(self, name):
                raise ValueError(f"{name} must not be empty, got []")
        for sol in self.solutions:
            check_instance("solutions", sol, sp.Basic, "a list of sympy expressions")
        for step in self.steps:
            if not (isinstance(step, tuple) and len(step) == 2 and isinstance(step[0], str)
                    and isinstance(step[1], sp.Basic)):
                raise TypeError(f"steps must hold (explanation, sympy expression) pairs, got {step!r:.60}")

    def at(self, W: float, Os: float) -> dict[str, float]:
        """The symbolic results evaluated at numbers: ``{"N_star": ..., "T_min": ...}``.

        >>> derive_optimal_tasks().at(W=10_000, Os=1)
        {'N_star': 100.0, 'T_min': 200.0}
        """
        W = check_nonnegative("W", W)
        Os = check_positive("Os", Os)
        symbols = {str(sym): sym for expr in (self.N_star, self.T_min) for sym in expr.free_symbols}
        values = {symbols["W"]: W, symbols["O_s"]: Os}
        out = {"N_star": float(self.N_star.subs(values)), "T_min": float(self.T_min.subs(values))}
        check_finite_result(list(out.values()), W=W, Os=Os)
        return out

    def latex(self) -> str:
        """One ``aligned`` LaTeX block, a line per step.

        >>> derive_optimal_tasks().latex().count("&&")        # one line per step
        6
        """
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
    """``S = T_serial / T_parallel``.

    >>> speedup(10, 4)
    2.5

    See also :func:`efficiency`, :func:`amdahl`; :mod:`hetlab.metrics` for a baseline on mixed devices.
    """
    s = _arr("t_serial", t_serial, low=0.0)
    p = _arr("t_parallel", t_parallel, low=0.0, low_open=True)
    with np.errstate(over="ignore"):
        return _out(s / p, t_serial=t_serial, t_parallel=t_parallel)


def amdahl(p: Any, N: Any) -> Any:
    """Amdahl's law ``S = 1 / ((1 - p) + p / N)`` for parallel fraction ``p`` on ``N`` devices.

    >>> amdahl(0.5, 2)
    1.333...

    See also :func:`amdahl_limit`, :func:`gustafson`, :func:`karp_flatt` (its inverse: ``p = 1 - e``),
    :func:`hetlab.communication.speedup_with_allreduce` (with a communication term).
    """
    pp = _arr("p", p, low=0.0, high=1.0)
    n = _arr("N", N, low=1.0, finite=False)     # N = inf is the limit 1/(1-p), finite for p < 1
    with np.errstate(divide="ignore"):
        return _out(1.0 / ((1.0 - pp) + pp / n), p=p, N=N)


def amdahl_limit(p: Any) -> Any:
    """``lim_{N->inf} S = 1 / (1 - p)``; infinite for ``p = 1``.

    >>> amdahl_limit(0.75)
    4.0
    """
    pp = _arr("p", p, low=0.0, high=1.0)
    with np.errstate(divide="ignore"):
        return float(1.0 / (1.0 - pp)) if pp.ndim == 0 else 1.0 / (1.0 - pp)


def efficiency(S: Any, N: Any) -> Any:
    """Parallel efficiency ``E = S / N``.

    >>> efficiency(3, 4)
    0.75

    See also :func:`amdahl_efficiency`; :func:`hetlab.metrics.baseline_table` on mixed devices, where ``N`` is
    replaced by the devices' capacity.
    """
    s = _arr("S", S, low=0.0)
    n = _arr("N", N, low=1.0)
    return _out(s / n, S=S, N=N)


def amdahl_efficiency(p: Any, N: Any) -> Any:
    """Efficiency under Amdahl's law, ``E = 1 / (N (1 - p) + p)``; ``N = inf`` gives the limit
    (0 for p < 1, 1 for p = 1).

    >>> round(amdahl_efficiency(0.9, 8), 4)       # S = 4.71 on 8 devices
    0.5882
    """
    pp = _arr("p", p, low=0.0, high=1.0)
    n = _arr("N", N, low=1.0, finite=False)
    # N (1 - p) is inf * 0 = nan at N = inf, p = 1: the serial part is empty, so it is 0.
    with np.errstate(invalid="ignore", over="ignore"):
        serial = np.where(pp == 1.0, 0.0, n * (1.0 - pp))
    return _out(1.0 / (serial + pp), p=p, N=N)


def gustafson(p: Any, N: Any) -> Any:
    """Gustafson's scaled speed-up ``S = (1 - p) + p N``: the problem grows with the machine.
    Here ``p`` is measured on the N-device run; :func:`gustafson_to_amdahl_fraction` converts it.

    >>> gustafson(0.5, 8)
    4.5
    """
    pp = _arr("p", p, low=0.0, high=1.0)
    n = _arr("N", N, low=1.0)
    with np.errstate(over="ignore"):
        return _out((1.0 - pp) + pp * n, p=p, N=N)


def fraction_after_speedup(p: Any, N: Any) -> Any:
    """The parallel share of the time after only the parallel part runs ``N`` times faster:
    ``(p / N) / ((1 - p) + p / N)``.

    Two readings of one formula. On ``N`` devices it converts Amdahl's ``p`` (measured on the one-device run)
    into Gustafson's ``p`` (measured on the N-device run of the same program), so that
    ``gustafson(fraction_after_speedup(p, N), N) == amdahl(p, N)``. With ``N`` a faster accelerator's speed-up
    (the serial part stays on the host CPU), it is the new card's fraction: lower, and with it Amdahl's ceiling
    ``1 / (1 - p)`` against the new single-card run. ``N = 1`` returns ``p``.

    >>> round(fraction_after_speedup(0.9, 4), 4)         # 0.225 / (0.1 + 0.225)
    0.6923

    See also :func:`gustafson_to_amdahl_fraction`, its inverse.
    """
    pp = _arr("p", p, low=0.0, high=1.0)
    n = _arr("N", N, low=0.0, low_open=True)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = np.where(pp == 0.0, 0.0, (pp / n) / ((1.0 - pp) + pp / n))
    return _out(out, p=p, N=N)


def gustafson_to_amdahl_fraction(p: Any, N: Any) -> Any:
    """Convert Gustafson's parallel fraction ``p`` (measured on the scaled run on ``N`` devices) into
    Amdahl's fraction of the *single-device* time of the same scaled problem: ``p N / ((1 - p) + p N)``.

    With this fraction Amdahl's law on ``N`` devices gives exactly Gustafson's ``(1 - p) + p N``:
    the two laws describe the same run from two baselines.

    >>> round(gustafson_to_amdahl_fraction(0.8, 16), 4)
    0.9846

    See also :func:`fraction_after_speedup`, its inverse.
    """
    pp = _arr("p", p, low=0.0, high=1.0)
    n = _arr("N", N, low=0.0, low_open=True)
    with np.errstate(over="ignore", invalid="ignore"):
        return _out(pp * n / ((1.0 - pp) + pp * n), p=p, N=N)


def karp_flatt(S: Any, N: Any) -> Any:
    """Karp-Flatt experimentally determined serial fraction ``e = (1/S - 1/N) / (1 - 1/N)``.

    For a speed-up that follows Amdahl's law exactly, ``e = 1 - p``: so ``1 - karp_flatt(S, N)`` is the
    parallel fraction Amdahl's law needs to reach speed-up ``S`` on ``N`` devices. ``N`` must exceed 1.
    An ``e`` that grows with ``N`` points at an overhead growing with the device count, not a fixed serial part.

    >>> round(1 - karp_flatt(7.5, 8), 4)     # 8 devices, 7.5x: p must be 0.9905
    0.9905

    See also :func:`amdahl`.
    """
    s = _arr("S", S, low=0.0, low_open=True)
    n = _arr("N", N, low=1.0, low_open=True)
    with np.errstate(over="ignore", divide="ignore"):
        return _out((1.0 / s - 1.0 / n) / (1.0 - 1.0 / n), S=S, N=N)


def overhead_time(t_serial: Any, t_parallel: Any, N: Any) -> Any:
    """Total overhead of a parallel run (Grama et al., ch. 5): ``T_o = N T_N - T_1``, the device time the ``N``
    devices spend beyond the serial work ``T_1`` (idling, communicating, synchronising, extra work; negative
    when the run is superlinear, e.g. the pieces now fit in cache). Then
    ``E = T_1 / (N T_N) = 1 / (1 + T_o / T_1)``, and the Karp-Flatt fraction is ``T_o / ((N - 1) T_1)``.

    >>> overhead_time(100.0, 30.0, 4)        # 4 x 30 device-seconds for 100 of work
    20.0

    See also :func:`karp_flatt`, :func:`isoefficiency_work`.
    """
    t1 = _arr("t_serial", t_serial, low=0.0, low_open=True)
    tn = _arr("t_parallel", t_parallel, low=0.0, low_open=True)
    n = _arr("N", N, low=1.0, integer=True)
    with np.errstate(over="ignore"):
        return _out(n * tn - t1, t_serial=t_serial, t_parallel=t_parallel, N=N)


def isoefficiency_work(efficiency: Any, overhead: Any) -> Any:
    """The serial work ``W`` that holds efficiency ``E`` when the run's total overhead is ``T_o``:
    ``W = E / (1 - E) * T_o`` (from ``E = 1 / (1 + T_o / W)``; Grama, Gupta & Kumar 1993). When ``T_o`` grows
    with the device count, how fast ``W`` must grow with it is the isoefficiency function.

    >>> isoefficiency_work(0.5, 10.0)        # E = 0.5: as much useful work as overhead
    10.0

    See also :func:`overhead_time`.
    """
    e = _arr("efficiency", efficiency, low=0.0, high=1.0, low_open=True)
    if np.any(e >= 1.0):        # E = 1 needs an infinite W unless there is no overhead at all
        raise ValueError(f"efficiency must be in (0, 1), got {efficiency!r}")
    t_o = _arr("overhead", overhead, low=0.0)
    with np.errstate(over="ignore"):
        return _out(e / (1.0 - e) * t_o, efficiency=efficiency, overhead=overhead)


def pipeline_period(stage_times: Any) -> float:
    """``T_pipeline = max_i t_i``: a pipeline moves one item per period of its slowest stage.

    >>> pipeline_period([3, 5, 4, 2])
    5.0
    """
    return float(_times("stage_times", stage_times).max())


def pipeline_throughput(stage_times: Any) -> float:
    """Items per time unit in steady state, ``1 / max_i t_i``.

    >>> pipeline_throughput([3, 5, 4, 2])
    0.2
    """
    period = pipeline_period(stage_times)
    if period <= 0:
        raise ValueError(f"stage_times must include a stage that takes time, got a slowest stage of {period:g}")
    with np.errstate(over="ignore", divide="ignore"):
        return float(_out(np.asarray(1.0 / period), stage_times=period))


def imbalance(loads: Any) -> float:
    """Load imbalance ``(W_max - W_avg) / W_avg``; 0 means perfectly balanced.

    >>> imbalance([4, 2, 2, 4])
    0.333...
    """
    w = _times("loads", loads)
    top = w.max()
    mean = (w / top).mean() * top if top > 0 else 0.0     # scaled first: no overflow for loads near 1e308
    if mean == 0:
        raise ValueError("loads must not all be zero: imbalance is undefined without work, got all 0")
    return float(_out(np.asarray((w.max() - mean) / mean), loads=w.max()))


def mfu(tokens_per_s: Any, params: Any, peak_flops: Any, devices: Any = 1, flops_per_param: Any = 6.0) -> Any:
    """Model FLOPs utilisation (Chowdhery et al. 2022, PaLM, appendix B): the FLOP/s the model needs at the
    achieved rate, ``flops_per_param * params * tokens_per_s``, over the peak of all ``devices``
    (``devices * peak_flops``, FLOP/s each, in the precision the model runs in).

    ``flops_per_param`` = 6 for training (a multiply and an add per parameter and token forward, twice that
    backward) and 2 for inference. Recomputed activations are not counted (counting them gives the hardware
    FLOPs utilisation, HFU); attention's own FLOPs are left out, as in the 6N rule (they add about
    ``12 * layers * hidden * sequence`` per token).

    >>> round(mfu(2e12 / (1_720_320 * 3600), 70e9, 312e12), 3)   # Llama 2 70B: 2T tokens in 1.72M A100-hours
    0.435
    """
    rate = _arr("tokens_per_s", tokens_per_s, low=0.0)
    psi = _arr("params", params, low=0.0, low_open=True)
    peak = _arr("peak_flops", peak_flops, low=0.0, low_open=True)
    n = _arr("devices", devices, low=1.0, integer=True)
    per = _arr("flops_per_param", flops_per_param, low=0.0, low_open=True, high=100.0)
    with np.errstate(over="ignore", invalid="ignore"):
        return _out(per * psi * rate / (n * peak), tokens_per_s=tokens_per_s, params=params, peak_flops=peak_flops,
                    devices=devices)
