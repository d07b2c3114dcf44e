"""Chapter 3 (hardware): peak compute."""
from __future__ import annotations

from .. import formulas as F
from .. import plotting as P
from ..widgets import Explorer, int_slider, slider

__all__ = ['peak_compute']


def peak_compute() -> Explorer:
    """P = N_cores x f x IPC for a CPU-like and a GPU-like chip, on a log axis (bars updated in place)."""
    art: dict = {}

    def draw(ax, cores: int, ghz: float, ipc: float) -> str:
        mine = F.peak_compute(cores, ghz * 1e9, ipc)
        if not art:
            names = ["EPYC 7742 (FP64)", "A100 (FP32)", P.label("你的芯片", "yours")]
            values = [F.peak_compute(64, 2.25e9, 16), F.peak_compute(6912, 1.41e9, 2), mine]
            art["bars"] = ax.barh(names, values, color=["#4C72B0", "#55A868", "#C44E52"])
            ax.set_xscale("log")
            ax.set_xlim(1e9, 1e15)
            ax.set_xlabel(P.label("峰值（次/秒，对数轴）", "peak ops/s (log)"))
            ax.set_title("P = N_cores × f × IPC")
        art["bars"][2].set_width(mine)
        return f"P = {cores} x {ghz:g} GHz x {ipc:g} = {mine:.3g} ops/s"

    return Explorer(draw, {"cores": int_slider("cores", 1, 8192, 64), "ghz": slider("GHz", 0.5, 5.0, 0.05, 2.25),
                           "ipc": slider("IPC", 0.5, 32.0, 0.5, 16.0, fmt=".1f")}, figsize=(7, 2.6), clear=False)


#: (chapter, factory) for each widget of this module.
VIEWS = [(3, peak_compute)]
