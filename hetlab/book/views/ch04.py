"""Chapter 4 (granularity): the U-curve, and the same model on P devices (ideal spread and ceil(N/P) rounds),
as a widget and its static twin; the stored H200 machine's one-GPU granularity curve beside the in-order
model; the reader's measured U-curve beside the prediction and the stored reading."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hetlab import formulas as F
from hetlab import plotting as P
from hetlab._validate import check_int, check_positive, check_sequence
from hetlab.models import granularity as G
from hetlab.widgets import Explorer, int_slider, slider

__all__ = ['granularity_explorer', 'granularity_figure', 'h200_grain', 'h200_grain_figure', 'u_sweep_figure']

#: Colours of the measured figures: the reader's machine, the stored H200 machine, the model.
_YOURS, _STORED, _MODEL = "#DD8452", "0.55", "black"


def _draw_u(art: dict, ax, W: float, Os: float, P_devices: int) -> str:
    """Draw (first call, into an empty ``art``) or update in place the U-curve picture at (W, Os, P); return
    the readout. Shared by the widget and its static twin."""
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
        art["note"].set_bbox(dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85))  # over lines
        # the shared curve labels write "N·Os"; the chapter writes O_s, so relabel in mathtext
        for line, (zh, en) in zip(ax.lines[:3], [(r"总耗时 $T(N)$", r"total $T(N)$"),
                                                  (r"调度开销 $N O_s$", r"overhead $N O_s$"),
                                                  (r"均摊执行 $W/N$", r"work $W/N$")]):
            line.set_label(P.label(zh, en))
        art["devices"], = ax.plot([], [], color="tab:purple", lw=1.8, ls=(0, (5, 2)),
                                  label=P.label(r"P 台设备、完美摊开：$N O_s + W/\min(N, P)$",
                                                r"P devices, ideal: $N O_s + W/\min(N, P)$"))
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
    ax.set_title(P.label(f"粒度 U 形曲线：$W$ = {W:g}, $O_s$ = {Os:g}, $P$ = {P_devices}",
                         f"Granularity U-curve: $W$ = {W:g}, $O_s$ = {Os:g}, $P$ = {P_devices}"))
    m = 3 * P_devices // 2
    return (f"设备无限多：N* = √(W/Oₛ) = {n_star:.2f}，T(N*) = {t_star:.2f}；"
            f"只有 P = {P_devices} 台设备：最优整数任务数 {k}，T = {t_k:.2f}；"
            f"按轮执行时 N = {m} 的 T = {G.total_time_on(m, W, Os, P_devices, model='rounds'):.1f}，"
            f"N = {2 * P_devices} 的 T = {G.total_time_on(2 * P_devices, W, Os, P_devices, model='rounds'):.1f}")


def granularity_explorer() -> Explorer:
    """The U-curve T(N) = N Os + W/N, the P-device curve N Os + W/min(N, P) and the rounds curve
    N Os + ceil(N/P) W/N (integer N); sliders for W, Os and P.

    Drawn once, then updated in place (the heaviest redraw of the book otherwise)."""
    art: dict = {}

    def draw(ax, W: float, Os: float, P_devices: int) -> str:
        return _draw_u(art, ax, W, Os, P_devices)

    return Explorer(draw, {"W": slider("总工作量 W", 100.0, 100000.0, 100.0, 10000.0, fmt=".0f"),
                           "Os": slider("调度开销 Oₛ", 0.1, 10.0, 0.1, 1.0, fmt=".1f"),
                           "P_devices": int_slider("设备数 P", 1, 256, 8)}, figsize=(9, 4.8), clear=False)


#: (chapter, factory) for each widget of this module.
VIEWS = [(4, granularity_explorer)]


def granularity_figure(W: float = 10_000.0, Os: float = 1.0, P_devices: int = 8):
    """The widget's picture at (W, Os, P) as a static figure (for the website and the PDF): the U-curve, its
    two terms, N*, the P-device curve, the rounds curve and the best integer N on P devices. Checks its
    inputs as the widget's sliders would (W in [100, 1e5], Os in [0.1, 10], P in [1, 256]). Returns the Axes."""
    W = check_positive("W", W, high=1e5)
    Os = check_positive("Os", Os, high=10.0)
    P_devices = check_int("P_devices", P_devices, low=1, high=256)
    ax = P.new_axes(figsize=(9, 4.8))
    _draw_u({}, ax, W, Os, P_devices)
    return ax


