"""Chapter 12 (misconceptions): the cost of offloading."""
from __future__ import annotations

import numpy as np

from .. import formulas as F
from .. import plotting as P
from ..widgets import Explorer, slider

__all__ = ['transfer_cost']


def transfer_cost() -> Explorer:
    """CPU vs GPU for one matrix multiply of size n, counting the PCIe copies both ways."""
    def draw(ax, log2_n: float) -> str:
        sizes = 2.0 ** np.arange(4, 14.01, 0.25)
        n = 2.0 ** log2_n
        cpu, gpu, copy = F.matmul_offload_ms(sizes)
        ax.plot(sizes, cpu, label="CPU")
        ax.plot(sizes, gpu, label=P.label("GPU（含拷贝）", "GPU incl. copies"))
        ax.plot(sizes, copy, ls=":", label=P.label("拷贝", "copies"))
        ax.axvline(n, color="crimson", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(P.label("矩阵边长 n", "matrix size n"))
        ax.set_ylabel(P.label("时间（毫秒）", "time (ms)"))
        ax.legend(fontsize=8)
        c, g, k = F.matmul_offload_ms(n)
        winner = "GPU" if g < c else "CPU"
        return f"n = {n:.0f}: CPU {c:.4f} ms, GPU {g:.4f} ms (of which copies {k:.4f} ms): {winner} wins"

    return Explorer(draw, {"log2_n": slider("log2 n", 4.0, 13.0, 0.25, 6.0)}, figsize=(7, 3.2))


#: (chapter, factory) for each widget of this module.
VIEWS = [(12, transfer_cost)]
