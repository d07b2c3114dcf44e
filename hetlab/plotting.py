"""Figures: Gantt charts of any Schedule, speed-up and efficiency curves, the granularity
U-curve with N* marked, and pipeline timelines.

Chinese labels need a CJK font. :func:`use_cjk_font` picks the first installed family from
:data:`CJK_FONTS`; if none is installed, :func:`label` returns the English text instead and
one :class:`FontFallbackWarning` says so. Every function draws into an ``ax`` (created when
not given) and returns it, so widgets can redraw in place.
"""
from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from hetlab._validate import (
    check_bool,
    check_instance,
    check_int,
    check_nonnegative,
    check_positive,
    check_sequence,
    check_str,
    describe,
)

__all__ = ["CJK_FONTS", "FontFallbackWarning", "use_cjk_font", "setup_notebook", "label", "gantt", "speedup_curve",
           "efficiency_curve", "granularity_curve", "pipeline_timeline", "new_axes", "KIND_COLOURS"]

#: Preferred CJK font families, best first (Debian's fonts-noto-cjk provides the first).
CJK_FONTS = ["Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "Source Han Sans CN",
             "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "SimHei", "Microsoft YaHei", "PingFang SC",
             "Heiti SC", "AR PL UMing CN"]

KIND_COLOURS = {"CPU": "#4C72B0", "GPU": "#55A868", "NPU": "#C44E52", "forward": "#4C72B0",
                "backward": "#DD8452", "matmul": "#55A868", "conv": "#C44E52", "control": "#4C72B0",
                "image": "#CCB974"}


class FontFallbackWarning(UserWarning):
    """No CJK font is installed; figures use English labels."""


@lru_cache(maxsize=1)
def use_cjk_font() -> str | None:
    """Make matplotlib use an installed CJK font; return its family, or None (with one warning)."""
    import matplotlib
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    for family in CJK_FONTS:
        if family in installed:
            matplotlib.rcParams["font.sans-serif"] = [family, "DejaVu Sans"]
            matplotlib.rcParams["font.family"] = "sans-serif"
            matplotlib.rcParams["axes.unicode_minus"] = False
            return family
    warnings.warn("no CJK font found (install Debian's fonts-noto-cjk); figures use English labels",
                  FontFallbackWarning, stacklevel=2)
    return None


def setup_notebook() -> None:
    """A chapter's first cell: choose the CJK font and print nothing.

    A validated notebook cell must print the same text on every machine, so the font's name is
    not shown and the no-font warning is not raised here (the figures' English labels say it).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FontFallbackWarning)
        found = use_cjk_font()
    if not found:
        # Labels fall back to English, but some data are Chinese (chapter 2's dish names, a few legends):
        # without the font matplotlib would print a "Glyph ... missing" warning per character into the
        # cell's output, which differs from machine to machine. The boxes in the figure say it already.
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font")
        # mathtext reports a missing glyph through its logger, not as a warning.
        for name in ("matplotlib.mathtext", "matplotlib._mathtext"):
            logging.getLogger(name).setLevel(logging.ERROR)


def label(zh: str, en: str) -> str:
    """The Chinese label if a CJK font is available, else the English one."""
    check_str("zh", zh, empty=True)
    check_str("en", en, empty=True)
    return zh if use_cjk_font() else en


def new_axes(ax=None, figsize=(8, 3.2)):
    """Return ``ax``, or the axes of a new figure of ``figsize``."""
    if ax is not None:
        return _check_ax(ax)
    import matplotlib.pyplot as plt

    size = check_sequence("figsize", figsize)
    if len(size) != 2:
        raise ValueError(f"figsize must be (width, height) in inches, got {describe(figsize)}")
    figsize = tuple(check_positive("figsize", x, high=100.0) for x in size)
    use_cjk_font()
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _check_ax(ax):
    """``ax`` if it is a matplotlib Axes (a widget passes its own), else a TypeError naming ``ax``."""
    from matplotlib.axes import Axes

    return check_instance("ax", ax, Axes, "a matplotlib Axes or None")


def _check_p_values(p_values) -> tuple[float, ...]:
    values = check_sequence("p_values", p_values)
    if len(values) > 20:
        raise ValueError(f"p_values must list at most 20 fractions (one curve each), got {len(values)}")
    return tuple(check_nonnegative("p_values", p, high=1.0) for p in values)


def _task_key(task, device) -> str:
    """What a bar's colour stands for: the operation kind, else the preferred kind, else the device kind."""
    return task.op or task.kind or device.kind


