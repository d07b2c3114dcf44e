"""Figures: the Gantt chart of any Schedule (one chart, or stacked panels on one time axis), the Amdahl
speed-up curve, the granularity U-curve with N* marked, Flynn's taxonomy and a parallelism grid; and
the display width of text with CJK characters, to line up printed tables.

Chinese labels need a CJK font. :func:`use_cjk_font` picks the first installed family from
:data:`CJK_FONTS`; if none is installed, :func:`label` returns the English text instead and
one :class:`FontFallbackWarning` says so. The Chinese figure labels of this module, each with its
English fallback, are the table :data:`LABELS`. Every function draws into an ``ax`` (created when
not given) and returns it, so widgets can redraw in place.

>>> display_width("HEFT 调度"), pad("最早空闲", 10) + "|"
(9, '最早空闲  |')
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

__all__ = ["CJK_FONTS", "FontFallbackWarning", "use_cjk_font", "setup_notebook", "label", "LABELS", "gantt",
           "gantt_panels", "speedup_curve", "granularity_curve", "new_axes", "KIND_COLOURS", "CRITICAL_COLOUR",
           "OTHER_COLOUR", "display_width", "pad"]

#: Preferred CJK font families, best first (Debian's fonts-noto-cjk provides the first).
CJK_FONTS = ["Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "Source Han Sans CN",
             "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "SimHei", "Microsoft YaHei", "PingFang SC",
             "Heiti SC", "AR PL UMing CN"]

KIND_COLOURS = {"CPU": "#4C72B0", "GPU": "#55A868", "NPU": "#C44E52", "forward": "#4C72B0",
                "backward": "#DD8452", "matmul": "#55A868", "conv": "#C44E52", "control": "#4C72B0",
                "image": "#CCB974"}
#: Colours of the tasks on and off the critical path (``gantt(critical=True)``).
CRITICAL_COLOUR, OTHER_COLOUR = "#DD8452", "#4C72B0"

#: The Chinese labels this module draws, each with the English text shown when no CJK font is installed
#: (a data table of labels: the one place in the library outside hetlab.book with Chinese text besides
#: docstrings). ``{name}`` fields are filled by :func:`_text`.
LABELS: dict[str, tuple[str, str]] = {
    "time": ("时间（时间单位）", "time (time units)"),
    "stolen": ("窃取所得", "stolen"),
    "linear": ("线性加速", "linear"),
    "devices": ("设备数 N", "devices N"),
    "speedup": ("加速比 S", "speed-up S"),
    "amdahl_title": ("Amdahl 定律：点线为上限 1/(1-p)，灰色虚线为线性加速",
                     "Amdahl's law: dotted lines are 1/(1-p), the dashed line is linear"),
    "total": ("总耗时 T(N)", "total T(N)"),
    "overhead": ("调度开销 N·Os", "overhead N·Os"),
    "work": ("均摊执行 W/N", "work W/N"),
    "tasks_log": ("任务数 N（对数轴）", "tasks N (log scale)"),
    "plain_time": ("时间", "time"),
    "u_curve": ("粒度 U 形曲线：W = {W:g}, Os = {Os:g}", "Granularity U-curve: W = {W:g}, Os = {Os:g}"),
    "sisd": ("单核 CPU", "single core"),
    "simd": ("CPU 向量指令 / GPU 的一个线程束", "CPU vector unit / one GPU warp"),
    "misd": ("冗余容错计算（罕见）", "redundant fault-tolerant (rare)"),
    "mimd": ("多核 CPU / 集群", "multi-core / cluster"),
    "instruction_stream": ("I = 指令流", "I = instruction stream"),
    "data_stream": ("D = 数据流", "D = data stream"),
    "processing_element": ("绿块 = 处理单元（PE）", "green = processing element"),
    "replica": ("副本{d}", "replica {d}"),
    "grid_title": ("数据并行 {data} × 张量并行 {tensor} × 流水线 {pipeline} = {total} 台设备",
                   "data {data} x tensor {tensor} x pipeline {pipeline} = {total} devices"),
}


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


def _text(key: str, **values) -> str:
    """The label ``key`` of :data:`LABELS` in the language the installed fonts can draw, fields filled in."""
    zh, en = LABELS[key]
    return label(zh.format(**values), en.format(**values))


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes: a CJK or other wide character takes two (``len`` counts one).

    >>> display_width("GPU"), display_width("工作窃取")
    (3, 8)
    """
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in check_str("text", text, empty=True))


