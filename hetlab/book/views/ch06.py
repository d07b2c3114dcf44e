"""Chapter 6 (sync and communication): Amdahl's law, waiting at a barrier, queueing for a lock."""
from __future__ import annotations

import numpy as np

from hetlab import communication as C
from hetlab import formulas as F
from hetlab import plotting as P
from hetlab.models import sync
from hetlab.widgets import Explorer, dropdown, int_slider, slider

__all__ = ['amdahl_explorer', 'barrier_explorer', 'lock_explorer', 'comm_peak_explorer', 'comm_peak_figure',
           'decimal_log_ticks']

#: Chapter 6's data-parallel step: 64 s on one device, 1 GB of gradients over 10 GB/s links.
STEP = {"compute_time": 64.0, "grad_bytes": 1e9, "bandwidth": 10e9}

POWERS = [2 ** k for k in range(13)]     # 1, 2, 4, ..., 4096


def decimal_log_ticks(ax, *, x: bool = True, y: bool = True, top: int = 4096):
    """Label log-2 axes 1, 4, 16, ..., ``top`` in plain decimal instead of 2^k."""
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter
    ticks = [4 ** k for k in range(8) if 4 ** k <= top]
    for on, axis in ((x, ax.xaxis), (y, ax.yaxis)):
        if on:
            axis.set_major_locator(FixedLocator(ticks))
            axis.set_major_formatter(ScalarFormatter())
            axis.set_minor_locator(NullLocator())
    return ax


def amdahl_explorer() -> Explorer:
    """Amdahl's law with p and N sliders, the ceiling 1/(1-p) and the chosen point marked."""
    def draw(ax, p: float, N: int) -> str:
        n = np.unique(np.round(np.geomspace(1, 4096, 160)))
        s = F.amdahl(p, N)
        ax.plot(n, F.amdahl(p, n), label=f"p = {p:.2f}")
        ax.plot(n, n, color="0.6", ls="--", lw=0.8, label=P.label("线性加速（虚线）", "linear (dashed)"))
        if p < 1:
            ax.axhline(F.amdahl_limit(p), color="crimson", ls=":",
                       label=P.label(f"上限 1/(1-p) = {F.amdahl_limit(p):.1f}（点线）",
                                     f"ceiling 1/(1-p) = {F.amdahl_limit(p):.1f} (dotted)"))
        ax.plot([N], [s], "o", color="crimson")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_ylim(1, 4096)
        ax.set_xlabel(P.label("设备数 N", "devices N"))
        ax.set_ylabel(P.label("加速比 S", "speed-up S"))
        decimal_log_ticks(ax)
        ax.legend(fontsize=8, loc="upper left")
        ax.set_title(P.label("Amdahl 定律", "Amdahl's law"))
        ceiling = f"{F.amdahl_limit(p):.3f}" if p < 1 else "无上限"
        return f"S = 1/((1-p) + p/N) = {s:.3f}；设备无限多时的上限 1/(1-p) = {ceiling}"

    return Explorer(draw, {"p": slider("可并行比例 p", 0.0, 1.0, 0.01, 0.95),
                           "N": dropdown("设备数 N", [(str(n), n) for n in POWERS], 1024)}, figsize=(7, 3.6))


def barrier_explorer() -> Explorer:
    """One barrier phase: each worker's compute time and its wait (max - own) stacked on top."""
    def draw(ax, workers: int, noise: float, seed: int) -> str:
        run = sync.barrier_run(workers, 20, noise=noise, seed=seed)
        k = 0
        x = np.arange(workers)
        ax.bar(x, run.times[k], color="#4C72B0", label=P.label("计算", "compute"))
        ax.bar(x, run.waits[k], bottom=run.times[k], color="#DD8452", hatch="//",
               label=P.label("在屏障处等待 = max − 自己", "wait at barrier = max − own"))
        ax.axhline(run.phase_times[k], color="black", lw=1, ls="--")
        ax.set_xticks(x, [str(i) for i in x])
        ax.set_xlabel(P.label("设备编号", "device"))
        ax.set_ylabel(P.label("时间（时间单位）", "time (time units)"))
        ax.set_ylim(0, max(2.5, run.phase_times[k] * 1.45))     # head-room: the legend sits above the bars
        ax.legend(fontsize=8, loc="upper left", ncol=2)
        ax.set_title(P.label(f"示例：第 1 个阶段（共 20 个），最慢者用时 {run.phase_times[k]:.2f}",
                             f"example: phase 1 of 20, slowest takes {run.phase_times[k]:.2f}"))
        return (f"20 个阶段共用时 {run.total:.2f}（若不需要屏障 {run.total_without_barriers:.2f}）；"
                f"全部设备时间中 {run.idle_fraction:.1%} 花在等待上；"
                f"公式预测（长期平均）{sync.predicted_idle_fraction(workers, noise):.1%}")

    return Explorer(draw, {"workers": int_slider("设备数", 2, 32, 8),
                           "noise": slider("耗时波动 σ", 0.0, 1.0, 0.05, 0.3),
                           "seed": int_slider("随机种子", 0, 9, 0)}, figsize=(7, 3.2))