def _colour(key: str) -> str:
    if key in KIND_COLOURS:
        return KIND_COLOURS[key]
    palette = ["#8172B2", "#937860", "#DA8BC3", "#8C8C8C", "#64B5CD"]
    return palette[sum(map(ord, key)) % len(palette)]


def _bar_vertices(start, end, y, height: float = 0.7) -> np.ndarray:
    """Corners of horizontal bars [start, end] x [y - h/2, y + h/2], shape (bars, 4, 2)."""
    lo, hi = y - height / 2, y + height / 2
    return np.stack([np.column_stack(c) for c in ((start, lo), (start, hi), (end, hi), (end, lo))], axis=1)


def gantt(schedule, ax=None, *, title: str | None = None, show_names: bool = True, show_deps: bool = False,
          highlight_steals: bool = True, xmax: float | None = None, xlabel: str | None = None):
    """Gantt chart: one row per device, one bar per task, coloured by operation or task kind.

    ``xlabel`` replaces the default "时间（时间单位）" when the times have a unit (e.g. seconds);
    an empty string draws no label (for the upper panel of a stacked pair).

    Tasks obtained by stealing (from a work-stealing schedule's log) are hatched; with
    ``show_deps`` a thin arrow joins each dependency.
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    from hetlab.schedule import Schedule

    check_instance("schedule", schedule, Schedule)
    for name, flag in (("show_names", show_names), ("show_deps", show_deps), ("highlight_steals", highlight_steals)):
        check_bool(name, flag)
    for name, text in (("title", title), ("xlabel", xlabel)):
        if text is not None:
            check_str(name, text, empty=True)
    if xmax is not None:
        xmax = check_nonnegative("xmax", xmax)
    if ax is not None:
        _check_ax(ax)
    ax = new_axes(ax, figsize=(8, 0.6 + 0.55 * min(len(schedule.devices), 100)))
    g, devices = schedule.graph, schedule.devices
    stolen = {e.task for e in schedule.log if getattr(e, "task", None)} if highlight_steals else set()
    rows = len(devices)
    keys = [_task_key(t, devices[d]) for t, d in zip(g.tasks, schedule.device_of)]
    colours = [_colour(k) for k in keys]
    y = rows - 1 - schedule.device_of
    # One collection for all bars: far cheaper to draw than one Rectangle patch per task.
    ax.add_collection(PolyCollection(_bar_vertices(schedule.start, schedule.end, y), facecolors=colours,
                                     edgecolors="white", linewidths=0.6))
    if stolen:
        idx = [g.index[name] for name in stolen]
        ax.add_collection(PolyCollection(_bar_vertices(schedule.start[idx], schedule.end[idx], y[idx]),
                                         facecolors="none", edgecolors="black", linewidths=0.6, hatch="//"))
    ax.set_ylim(-0.6, rows - 0.4)
    span = schedule.makespan or 1.0
    if show_names and len(g.tasks) <= 60:
        for i, task in enumerate(g.tasks):
            width = schedule.end[i] - schedule.start[i]
            if width > 0.035 * span:
                ax.text(schedule.start[i] + width / 2, y[i], task.name, ha="center", va="center",
                        fontsize=7, color="white", clip_on=True)
    if show_deps:
        for (src, dst) in g.edges:
            a, b = g.index[src], g.index[dst]
            ax.annotate("", xy=(schedule.start[b], y[b]), xytext=(schedule.end[a], y[a]),
                        arrowprops=dict(arrowstyle="->", lw=0.5, color="0.3", alpha=0.6))
    ax.axvline(schedule.makespan, color="black", lw=0.8, ls="--")
    ax.set_yticks(range(rows), [d.name for d in reversed(devices)])
    ax.set_xlim(0, (xmax or span) * 1.02)
    ax.set_xlabel(label("时间（时间单位）", "time (time units)") if xlabel is None else xlabel)
    ax.set_title(title or f"{schedule.policy}: makespan {schedule.makespan:.2f}")
    handles = [Patch(color=_colour(k), label=k) for k in sorted(set(keys))]
    if stolen:
        handles.append(Patch(fill=False, hatch="//", label=label("窃取所得", "stolen")))
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    return ax


def speedup_curve(p_values: Sequence[float], n_max: int = 1024, ax=None, *, log: bool = True):
    """Amdahl speed-up against device count for each parallel fraction, with its 1/(1-p) ceiling."""
    from hetlab.formulas import amdahl, amdahl_limit

    p_values = _check_p_values(p_values)
    log = check_bool("log", log)
    # A linear axis draws every N: cap it; a log axis samples 200 points whatever the range.
    n_max = check_int("n_max", n_max, low=1, high=10**12 if log else 100_000)
    ax = new_axes(ax, figsize=(7, 4))
    n = np.unique(np.round(np.geomspace(1, n_max, 200))) if log else np.arange(1, n_max + 1)
    for p in p_values:
        line, = ax.plot(n, amdahl(p, n), label=f"p = {p:g}")
        if p < 1:
            ax.axhline(amdahl_limit(p), color=line.get_color(), ls=":", lw=1)
    ax.plot(n, n, color="0.6", lw=0.8, ls="--", label=label("线性加速", "linear"))
    if log:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
    ax.set_ylim(1, max(2, n_max) * 1.1)
    ax.set_xlabel(label("设备数 N", "devices N"))
    ax.set_ylabel(label("加速比 S", "speed-up S"))
    ax.set_title(label("Amdahl 定律：点线为上限 1/(1-p)，灰色虚线为线性加速",
                       "Amdahl's law: dotted lines are 1/(1-p), the dashed line is linear"))
    ax.legend(fontsize=8)
    return ax


def efficiency_curve(p_values: Sequence[float], n_max: int = 1024, ax=None):
    """Amdahl efficiency ``E = 1 / (N (1 - p) + p)`` against device count."""
    from hetlab.formulas import amdahl_efficiency

    p_values = _check_p_values(p_values)
    n_max = check_int("n_max", n_max, low=1, high=10**12)
    ax = new_axes(ax, figsize=(7, 4))
    n = np.unique(np.round(np.geomspace(1, n_max, 200)))
    for p in p_values:
        ax.plot(n, amdahl_efficiency(p, n), label=f"p = {p:g}")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(label("设备数 N", "devices N"))
    ax.set_ylabel(label("并行效率 E", "efficiency E"))
    ax.set_title(label("并行效率随设备数下降", "Efficiency falls as devices are added"))
    ax.legend(fontsize=8)
    return ax


def granularity_curve(W: float, Os: float, ax=None, *, n_max: int | None = None):
    """The U-curve ``T(N) = N Os + W / N`` with its two terms and the optimum N* marked."""
    from hetlab.formulas import optimal_tasks, total_time

    # Bounded so that every term of T(N) = N Os + W / N stays a float over the plotted range.
    W = check_nonnegative("W", W, high=1e100)
    Os = check_positive("Os", Os, high=1e100)
    if Os < 1e-100:
        raise ValueError(f"Os must be in [1e-100, 1e+100], got {Os!r}")
    if n_max is not None:
        n_max = check_int("n_max", n_max, low=2, high=10**12)
    ax = new_axes(ax, figsize=(7, 4))
    n_star = optimal_tasks(W, Os)
    top = float(n_max or max(10.0, 4.0 * n_star))
    n = np.unique(np.round(np.geomspace(1, top, 300)))
    ax.plot(n, total_time(n, W, Os), color="black", lw=2, label=label("总耗时 T(N)", "total T(N)"))
    ax.plot(n, n * Os, ls="--", label=label("调度开销 N·Os", "overhead N·Os"))
    ax.plot(n, W / n, ls="--", label=label("均摊执行 W/N", "work W/N"))
    t_star = total_time(max(n_star, 1.0), W, Os)
    ax.plot([max(n_star, 1.0)], [t_star], "o", color="crimson", zorder=3)
    ax.annotate(f"N* = {n_star:.1f}\nT = {t_star:.1f}", (max(n_star, 1.0), t_star), textcoords="offset points",
                xytext=(8, 12), color="crimson")
    ax.set_xscale("log")
    ax.set_ylim(0, min(float(total_time(1, W, Os)), 4 * t_star) * 1.05)
    ax.set_xlabel(label("任务数 N（对数轴）", "tasks N (log scale)"))
    ax.set_ylabel(label("时间", "time"))
    ax.set_title(label(f"粒度 U 形曲线：W = {W:g}, Os = {Os:g}", f"Granularity U-curve: W = {W:g}, Os = {Os:g}"))
    ax.legend(fontsize=8)
    return ax


def pipeline_timeline(schedule, ax=None, *, title: str | None = None):
    """A pipeline schedule's Gantt chart (forward blue, backward orange), with its bubble share."""
    from hetlab.schedule import Schedule

    check_instance("schedule", schedule, Schedule)
    bubble = schedule.info.get("bubble_fraction")
    if bubble is None:
        raise ValueError("schedule must come from simulators.pipeline_schedule (its info has no bubble_fraction), "
                         f"got a {schedule.policy!r} schedule")
    if title is not None:
        check_str("title", title, empty=True)
    text = title or label(f"{schedule.policy}：气泡占比 {bubble:.1%}", f"{schedule.policy}: bubble {bubble:.1%}")
    return gantt(schedule, ax, title=text, show_names=len(schedule.graph.tasks) <= 48)


