"""Chapter 7 (metrics): efficiency and load imbalance."""
from __future__ import annotations

import numpy as np

from .. import formulas as F
from .. import plotting as P
from .. import schedulers as S
from ..devices import identical
from ..widgets import Explorer, dropdown, int_slider, slider
from ..workloads import skewed_tasks

__all__ = ['efficiency', 'imbalance']


def efficiency() -> Explorer:
    """Efficiency E = S/N = 1/(N(1-p)+p) against N, with the chosen point marked."""
    def draw(ax, p: float, N: int) -> str:
        n = np.unique(np.round(np.geomspace(1, 4096, 160)))
        e = F.amdahl_efficiency(p, N)
        ax.plot(n, F.amdahl_efficiency(p, n))
        ax.plot([N], [e], "o", color="crimson")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel(P.label("设备数 N", "devices N"))
        ax.set_ylabel(P.label("效率 E", "efficiency E"))
        ax.set_title(P.label(f"p = {p:.2f} 时的并行效率", f"efficiency at p = {p:.2f}"))
        return f"S = {F.amdahl(p, N):.3f}, E = S/N = {e:.4f}"

    return Explorer(draw, {"p": slider("p", 0.0, 1.0, 0.01, 0.9), "N": int_slider("N", 1, 4096, 16)},
                    figsize=(7, 3.2))


def imbalance() -> Explorer:
    """Per-device loads of a policy, with W_max, W_avg and the imbalance."""
    def draw(ax, policy: str, tasks: int, spread: float) -> str:
        graph = skewed_tasks(tasks, spread=spread, seed=3)
        devices = identical(4, speed=10.0)
        s = S.POLICIES[policy](graph, devices).validate()
        ax.bar([d.name for d in devices], s.busy, color="#4C72B0")
        ax.axhline(s.busy.mean(), color="black", ls="--", lw=1, label="W_avg")
        ax.axhline(s.busy.max(), color="crimson", ls=":", lw=1, label="W_max")
        ax.set_ylabel(P.label("忙碌时间", "busy time"))
        ax.legend(fontsize=8)
        ax.set_title(P.label(f"{policy}：不均衡度 {s.imbalance:.3f}", f"{policy}: imbalance {s.imbalance:.3f}"))
        return f"W_max = {s.busy.max():.2f}, W_avg = {s.busy.mean():.2f}, imbalance = {s.imbalance:.3f}"

    return Explorer(draw, {"policy": dropdown("policy", ["block", "round-robin", "earliest free", "LPT"]),
                           "tasks": int_slider("tasks", 4, 64, 16),
                           "spread": slider("spread", 0.0, 1.5, 0.1, 0.8)}, figsize=(6, 3))


#: (chapter, factory) for each widget of this module.
VIEWS = [(7, efficiency), (7, imbalance)]
