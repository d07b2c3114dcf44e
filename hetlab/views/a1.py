"""Appendix A1 (real execution): equal tasks on a pool of P workers run in ceil(N / P) rounds."""
from __future__ import annotations

import math

import numpy as np

from .. import granularity as G
from .. import plotting as P
from ..widgets import Explorer, int_slider, slider

__all__ = ["pool_rounds"]


def pool_rounds() -> Explorer:
    """T(N) of 0.4 s of work in N equal tasks on P workers: the book's N Os + W/N, the P-device
    form N Os + W/min(N, P), and the rounds form N Os + ceil(N/P) W/N, with every optimum marked."""
    W = 0.4
    counts = np.arange(1, 65)
    art: dict = {}

    def draw(ax, workers: int, overhead_us: float) -> str:
        Os = overhead_us * 1e-6
        book = counts * Os + W / counts
        ideal = G.total_time_on(counts, W, Os, workers)
        rounds = G.total_time_on(counts, W, Os, workers, model="rounds")
        best = int(counts[np.argmin(rounds)])
        n_star = math.sqrt(W / Os)
        if not art:
            art["book"], = ax.plot(counts, book, ":", color="0.5", label=P.label("N·Os + W/N（设备无限）",
                                                                                  "N Os + W/N (unlimited)"))
            art["ideal"], = ax.plot(counts, ideal, "--", color="#4C72B0", label=P.label("N·Os + W/min(N,P)",
                                                                                         "N Os + W/min(N,P)"))
            art["rounds"], = ax.step(counts, rounds, where="mid", color="#C44E52",
                                     label=P.label(r"N·Os + $\lceil N/P \rceil$·W/N（按轮执行）",
                                                   r"N Os + $\lceil N/P \rceil$ W/N (rounds)"))
            art["best"], = ax.plot([best], [rounds[best - 1]], "o", color="#C44E52")
            ax.set_xlabel(P.label("任务数 N", "tasks N"))
            ax.set_ylabel(P.label("总耗时（秒）", "total time (s)"))
            ax.legend(fontsize=8, loc="upper right")
        art["book"].set_ydata(book)
        art["ideal"].set_ydata(ideal)
        art["rounds"].set_data(counts, rounds)
        art["best"].set_data([best], [rounds[best - 1]])
        ax.set_ylim(0, 1.05 * float(min(book.max(), rounds.max(), 0.45)))
        return (f"P = {workers}，Os = {overhead_us:g} µs：按轮执行时 N = {best} 最快（{rounds[best - 1]:.4f} 秒）；"
                f"设备无限时的 √(W/Os) = {n_star:.1f}")

    return Explorer(draw, {"workers": int_slider("工作者数 P", 1, 16, 2),
                           "overhead_us": slider("派发开销 Os（µs）", 10.0, 2000.0, 10.0, 300.0, fmt=".0f")},
                    figsize=(7, 3.2), clear=False)


#: (chapter, factory) for each widget of this module (the appendix is chapter 14 in the question bank).
VIEWS = [(14, pool_rounds)]
