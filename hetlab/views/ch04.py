"""Chapter 4 (granularity): the U-curve."""
from __future__ import annotations

import numpy as np

from .. import formulas as F
from .. import plotting as P
from ..widgets import Explorer, slider

__all__ = ['granularity']


def granularity() -> Explorer:
    """The U-curve T(N) = N Os + W/N; sliders for W and Os move the curve and N*.

    Drawn once, then updated in place (the heaviest redraw of the book otherwise)."""
    art: dict = {}

    def draw(ax, W: float, Os: float) -> str:
        n_star = F.optimal_tasks(W, Os)
        n = np.geomspace(1, max(10.0, 4 * n_star), 300)
        t_star = F.total_time(max(n_star, 1.0), W, Os)
        if not art:
            P.granularity_curve(W, Os, ax)
            art["total"], art["overhead"], art["work"], art["point"] = ax.lines[:4]
            art["note"] = ax.texts[-1]
        art["total"].set_data(n, F.total_time(n, W, Os))
        art["overhead"].set_data(n, n * Os)
        art["work"].set_data(n, W / n)
        art["point"].set_data([max(n_star, 1.0)], [t_star])
        art["note"].xy = (max(n_star, 1.0), t_star)
        art["note"].set_text(f"N* = {n_star:.1f}\nT = {t_star:.1f}")
        ax.set_xlim(1, n[-1])
        ax.set_ylim(0, min(float(F.total_time(1, W, Os)), 4 * t_star) * 1.05)
        ax.set_title(P.label(f"粒度 U 形曲线：W = {W:g}, Os = {Os:g}", f"Granularity U-curve: W = {W:g}, Os = {Os:g}"))
        return f"N* = sqrt(W/Os) = {n_star:.2f}, T(N*) = {F.total_time(max(n_star, 1.0), W, Os):.2f}"

    return Explorer(draw, {"W": slider("W", 100.0, 100000.0, 100.0, 10000.0, fmt=".0f"),
                           "Os": slider("Os", 0.1, 10.0, 0.1, 1.0, fmt=".1f")}, figsize=(7, 3.6), clear=False)


#: (chapter, factory) for each widget of this module.
VIEWS = [(4, granularity)]
