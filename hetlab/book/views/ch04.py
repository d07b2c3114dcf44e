"""Chapter 4 (granularity): the U-curve, and the same model on P devices (ideal spread and ceil(N/P) rounds)."""
from __future__ import annotations

import numpy as np

from hetlab import formulas as F
from hetlab import plotting as P
from hetlab.models import granularity as G
from hetlab.widgets import Explorer, int_slider, slider

__all__ = ['granularity_explorer']


def granularity_explorer() -> Explorer:
    """The U-curve T(N) = N Os + W/N, the P-device curve N Os + W/min(N, P) and the rounds curve
    N Os + ceil(N/P) W/N (integer N); sliders for W, Os and P.

    Drawn once, then updated in place (the heaviest redraw of the book otherwise)."""
    art: dict = {}

    def draw(ax, W: float, Os: float, P_devices: int) -> str:
        n_star = F.optimal_tasks(W, Os)
        n = np.geomspace(1, max(10.0, 4 * n_star), 300)
        whole = np.unique(np.round(np.geomspace(1, n[-1], 400)))
        t_star = F.total_time(max(n_star, 1.0), W, Os)
        k = G.optimal_task_count(W, Os, P_devices)
        t_k = G.total_time_on(k, W, Os, P_devices)
        if not art:
            P.granularity_curve(W, Os, ax)
            art["total"], art["overhead"], art["work"], art["point"] = ax.lines[:4]
            art["note"] = ax.texts[-1]
            art["devices"], = ax.plot([], [], color="tab:purple", lw=1.8, ls=(0, (5, 2)),
                                      label=P.label("P 台设备、完美摊开：N·Os + W/min(N, P)",
                                                    "P devices, ideal: N·Os + W/min(N, P)"))
            art["rounds"], = ax.plot([], [], color="tab:green", lw=1.2,
                                     label=P.label(r"P 台设备、按轮执行：$N O_s + \lceil N/P \rceil\, W/N$",
                                                   r"P devices, rounds: $N O_s + \lceil N/P \rceil\, W/N$"))
            art["best"], = ax.plot([], [], "s", color="tab:purple", zorder=3,
                                   label=P.label("P 台设备时的最优整数 N", "best integer N on P devices"))
            ax.set_ylabel(P.label("时间（与 W 同单位）", "time (same unit as W)"))
            ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
        art["total"].set_data(n, F.total_time(n, W, Os))
        art["overhead"].set_data(n, n * Os)
        art["work"].set_data(n, W / n)
        art["devices"].set_data(n, G.total_time_on(n, W, Os, P_devices))
        art["rounds"].set_data(whole, G.total_time_on(whole, W, Os, P_devices, model="rounds"))
        art["point"].set_data([max(n_star, 1.0)], [t_star])
        art["best"].set_data([k], [t_k])
        art["note"].xy = (max(n_star, 1.0), t_star)
        art["note"].set_text(f"N* = {n_star:.1f}\nT = {t_star:.1f}")
        ax.set_xlim(1, n[-1])
        right = whole >= min(max(n_star, 1.0), P_devices)          # keep the P-device curves on screen
        tail = float(np.max(G.total_time_on(whole[right], W, Os, P_devices, model="rounds")))
        ax.set_ylim(0, min(float(F.total_time(1, W, Os)), max(4 * t_star, 1.5 * t_k, tail)) * 1.05)
        ax.set_title(P.label(f"粒度 U 形曲线：W = {W:g}, Os = {Os:g}, P = {P_devices}",
                             f"Granularity U-curve: W = {W:g}, Os = {Os:g}, P = {P_devices}"))
        m = 3 * P_devices // 2
        return (f"设备无限多：N* = sqrt(W/Os) = {n_star:.2f}，T(N*) = {t_star:.2f}；"
                f"只有 P = {P_devices} 台设备：最优整数任务数 {k}，T = {t_k:.2f}；"
                f"按轮执行时 N = {m} 的 T = {G.total_time_on(m, W, Os, P_devices, model='rounds'):.1f}，"
                f"N = {2 * P_devices} 的 T = {G.total_time_on(2 * P_devices, W, Os, P_devices, model='rounds'):.1f}")

    return Explorer(draw, {"W": slider("总工作量 W", 100.0, 100000.0, 100.0, 10000.0, fmt=".0f"),
                           "Os": slider("调度开销 Os", 0.1, 10.0, 0.1, 1.0, fmt=".1f"),
                           "P_devices": int_slider("设备数 P", 1, 256, 32)}, figsize=(9, 4.8), clear=False)


#: (chapter, factory) for each widget of this module.
VIEWS = [(4, granularity_explorer)]