def flynn_diagram(axes=None):
    """Flynn's taxonomy (1966) as four small diagrams: instruction streams (top) feeding
    processing units (middle) that read data streams (bottom)."""
    import matplotlib.pyplot as plt

    if axes is None:
        use_cjk_font()
        _, axes = plt.subplots(1, 4, figsize=(10, 2.8), layout="constrained")
    classes = [("SISD", 1, 1, label("单核 CPU", "single core")),
               ("SIMD", 1, 4, label("CPU 向量指令 / GPU 的一个 warp", "CPU vector unit / one GPU warp")),
               ("MISD", 4, 1, label("冗余容错计算（罕见）", "redundant fault-tolerant (rare)")),
               ("MIMD", 4, 4, label("多核 CPU / 集群", "multi-core / cluster"))]
    for ax, (name, n_inst, n_data, example) in zip(axes, classes):
        units = max(n_inst, n_data)
        xs = np.linspace(0.15, 0.85, units) if units > 1 else [0.5]
        ix = np.linspace(0.15, 0.85, n_inst) if n_inst > 1 else [0.5]
        dx = np.linspace(0.15, 0.85, n_data) if n_data > 1 else [0.5]
        for k, x in enumerate(xs):
            ax.add_patch(plt.Rectangle((x - 0.07, 0.42), 0.14, 0.16, color="#55A868"))
            ax.annotate("", xy=(x, 0.58), xytext=(ix[min(k, n_inst - 1)], 0.85),
                        arrowprops=dict(arrowstyle="-", color="#4C72B0", lw=1.2))
            ax.annotate("", xy=(x, 0.42), xytext=(dx[min(k, n_data - 1)], 0.15),
                        arrowprops=dict(arrowstyle="-", color="#C44E52", lw=1.2))
        for x in ix:
            ax.text(x, 0.93, "I", ha="center", va="center", color="#4C72B0", fontsize=11, fontweight="bold",
                    bbox=dict(boxstyle="circle,pad=0.25", fc="white", ec="#4C72B0"))
        for x in dx:
            ax.text(x, 0.07, "D", ha="center", va="center", color="#C44E52", fontsize=11, fontweight="bold",
                    bbox=dict(boxstyle="circle,pad=0.25", fc="white", ec="#C44E52"))
        ax.set_title(f"{name}\n{example}", fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.05, 1.05)
        ax.axis("off")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    key = [Line2D([], [], color="#4C72B0", lw=2, label=label("I = 指令流", "I = instruction stream")),
           Line2D([], [], color="#C44E52", lw=2, label=label("D = 数据流", "D = data stream")),
           Patch(color="#55A868", label=label("绿块 = 处理单元（PE）", "green = processing element"))]
    axes[0].figure.legend(handles=key, loc="outside lower center", ncol=3, fontsize=9, frameon=False)
    return axes