def h200_grain() -> dict:
    """The stored H200 machine's one-GPU granularity reading (2026-12-04): ``counts`` and measured ``seconds``
    of one fused update of 2^26 floats split into N pieces, the ``launch`` cost of one asynchronous kernel
    launch, ``kernels`` per piece, and the in-order model's inputs: ``Os`` (the kernels of one piece times the
    launch cost) and ``W`` (the unsplit update's time less one piece's issue).

    >>> g = h200_grain()
    >>> g["counts"][0], g["kernels"], round(g["Os"] * 1e6, 1)
    (1, 2, 15.4)
    """
    from hetlab.real.readings import reading

    data = reading("h200")
    rows = data["grain"]["rows"]
    kernels = int(data["grain"]["kernels_per_piece"])
    launch = data["launch"]["per_launch_async_us"] * 1e-6
    counts = [int(r["N"]) for r in rows]
    seconds = [float(r["seconds"]) for r in rows]
    Os = kernels * launch
    return {"counts": counts, "seconds": seconds, "launch": launch, "kernels": kernels, "Os": Os,
            "W": seconds[0] - Os, "elements": int(data["grain"]["elements"])}


def h200_grain_figure():
    """The stored H200 reading of :func:`h200_grain` (points) beside the in-order model
    :func:`hetlab.models.granularity.in_order_time` predicted from the launch cost (line) and the U-model
    ``N Os + W / N`` misapplied to one GPU (dashed); log-log axes, time in ms. Returns the Axes."""
    g = h200_grain()
    ax = P.new_axes(figsize=(7.5, 3.8))
    n = np.unique(np.round(np.geomspace(1, max(g["counts"]), 200)))
    ax.plot(n, G.in_order_time(n, g["W"], g["Os"]) * 1e3, color=_MODEL, lw=1.8,
            label=P.label(r"模型：一块 GPU 依次执行，$O_s + W/N + (N-1)\max(O_s, W/N)$",
                          r"model: one GPU in order, $O_s + W/N + (N-1)\max(O_s, W/N)$"))
    ax.plot(n, F.total_time(n, g["W"], g["Os"]) * 1e3, color=_MODEL, lw=1, ls="--",
            label=P.label(r"误用 U 形模型：$N O_s + W/N$（假设 N 台设备）",
                          r"U-model misapplied: $N O_s + W/N$"))
    ax.plot(g["counts"], np.array(g["seconds"]) * 1e3, "o", color="#4C72B0", mec="black", ms=7, zorder=3,
            label=P.label("H200 实测（2026-12-04）", "H200, measured (2026-12-04)"))
    t = dict(zip(g["counts"], g["seconds"]))
    slope = (t[16384] - t[64]) / (16384 - 64)     # the linear part the chapter reads: N = 64 .. 16384
    ax.annotate(P.label(f"实测斜率 {slope * 1e6:.1f} µs/份\n（按启动读数，两次 {g['Os'] * 1e6:.1f} µs）",
                        f"measured slope {slope * 1e6:.1f} us/piece\n(launch reading x 2: {g['Os'] * 1e6:.1f} us)"),
                (1024, t[1024] * 1e3), xytext=(1500, 2), fontsize=8, arrowprops=dict(arrowstyle="->", lw=0.8))
    _plain_log_axes(ax, [1, 16, 256, 4096, 65536], [0.1, 1, 10, 100, 1000])
    ax.set_xlabel(P.label("切成的份数 N（对数轴）", "pieces N (log axis)"))
    ax.set_ylabel(P.label("总时间（ms，对数轴）", "total time (ms, log axis)"))
    ax.set_title(P.label(r"一块 H200 上把一次融合更新切成 N 份（$2^{26}$ 个 FP32 数）",
                         r"One fused update of $2^{26}$ floats in N pieces on one H200"), fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return ax


def u_sweep_figure(counts: Sequence[int], seconds: Sequence[float], W: float, round_trip: float, *,
                   reference=None):
    """The reader's measured U-curve (:func:`hetlab.real.experiments.u_curve_sweep`: ``counts``, ``seconds``
    of ``W`` seconds of waiting) beside the prediction ``N Os + W / N`` with ``Os = round_trip`` (written before
    the run) and, if given, a stored :class:`~hetlab.book.reference.Reference` with ``u_sweep`` (grey, with its
    own prediction dotted). Log N axis, time in ms. Returns the Axes."""
    counts = [check_int("counts", n, low=1, high=4096) for n in check_sequence("counts", counts)]
    seconds = [check_positive("seconds", t, high=60.0) for t in check_sequence("seconds", seconds)]
    if len(counts) != len(seconds):
        raise ValueError(f"counts and seconds must have the same length, got {len(counts)} and {len(seconds)}")
    W = check_positive("W", W, high=60.0)
    round_trip = check_positive("round_trip", round_trip, high=1.0)
    ax = P.new_axes(figsize=(7.5, 3.8))
    n = np.unique(np.round(np.geomspace(1, max(counts), 200)))
    if reference is not None and reference.u_sweep is not None:
        ref = reference.u_sweep
        ax.plot(n, F.total_time(n, ref.total, reference.u_round_trip) * 1e3, color=_STORED, lw=1, ls=":")
        ax.plot(ref.counts, np.array(ref.seconds) * 1e3, "s", color=_STORED, ms=5,
                label=P.label("参照：H200 机器的 16 核 CPU（实测）", "stored: the H200 machine's CPU"))
    ax.plot(n, F.total_time(n, W, round_trip) * 1e3, color=_MODEL, lw=1.6,
            label=P.label(r"运行前的预测：$N O_s + W/N$", r"predicted before the run: $N O_s + W/N$"))
    ax.plot(counts, np.array(seconds) * 1e3, "o", color=_YOURS, mec="black", ms=7, zorder=3,
            label=P.label("你的机器（实测）", "your machine (measured)"))
    best = int(np.argmin(seconds))
    ax.annotate(P.label(f"最快 N = {counts[best]}", f"fastest N = {counts[best]}"),
                (counts[best], seconds[best] * 1e3), textcoords="offset points", xytext=(0, -16),
                ha="center", fontsize=8, color=_YOURS, zorder=4,   # under the lowest point, boxed over the lines
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85))
    _plain_log_axes(ax, [1, 4, 16, 64, 256], [1, 2, 5, 10, 20, 50, 100])
    low, high = ax.get_ylim()
    ax.set_ylim(low / 1.4, high)
    ax.set_xlabel(P.label("任务数 N（对数轴）", "tasks N (log axis)"))
    ax.set_ylabel(P.label("总时间（ms，对数轴）", "total time (ms, log axis)"))
    ax.set_title(P.label(f"{W * 1e3:g} ms 的等待切成 N 份，每份一个线程", f"{W * 1e3:g} ms of waiting in N tasks"),
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper center")
    return ax


def _plain_log_axes(ax, xticks, yticks) -> None:
    """Log-log axes with plain numbers at the given ticks (``2^4`` and ``4 x 10^1`` read badly)."""
    from matplotlib.ticker import NullFormatter

    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(xticks, [f"{x:g}" for x in xticks])
    ax.set_yticks(yticks, [f"{y:g}" for y in yticks])
    ax.yaxis.set_minor_formatter(NullFormatter())