def lock_explorer() -> Explorer:
    """Speed-up of workers sharing one lock against the worker count, with the ceiling (c + h) / h."""
    art: dict = {}
    n = np.arange(1, 33)

    def draw(ax, critical_share: float, noise: float) -> str:
        h = critical_share
        s = sync.lock_speedups(32, iterations=30, compute=1.0 - h, critical=h, noise=noise)
        ceiling = 1.0 / h
        if not art:
            art["curve"], = ax.plot(n, s, "o-", ms=3, label=P.label("模拟加速比", "simulated speed-up"))
            art["linear"], = ax.plot(n, n, color="0.6", ls="--", lw=0.8, label=P.label("线性加速", "linear"))
            art["ceiling"] = ax.axhline(ceiling, color="crimson", ls=":",
                                        label=P.label("锁的上限 (c+h)/h", "lock ceiling (c+h)/h"))
            ax.set_xlim(1, 32)
            ax.set_ylim(0, 33)
            ax.set_xlabel(P.label("设备数 N", "devices N"))
            ax.set_ylabel(P.label("加速比", "speed-up"))
            ax.legend(fontsize=8, loc="upper left")
        art["curve"].set_ydata(s)
        art["ceiling"].set_ydata([ceiling, ceiling])
        ax.set_title(P.label(f"共用一把锁：临界区占每轮 {h:.0%}", f"one shared lock: critical section {h:.0%}"))
        return (f"临界区占比 h = {h:.2f}：上限 1/h = {ceiling:.1f}；"
                f"8 台设备 {s[7]:.2f}x，32 台设备 {s[31]:.2f}x")

    return Explorer(draw, {"critical_share": slider("临界区占比 h", 0.02, 0.5, 0.01, 0.1),
                           "noise": slider("耗时波动 σ", 0.0, 1.0, 0.05, 0.2)}, figsize=(7, 3.4), clear=False)


def comm_peak_figure(p: float = 0.99, latencies_ms=(1.0, 10.0), ax=None):
    """Plain Amdahl against Amdahl + ring all-reduce (C = 64 s, 1 GB, 10 GB/s) for each per-hop latency,
    each curve's peak N* marked."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
    n = np.arange(1, 4097)
    ax.plot(n, F.amdahl(p, n), color="0.5", ls="--", label=P.label(f"Amdahl，p = {p:g}（不计通信）",
                                                                  f"Amdahl, p = {p:g} (no communication)"))
    for ms in latencies_ms:
        s = C.speedup_with_allreduce(p, n, **STEP, latency=ms * 1e-3)
        best = int(n[np.argmax(s)])
        line, = ax.plot(n, s, label=P.label(f"+ 全归约，α = {ms:g} ms：峰值 N* = {best}",
                                            f"+ all-reduce, alpha = {ms:g} ms: peak N* = {best}"))
        ax.plot([best], [s.max()], "o", color=line.get_color())
    _speedup_axes(ax, P.label("把全归约放进 Amdahl：加速比先升后降", "Amdahl with the all-reduce: speed-up peaks"))
    return ax


def _speedup_axes(ax, title: str) -> None:
    """Log-log speed-up axes of the all-reduce figures (static and widget): 1-4096 devices, S up to 128."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_ylim(1, 128)
    decimal_log_ticks(ax, top=4096)
    ax.set_xlabel(P.label("设备数 N", "devices N"))
    ax.set_ylabel(P.label("加速比 S", "speed-up S"))
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left")


def comm_peak_explorer() -> Explorer:
    """Amdahl with the ring all-reduce in the step time (:mod:`hetlab.communication`) against plain Amdahl,
    with the peak device count N* marked; sliders for p and the per-hop latency alpha."""
    def draw(ax, p: float, latency_ms: float) -> str:
        n = np.arange(1, 4097)
        alpha = latency_ms * 1e-3
        s = C.speedup_with_allreduce(p, n, **STEP, latency=alpha)
        best = int(n[np.argmax(s)])
        ax.plot(n, F.amdahl(p, n), color="0.5", ls="--",
                label=P.label("Amdahl（不计通信）", "Amdahl (no communication)"))
        ax.plot(n, s, label=P.label("Amdahl + 环形全归约", "Amdahl + ring all-reduce"))
        ax.plot([best], [s.max()], "o", color="crimson",
                label=P.label(f"峰值 N* = {best}，S = {s.max():.1f}", f"peak N* = {best}, S = {s.max():.1f}"))
        _speedup_axes(ax, P.label(f"C = 64 s，梯度 1 GB，带宽 10 GB/s，每跳延迟 α = {latency_ms:g} ms",
                                  f"C = 64 s, 1 GB gradients, 10 GB/s, alpha = {latency_ms:g} ms"))
        return (f"峰值在 N = {best}（公式 √((Cp − 2G/B)/(2α)) = {C.peak_devices(p, **STEP, latency=alpha):.1f}），"
                f"加速比 {s.max():.2f}；N = 4096 时 {s[-1]:.2f}，Amdahl 给 {F.amdahl(p, 4096):.2f}")

    alphas = [(f"{a:g}", a) for a in (0.1, 0.3, 1.0, 3.0, 10.0)]
    return Explorer(draw, {"p": slider("可并行比例 p", 0.9, 0.999, 0.001, 0.99, fmt=".3f"),
                           "latency_ms": dropdown("每跳延迟 α（ms）", alphas, 1.0)}, figsize=(7, 3.6))


#: (chapter, factory) for each widget of this module.
VIEWS = [(6, amdahl_explorer), (6, barrier_explorer), (6, lock_explorer), (6, comm_peak_explorer)]
