"""Chapter 7 (metrics): efficiency, throughput against utilisation as devices are added, load imbalance."""
from __future__ import annotations

import numpy as np

from .. import device_sweep as D
from .. import formulas as F
from .. import plotting as P
from .. import schedulers as S
from ..devices import identical
from ..widgets import Explorer, dropdown, int_slider, slider
from ..workloads import skewed_tasks

__all__ = ['efficiency', 'metrics', 'imbalance']

COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)


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
        return f"S = {F.amdahl(p, N):.3f}，E = S/N = {e:.4f}，串行阶段空等的设备 N−1 = {N - 1}"

    return Explorer(draw, {"p": slider("可并行比例 p", 0.0, 1.0, 0.01, 0.9),
                           "N": int_slider("设备数 N", 1, 4096, 16)}, figsize=(7, 3.2))


def metrics() -> Explorer:
    """Throughput and mean utilisation of one fixed job on N identical devices (LPT), N on the x axis."""
    art: dict = {}

    def draw(ax, tasks: int, spread: float) -> str:
        rows = D.device_sweep(skewed_tasks(tasks, spread=spread, seed=1), COUNTS)
        n = [r.n_devices for r in rows]
        thr = [r.throughput for r in rows]
        util = [r.utilisation for r in rows]
        if not art:
            art["right"] = ax.twinx()
            art["thr"], = ax.plot(n, thr, "o-", color="tab:blue", label=P.label("吞吐量", "throughput"))
            art["util"], = art["right"].plot(n, util, "s--", color="tab:red",
                                             label=P.label("平均利用率 = E", "mean utilisation = E"))
            ax.set_xscale("log", base=2)
            ax.set_xticks(n, [str(k) for k in n])
            ax.set_xlabel(P.label("设备数 N", "devices N"))
            ax.set_ylabel(P.label("吞吐量（任务/时间单位）", "throughput (tasks per time unit)"), color="tab:blue")
            art["right"].set_ylabel(P.label("平均利用率", "mean utilisation"), color="tab:red")
            art["right"].set_ylim(0, 1.05)
            ax.legend(handles=[art["thr"], art["util"]], fontsize=8, loc="center left")
        art["thr"].set_ydata(thr)
        art["util"].set_ydata(util)
        ax.set_ylim(0, max(thr) * 1.1)
        ax.set_title(P.label(f"{tasks} 个任务：加设备，吞吐升、利用率降", f"{tasks} tasks: more devices"))
        best = max(rows, key=lambda r: r.throughput)
        knee = next(r for r in rows if r.throughput >= 0.99 * best.throughput)
        return (f"吞吐量在 N = {knee.n_devices} 时已达最高值的 99%（{knee.throughput:.2f}），"
                f"此时利用率 {knee.utilisation:.0%}；"
                f"N = {rows[-1].n_devices} 时吞吐量 {rows[-1].throughput:.2f}，利用率只剩 {rows[-1].utilisation:.0%}")

    return Explorer(draw, {"tasks": int_slider("任务数", 8, 96, 32),
                           "spread": slider("任务大小差异", 0.0, 1.5, 0.1, 0.5)}, figsize=(7, 3.4), clear=False)


def imbalance() -> Explorer:
    """Per-device loads of a policy, with W_max, W_avg and the imbalance."""
    names = [("分块", "block"), ("轮转", "round-robin"), ("最早空闲", "earliest free"), ("LPT", "LPT")]

    def draw(ax, policy: str, tasks: int, spread: float) -> str:
        graph = skewed_tasks(tasks, spread=spread, seed=3)
        devices = identical(4, speed=10.0)
        s = S.POLICIES[policy](graph, devices).validate()
        zh = dict((v, k) for k, v in names)[policy]
        ax.bar([d.name for d in devices], s.busy, color="#4C72B0")
        ax.axhline(s.busy.mean(), color="black", ls="--", lw=1, label=P.label("平均负载 W_avg", "W_avg"))
        ax.axhline(s.busy.max(), color="crimson", ls=":", lw=1, label=P.label("最大负载 W_max", "W_max"))
        ax.set_ylabel(P.label("忙碌时间", "busy time"))
        ax.legend(fontsize=8)
        ax.set_title(P.label(f"{zh}：负载不均衡度 {s.imbalance:.3f}", f"{policy}: imbalance {s.imbalance:.3f}"))
        big = graph.work.max() / graph.work.sum()
        return (f"W_max = {s.busy.max():.2f}，W_avg = {s.busy.mean():.2f}，不均衡度 = {s.imbalance:.3f}；"
                f"最大的任务占总工作量 {big:.0%}")

    return Explorer(draw, {"policy": dropdown("策略", names, "block"),
                           "tasks": int_slider("任务数", 4, 64, 16),
                           "spread": slider("任务大小差异", 0.0, 1.5, 0.1, 0.8)}, figsize=(6, 3))


#: (chapter, factory) for each widget of this module.
VIEWS = [(7, efficiency), (7, metrics), (7, imbalance)]
