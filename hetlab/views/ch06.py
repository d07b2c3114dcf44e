"""Chapter 6 (sync and communication): Amdahl's law."""
from __future__ import annotations

import numpy as np

from .. import formulas as F
from .. import plotting as P
from ..widgets import Explorer, int_slider, slider

__all__ = ['amdahl']


def amdahl() -> Explorer:
    """Amdahl's law with p and N sliders, the ceiling 1/(1-p) and the chosen point marked."""
    def draw(ax, p: float, N: int) -> str:
        n = np.unique(np.round(np.geomspace(1, 4096, 160)))
        s = F.amdahl(p, N)
        ax.plot(n, F.amdahl(p, n), label=f"p = {p:.2f}")
        ax.plot(n, n, color="0.6", ls="--", lw=0.8, label=P.label("线性", "linear"))
        if p < 1:
            ax.axhline(F.amdahl_limit(p), color="crimson", ls=":", label=f"1/(1-p) = {F.amdahl_limit(p):.1f}")
        ax.plot([N], [s], "o", color="crimson")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_ylim(1, 4096)
        ax.set_xlabel(P.label("设备数 N", "devices N"))
        ax.set_ylabel(P.label("加速比 S", "speed-up S"))
        ax.legend(fontsize=8, loc="upper left")
        ax.set_title(P.label("Amdahl 定律", "Amdahl's law"))
        return f"S = 1/((1-p) + p/N) = {s:.3f}; ceiling 1/(1-p) = {F.amdahl_limit(p):.3f}"

    return Explorer(draw, {"p": slider("p", 0.0, 1.0, 0.01, 0.95), "N": int_slider("N", 1, 4096, 1024)},
                    figsize=(7, 3.6))


#: (chapter, factory) for each widget of this module.
VIEWS = [(6, amdahl), (13, amdahl)]