def parallelism_grid(data: int, tensor: int, pipeline: int, ax=None):
    """Devices of a data x tensor x pipeline parallel job: one column block per data-parallel
    replica, one row per pipeline stage, tensor-parallel shards side by side."""
    import matplotlib.pyplot as plt

    ax = new_axes(ax, figsize=(8, 3.5))
    colours = plt.get_cmap("tab10")
    for d in range(data):
        for s in range(pipeline):
            for t in range(tensor):
                x = d * (tensor + 0.6) + t
                ax.add_patch(plt.Rectangle((x, pipeline - 1 - s), 0.9, 0.85, color=colours(s % 10), alpha=0.85))
    ax.set_xlim(-0.3, data * (tensor + 0.6))
    ax.set_ylim(-0.2, pipeline + 0.1)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xticks([d * (tensor + 0.6) + tensor / 2 - 0.05 for d in range(data)],
                  [label(f"副本{d}", f"replica {d}") for d in range(data)] if data <= 8 else [""] * data)
    ax.set_yticks([pipeline - 1 - s + 0.42 for s in range(pipeline)], [f"stage {s}" for s in range(pipeline)])
    ax.tick_params(length=0)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_title(label(f"数据并行 {data} × 张量并行 {tensor} × 流水线 {pipeline} = {data * tensor * pipeline} 台设备",
                       f"data {data} x tensor {tensor} x pipeline {pipeline} = {data * tensor * pipeline} devices"))
    return ax
