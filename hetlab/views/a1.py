"""Appendix A1 (real execution): equal tasks on a pool of P workers run in ceil(N / P) rounds."""
from __future__ import annotations

import math

import numpy as np

from .. import granularity as G
from .. import plotting as P
from ..widgets import Explorer, int_slider, slider

__all__ = ["pool_rounds", "gantt_panels", "machine_note"]


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


def gantt_panels(panels, *, mark: float | None = None, names: int = 5, figsize=(8.0, 4.0)):
    """Stacked Gantt charts on one time axis (seconds), every task in its own colour in every panel so
    that the same task can be followed from plan to measurement; the ``names`` longest tasks of each
    panel are labelled; ``mark`` draws a dashed line (e.g. the simulated makespan) on every panel
    after the first. ``panels`` is a list of (Schedule, title). Returns the figure."""
    import matplotlib.pyplot as plt

    from .._validate import check_int, check_nonnegative
    from ..schedule import Schedule

    if not isinstance(panels, (list, tuple)) or not panels:
        raise ValueError(f"panels must be a non-empty list of (Schedule, title), got {panels!r:.80}")
    for k, item in enumerate(panels):
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], Schedule)
                and isinstance(item[1], str)):
            raise TypeError(f"panels[{k}] must be a (Schedule, title) pair, got {item!r:.80}")
    names = check_int("names", names, low=0, high=100)
    if mark is not None:
        mark = check_nonnegative("mark", mark)
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=figsize, squeeze=False)
    cmap = plt.get_cmap("tab20")
    span = max(max(s.makespan for s, _ in panels), mark or 0.0)
    for row, (ax, (s, title)) in enumerate(zip(axes[:, 0], panels)):
        rows = len(s.devices)
        for i in range(len(s.graph.tasks)):
            y = rows - 1 - int(s.device_of[i])
            ax.barh(y, s.end[i] - s.start[i], left=s.start[i], height=0.7, color=cmap(i % 20),
                    edgecolor="white", linewidth=0.6)
        longest = np.argsort(-(s.end - s.start), kind="stable")[:names]
        for i in longest:
            width = s.end[i] - s.start[i]
            if width > 0.03 * span:
                ax.text(s.start[i] + width / 2, rows - 1 - int(s.device_of[i]), s.graph.tasks[i].name,
                        ha="center", va="center", fontsize=7, color="black", clip_on=True)
        ax.axvline(s.makespan, color="black", lw=0.8)
        if mark is not None and row > 0:
            ax.axvline(mark, color="#C44E52", lw=1.0, ls="--")
            ax.text(mark, rows - 0.45, P.label(" 模拟完成时间", " simulated makespan"), color="#C44E52",
                    fontsize=7, va="bottom", ha="left")
        ax.set_yticks(range(rows), [d.name for d in reversed(s.devices)])
        ax.set_ylim(-0.6, rows - 0.1)
        ax.set_title(title, fontsize=9, loc="left")
    axes[-1, 0].set_xlim(0, span * 1.03)
    axes[-1, 0].set_xlabel(P.label("时间（秒）", "time (s)"))
    fig.tight_layout()
    return fig


def machine_note(load: float | None = None) -> str:
    """One Chinese sentence on how busy this machine was (runnable processes per CPU, last minute), to
    print beside a timing that is compared with a model."""
    from .. import measure
    from .._validate import check_nonnegative

    load = measure.load_per_cpu() if load is None else check_nonnegative("load", load)
    if load is None:
        return "本系统不报告负载，无法判断测量时机器是否空闲。"
    if load > 0.75:
        return (f"⚠ 机器较忙：过去一分钟平均每个 CPU 有 {load:.2f} 个可运行进程（空闲时接近 0），"
                "实测会被别的进程拉长，与模拟的差距不能全算在模型头上。")
    return f"机器基本空闲：过去一分钟平均每个 CPU 有 {load:.2f} 个可运行进程。"
