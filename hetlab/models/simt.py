"""Branch divergence in a SIMT warp (chapter 1): the lanes of a warp share one instruction stream.

A warp of ``width`` threads (32 on NVIDIA GPUs) issues one instruction for all its lanes. When
``taken`` lanes follow the ``if`` side of a branch (``if_time`` each) and the rest the ``else`` side
(``else_time`` each), the hardware runs the two sides one after the other, masking the lanes that
did not take the side being run (Lindholm et al. 2008). The warp therefore needs

    T_warp = if_time + else_time            (when both sides have at least one lane)

and the fraction of lane-time doing useful work is

    U = (taken * if_time + (width - taken) * else_time) / (width * T_warp).

Model limits: one level of branching, no reconvergence tricks (independent thread scheduling of
Volta and later still serialises the two sides within a warp), every lane's side costs the same.

>>> round(warp_divergence(8, 1.0, 1.0).utilisation, 2)
0.5
>>> warp_divergence(32, 1.0, 3.0).time      # every lane takes the if side: no divergence
1.0
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from hetlab._validate import check_int, check_nonnegative

__all__ = ["WarpDivergence", "warp_divergence"]


@dataclass(frozen=True)
class WarpDivergence:
    """The cost of one branch in one warp: ``time`` (warp busy time) and ``utilisation`` (useful lane-time share)."""

    taken: int
    width: int
    if_time: float
    else_time: float
    time: float
    utilisation: float

    def __post_init__(self) -> None:
        width = check_int("width", self.width, low=1, high=1024)
        taken = check_int("taken", self.taken, low=0, high=width)
        if_time = check_nonnegative("if_time", self.if_time)
        else_time = check_nonnegative("else_time", self.else_time)
        time, utilisation = _cost(taken, width, if_time, else_time)
        for name, expected in (("time", time), ("utilisation", utilisation)):
            value = check_nonnegative(name, getattr(self, name))
            if not math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError(f"{name} must equal the model's value {expected:g} for taken={taken}, "
                                 f"width={width}, if_time={if_time:g}, else_time={else_time:g}; got {value:g}")

    @property
    def idle_share(self) -> float:
        """Share of lane-time spent masked off (``1 - utilisation``)."""
        return 1.0 - self.utilisation


def warp_divergence(taken: int, if_time: float, else_time: float, *, width: int = 32) -> WarpDivergence:
    """Time and lane utilisation of a warp whose ``taken`` of ``width`` lanes take the ``if`` side.

    ``taken`` must be in ``[0, width]``; times are non-negative (same unit for both). A side no lane
    takes is skipped, so ``taken = 0`` or ``taken = width`` costs one side only (utilisation 1).
    """
    width = check_int("width", width, low=1, high=1024)
    taken = check_int("taken", taken, low=0, high=width)
    if_time = check_nonnegative("if_time", if_time)
    else_time = check_nonnegative("else_time", else_time)
    return WarpDivergence(taken, width, if_time, else_time, *_cost(taken, width, if_time, else_time))


def _cost(taken: int, width: int, if_time: float, else_time: float) -> tuple[float, float]:
    """``(T_warp, U)`` for validated inputs: a side no lane takes is skipped."""
    time = (if_time if taken > 0 else 0.0) + (else_time if taken < width else 0.0)
    useful = taken * if_time + (width - taken) * else_time
    return time, (useful / (width * time) if time > 0 else 1.0)