def pad(text: str, width: int, *, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` terminal columns (on the left with ``right=True``), so that
    printed tables with Chinese names line up (``str.ljust`` counts characters, not columns).

    >>> pad("轮转", 6) + "|", pad("2.5", 6, right=True)
    ('轮转  |', '   2.5')
    """
    text = check_str("text", text, empty=True)
    width = check_int("width", width, low=0, high=10_000)
    gap = " " * max(0, width - display_width(text))
    return gap + text if check_bool("right", right) else text + gap


def new_axes(ax=None, figsize=(8, 3.2)):
    """Return ``ax``, or the axes of a new figure of ``figsize``."""
    if ax is not None:
        return _check_ax(ax)
    import matplotlib.pyplot as plt

    use_cjk_font()
    fig, ax = plt.subplots(figsize=_figsize(figsize), layout="constrained")
    return ax


def _figsize(figsize) -> tuple[float, float]:
    size = check_sequence("figsize", figsize)
    if len(size) != 2:
        raise ValueError(f"figsize must be (width, height) in inches, got {describe(figsize)}")
    return tuple(check_positive("figsize", x, high=100.0) for x in size)


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


def _critical_path(graph) -> list[str]:
    from hetlab.tasks import critical_path

    return critical_path(graph)[1] if graph.edges else []


def _fit_names(ax, schedule) -> None:
    """Hide a task's name when it is wider than its bar (estimated from the axes' size in inches)."""
    fig = ax.figure
    left, right = ax.get_xlim()
    axes_inches = fig.get_figwidth() * ax.get_position().width * 0.85     # a legend will take some room
    per_unit = axes_inches / max(right - left, 1e-12)
    widths = {t.name: (schedule.end[i] - schedule.start[i]) * per_unit for i, t in enumerate(schedule.graph.tasks)}
    for text in ax.texts:
        name = text.get_text()
        if name in widths:
            text_inches = len(name) * text.get_fontsize() * (1.0 if not name.isascii() else 0.62) / 72
            text.set_visible(text_inches <= 0.92 * widths[name])


def gantt(schedule, ax=None, *, title: str | None = None, show_names=True, show_deps: bool | str = False,
          critical: bool = False, colors: Sequence | None = None, highlight_steals: bool = True,
          fit_names: bool = False, legend: bool = True, xmax: float | None = None, xlabel: str | None = None):
    """Gantt chart: one row per device, one bar per task, coloured by operation or task kind.

    - ``critical``: the tasks on the graph's critical path in orange (:data:`CRITICAL_COLOUR`), the others
      blue (:data:`OTHER_COLOUR`), and no legend of kinds; ``colors``: one colour per task (graph order)
      instead of the kinds' colours, e.g. to follow the same task across panels;
    - ``show_deps``: ``True`` draws every dependency as a faint arrow beneath the names, ``"critical"`` only
      the critical path's edges, strong and orange (readable on a dense graph);
    - ``show_names``: ``True`` writes each task's name in its bar (up to 60 tasks, bars wider than 3.5% of
      the makespan), ``False`` none, or a collection of task names to write; ``fit_names`` then hides a name
      wider than its bar;
    - tasks obtained by stealing (from a work-stealing schedule's log) are hatched (``highlight_steals``);
    - ``xlabel`` replaces the default "时间（时间单位）" when the times have a unit (e.g. seconds); an
      empty string draws no label (for the upper panel of a stacked pair); ``legend=False`` draws none.
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    from hetlab.schedule import Schedule

    check_instance("schedule", schedule, Schedule)
    for name, flag in (("critical", critical), ("highlight_steals", highlight_steals), ("fit_names", fit_names),
                       ("legend", legend)):
        check_bool(name, flag)
    if show_deps not in (True, False, "critical") or not isinstance(show_deps, (bool, str)):
        raise ValueError(f"show_deps must be True, False or 'critical', got {show_deps!r}")
    g, devices = schedule.graph, schedule.devices
    if isinstance(show_names, (bool, np.bool_)):
        named = set(t.name for t in g.tasks) if show_names and len(g.tasks) <= 60 else set()
    elif isinstance(show_names, str):
        raise TypeError(f"show_names must be True, False or a collection of task names, got {show_names!r}")
    else:
        named = {check_str("show_names", x) for x in check_sequence("show_names", show_names)}
        unknown = sorted(named - set(g.index))
        if unknown:
            raise ValueError(f"show_names must name tasks of the schedule's graph, got unknown {unknown[:3]}")
    if colors is not None:
        colors = list(check_sequence("colors", colors))
        if len(colors) != len(g.tasks):
            raise ValueError(f"colors must give one colour per task ({len(g.tasks)}), got {len(colors)}")
    for name, text in (("title", title), ("xlabel", xlabel)):
        if text is not None:
            check_str(name, text, empty=True)
    if xmax is not None:
        xmax = check_nonnegative("xmax", xmax)
    if ax is not None:
        _check_ax(ax)
    ax = new_axes(ax, figsize=(8, 0.6 + 0.55 * min(len(devices), 100)))
    stolen = {e.task for e in schedule.log if getattr(e, "task", None)} if highlight_steals else set()
    rows = len(devices)
    keys = [_task_key(t, devices[d]) for t, d in zip(g.tasks, schedule.device_of)]
    path = _critical_path(g) if critical or show_deps == "critical" else []
    if colors is None and critical:
        on_path = set(path)
        colors = [CRITICAL_COLOUR if t.name in on_path else OTHER_COLOUR for t in g.tasks]
    kinds = colors is None
    y = rows - 1 - schedule.device_of
    # One collection for all bars: far cheaper to draw than one Rectangle patch per task.
    ax.add_collection(PolyCollection(_bar_vertices(schedule.start, schedule.end, y),
                                     facecolors=[_colour(k) for k in keys] if kinds else colors,
                                     edgecolors="white", linewidths=0.6))
    if stolen:
        idx = [g.index[name] for name in stolen]
        ax.add_collection(PolyCollection(_bar_vertices(schedule.start[idx], schedule.end[idx], y[idx]),
                                         facecolors="none", edgecolors="black", linewidths=0.6, hatch="//"))
    ax.set_ylim(-0.6, rows - 0.4)
    span = schedule.makespan or 1.0
    for i, task in enumerate(g.tasks):
        width = schedule.end[i] - schedule.start[i]
        if task.name in named and width > 0.035 * span:
            ax.text(schedule.start[i] + width / 2, y[i], task.name, ha="center", va="center",
                    fontsize=7, color="white", clip_on=True, zorder=3)
    if show_deps:
        strong = show_deps == "critical"
        for src, dst in (zip(path, path[1:]) if strong else g.edges):
            a, b = g.index[src], g.index[dst]
            ax.annotate("", xy=(schedule.start[b], y[b]), xytext=(schedule.end[a], y[a]), zorder=1.5,
                        arrowprops=dict(arrowstyle="->", lw=1.0 if strong else 0.6,
                                        color=CRITICAL_COLOUR if strong else "0.25", alpha=0.9 if strong else 0.35))
    ax.axvline(schedule.makespan, color="black", lw=0.8, ls="--")
    ax.set_yticks(range(rows), [d.name for d in reversed(devices)])
    ax.set_xlim(0, (xmax or span) * 1.02)
    ax.set_xlabel(_text("time") if xlabel is None else xlabel)
    ax.set_title(title or f"{schedule.policy}: makespan {schedule.makespan:.2f}")
    handles = [Patch(color=_colour(k), label=k) for k in sorted(set(keys))] if kinds else []
    if stolen:
        handles.append(Patch(fill=False, hatch="//", label=_text("stolen")))
    if handles and legend:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    if fit_names:
        _fit_names(ax, schedule)
    return ax


def gantt_panels(panels, *, figsize=None, xlabel: str | None = None, **options):
    """Stacked Gantt charts on one time axis: ``panels`` is a list of ``(Schedule, title)``; each is drawn by
    :func:`gantt` with ``options`` (``critical``, ``colors``, ``show_names``, ``show_deps`` ...), all up to the
    longest makespan, with the time label under the last one only. Returns the list of axes."""
    import matplotlib.pyplot as plt

    from hetlab.schedule import Schedule

    items = check_sequence("panels", panels)
    if not items or len(items) > 12:
        raise ValueError(f"panels must list 1 to 12 (Schedule, title) pairs, got {len(items)}")
    for k, item in enumerate(items):
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], Schedule)
                and isinstance(item[1], str)):
            raise TypeError(f"panels[{k}] must be a (Schedule, title) pair, got {describe(item)}")
    if "ax" in options or "title" in options:
        raise TypeError("gantt_panels draws one axes per panel and takes each title from panels")
    rows = [len(s.devices) for s, _ in items]
    figsize = (8, sum(0.6 + 0.55 * min(r, 100) for r in rows)) if figsize is None else _figsize(figsize)
    use_cjk_font()
    fig, axes = plt.subplots(len(items), 1, figsize=figsize, layout="constrained", sharex=True, squeeze=False,
                             height_ratios=rows)
    horizon = options.pop("xmax", None) or max(s.makespan for s, _ in items)
    for k, (ax, (s, title)) in enumerate(zip(axes[:, 0], items)):
        gantt(s, ax, title=title, xmax=horizon, xlabel=xlabel if k == len(items) - 1 else "", **options)
    return list(axes[:, 0])


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
    ax.plot(n, n, color="0.6", lw=0.8, ls="--", label=_text("linear"))
    if log:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
    ax.set_ylim(1, max(2, n_max) * 1.1)
    ax.set_xlabel(_text("devices"))
    ax.set_ylabel(_text("speedup"))
    ax.set_title(_text("amdahl_title"))
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
    ax.plot(n, total_time(n, W, Os), color="black", lw=2, label=_text("total"))
    ax.plot(n, n * Os, ls="--", label=_text("overhead"))
    ax.plot(n, W / n, ls="--", label=_text("work"))
    t_star = total_time(max(n_star, 1.0), W, Os)
    ax.plot([max(n_star, 1.0)], [t_star], "o", color="crimson", zorder=3)
    ax.annotate(f"N* = {n_star:.1f}\nT = {t_star:.1f}", (max(n_star, 1.0), t_star), textcoords="offset points",
                xytext=(8, 12), color="crimson")
    ax.set_xscale("log")
    ax.set_ylim(0, min(float(total_time(1, W, Os)), 4 * t_star) * 1.05)
    ax.set_xlabel(_text("tasks_log"))
    ax.set_ylabel(_text("plain_time"))
    ax.set_title(_text("u_curve", W=W, Os=Os))
    ax.legend(fontsize=8)
    return ax


def flynn_diagram(axes=None):
    """Flynn's taxonomy (1966) as four small diagrams: instruction streams (top) feeding
    processing units (middle) that read data streams (bottom)."""
    import matplotlib.pyplot as plt

    if axes is None:
        use_cjk_font()
        _, axes = plt.subplots(1, 4, figsize=(10, 2.8), layout="constrained")
    classes = [("SISD", 1, 1, _text("sisd")), ("SIMD", 1, 4, _text("simd")), ("MISD", 4, 1, _text("misd")),
               ("MIMD", 4, 4, _text("mimd"))]
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

    key = [Line2D([], [], color="#4C72B0", lw=2, label=_text("instruction_stream")),
           Line2D([], [], color="#C44E52", lw=2, label=_text("data_stream")),
           Patch(color="#55A868", label=_text("processing_element"))]
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
                  [_text("replica", d=d) for d in range(data)] if data <= 8 else [""] * data)
    ax.set_yticks([pipeline - 1 - s + 0.42 for s in range(pipeline)], [f"stage {s}" for s in range(pipeline)])
    ax.tick_params(length=0)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_title(_text("grid_title", data=data, tensor=tensor, pipeline=pipeline, total=data * tensor * pipeline))
    return ax
