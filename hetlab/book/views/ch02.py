"""Chapter 2 (concepts): tasks against devices, with the work/span bounds drawn on the Gantt chart."""
from __future__ import annotations

from functools import lru_cache

from hetlab import plotting as P
from hetlab.devices import identical
from hetlab.schedulers import bounds as WS
from hetlab.schedulers.list_scheduling import earliest_free
from hetlab.tasks import Task, TaskGraph, critical_path, independent_tasks, random_dag
from hetlab.widgets import Explorer, dropdown, int_slider

__all__ = ['tasks_vs_devices_explorer', 'scaling_figure', 'example_graph', 'dish_graph', 'dish_figure', 'draw_dag',
           'transformer_figure', 'tasks_vs_devices_figure']

SPEED = 10.0
#: Colours of tasks on and off the critical path (the Gantt charts' too).
CRITICAL, OTHER = P.CRITICAL_COLOUR, P.OTHER_COLOUR


def dish_graph() -> TaskGraph:
    """The chapter's dish: wash, then cut / marinate / make stock side by side, then plate (times 1, 4, 2, 3, 1)."""
    side = ("切", "腌", "备汤")
    return TaskGraph([Task("洗", 1), Task("切", 4), Task("腌", 2), Task("备汤", 3), Task("装盘", 1)],
                     [("洗", x) for x in side] + [(x, "装盘") for x in side])


def draw_dag(graph: TaskGraph, ax=None, *, title: str | None = None, figsize=(4, 3)):
    """A small task graph drawn in layers (a task's layer = most edges on a path into it), left to right;
    each node shows the task's name and time, the critical path is thick and orange."""
    from matplotlib.patches import FancyArrowPatch

    ax = P.new_axes(ax, figsize=figsize)
    n = len(graph.tasks)
    if n > 30:
        raise ValueError(f"graph must have at most 30 tasks to be drawn, got {n}")
    layer = [0] * n
    for i in graph.order:
        layer[i] = max((layer[p] + 1 for p in graph.preds[i]), default=0)
    rows: dict[int, list[int]] = {}
    for i in range(n):
        rows.setdefault(layer[i], []).append(i)
    pos = {i: (x, (len(members) - 1) / 2 - k) for x, members in rows.items() for k, i in enumerate(members)}
    on_path = set(critical_path(graph)[1])
    path_edges = set(zip(critical_path(graph)[1], critical_path(graph)[1][1:]))
    for src, dst in graph.edges:
        hot = (src, dst) in path_edges
        ax.add_patch(FancyArrowPatch(pos[graph.index[src]], pos[graph.index[dst]], arrowstyle="-|>",
                                     mutation_scale=12, shrinkA=20, shrinkB=20, lw=2.4 if hot else 1.0,
                                     color=CRITICAL if hot else "0.45", zorder=1))
    for i, task in enumerate(graph.tasks):
        hot = task.name in on_path
        ax.text(*pos[i], f"{task.name}\n{task.work:g}", ha="center", va="center", fontsize=10, zorder=3,
                color="white", bbox=dict(boxstyle="round,pad=0.45", fc=CRITICAL if hot else OTHER,
                                         ec="black" if hot else "none", lw=1.2))
    xs = [x for x, _ in pos.values()]
    ys = [y for _, y in pos.values()]
    ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)
    ax.set_ylim(min(ys) - 0.6, max(ys) + 0.6)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def _numbered(p: int, prefix: str, speed: float = 1.0) -> list:
    """``p`` identical devices named from 1 (``"师傅 1"`` ...), as the prose counts them."""
    from hetlab._validate import check_int
    from hetlab.devices import Device

    return [Device(f"{prefix} {k + 1}", "CPU", speed) for k in range(check_int("p", p, low=1, high=64))]


def _critical_legend(ax, extra=(), *, with_path: bool = True) -> None:
    from matplotlib.patches import Patch

    handles = ([Patch(color=CRITICAL, label=P.label("关键路径上的任务", "on the critical path")),
                Patch(color=OTHER, label=P.label("其他任务", "other tasks"))] if with_path else []) + list(extra)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def dish_figure(devices: tuple[int, ...] = (2, 3)):
    """The dish's task graph (critical path orange) beside its greedy Gantt charts on each device count,
    with the span ``D`` and the lower bound ``max(W/P, D)`` marked. Returns the axes."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from hetlab._validate import check_int

    if not isinstance(devices, tuple) or not devices:
        raise TypeError(f"devices must be a non-empty tuple of device counts, got {devices!r}")
    devices = tuple(check_int("devices", p, low=1, high=8) for p in devices)
    P.use_cjk_font()
    graph = dish_graph()
    d = WS.span(graph)
    fig = plt.figure(figsize=(10, 1.2 + 1.3 * len(devices)), layout="constrained")
    grid = fig.add_gridspec(len(devices), 2, width_ratios=[1, 2.2])
    dag_ax = fig.add_subplot(grid[:, 0])
    draw_dag(graph, dag_ax, title=P.label(f"任务图：关键路径（橙色）长 D = {d:g}",
                                          f"task graph: critical path (orange) D = {d:g}"))
    axes = [dag_ax]
    horizon = max(earliest_free(graph, identical(p)).makespan for p in devices)
    for k, p in enumerate(devices):
        ax = fig.add_subplot(grid[k, 1])
        s = earliest_free(graph, _numbered(p, "师傅")).validate()
        P.gantt(s, ax, xmax=horizon, title=P.label(f"{p} 位师傅：贪心完工时间 {s.makespan:g}",
                                                   f"{p} cooks: greedy makespan {s.makespan:g}"),
                critical=True, show_deps="critical")
        for text in ax.texts:
            text.set_fontsize(9)
        b = WS.bounds(graph, p)
        same = abs(s.makespan - b.lower) < 1e-9
        ax.axvline(b.lower, color="#2ca02c", lw=2.2 if same else 1.5, ls=":", zorder=0.5 if same else 2)
        extra = [Line2D([], [], color="#2ca02c", lw=1.5, ls=":",
                        label=P.label(f"下界 max(W/P, D) = {b.lower:g}", f"lower bound {b.lower:g}")),
                 Line2D([], [], color="black", lw=0.8, ls="--",
                        label=P.label("贪心完工时间（= 下界，两线重合）" if same else "贪心完工时间",
                                      "greedy makespan (= lower bound)" if same else "greedy makespan"))]
        if k < len(devices) - 1:
            ax.set_xlabel("")
        _critical_legend(ax, extra)
        axes.append(ax)
    return axes


def transformer_figure(**layer):
    """The operator graph of one Transformer layer (:func:`hetlab.workloads.opgraphs.transformer_layer`, keyword
    arguments passed on), drawn in layers with each operator's time in microseconds and the critical path
    in orange. Returns the axes."""
    from hetlab.workloads.opgraphs import transformer_layer

    graph = transformer_layer(**layer)
    d, w = WS.span(graph), WS.work(graph)
    P.use_cjk_font()
    return draw_dag(graph, figsize=(11, 2.8), title=P.label(
        f"一层 Transformer 的算子图（时长单位：微秒）：关键路径（橙色）D = {d:.1f}，W = {w:.1f}，W/D = {w / d:.2f}",
        f"one Transformer layer (microseconds): critical path (orange) D = {d:.1f}, W = {w:.1f}, W/D = {w / d:.2f}"))


@lru_cache(maxsize=64)
def example_graph(shape: str, tasks: int):
    """The chapter's example graphs: ``"independent"`` tasks of uneven size, or a random ``"dag"``."""
    if shape == "independent":
        import numpy as np

        return independent_tasks(np.random.default_rng(2).uniform(5.0, 30.0, size=tasks).round(1))
    if shape == "dag":
        return random_dag(tasks, mean_degree=1.5, work=(5.0, 30.0), data=(0.0, 0.0), seed=3)
    raise ValueError(f"shape must be 'independent' or 'dag', got {shape!r}")


def _tasks_devices_draw(ax, tasks: int, devices: int, shape: str) -> str:
    """The widget's chart: greedy Gantt chart on devices 1..P with the two bounds; returns the readout."""
    from matplotlib.lines import Line2D

    graph = example_graph(shape, tasks)
    s = earliest_free(graph, _numbered(devices, "设备", SPEED)).validate()
    b = WS.bounds(graph, devices, speed=SPEED)
    P.gantt(s, ax, xmax=b.upper, critical=True, show_deps="critical" if shape == "dag" else False,
            fit_names=True, title=P.label(f"{tasks} 个任务、{devices} 台设备：贪心调度 {s.makespan:.2f}",
                                          f"{tasks} tasks, {devices} devices: greedy {s.makespan:.2f}"))
    lower = ax.axvline(b.lower, color="#2ca02c", lw=1.5, ls=":", label=P.label("下界 max(W/P, D)", "lower"))
    upper = ax.axvline(b.upper, color="crimson", lw=1.5, ls=":", label=P.label("上界 W/P + D", "upper"))
    done = Line2D([], [], color="black", lw=0.8, ls="--", label=P.label("贪心完工时间", "greedy makespan"))
    _critical_legend(ax, [lower, done, upper], with_path=shape == "dag")
    return (f"工作量 W = {b.work:.2f}，跨度 D = {b.span:.2f}，平均并行度 W/D = {b.parallelism:.2f}，"
            f"峰值宽度 {WS.peak_width(graph)}\n"
            f"下界 max(W/P, D) = {b.lower:.2f} ≤ 贪心完工时间 = {s.makespan:.2f} ≤ 上界 W/P + D = {b.upper:.2f}")


def tasks_vs_devices_figure(shape: str = "dag", tasks: int = 16, devices: int = 5, ax=None):
    """The widget's chart as a static figure (same devices, colours, bounds and legend). Returns the axes."""
    from hetlab._validate import check_int

    if shape not in ("independent", "dag"):
        raise ValueError(f"shape must be 'independent' or 'dag', got {shape!r}")
    tasks = check_int("tasks", tasks, low=1, high=16)
    devices = check_int("devices", devices, low=1, high=8)
    P.use_cjk_font()
    ax = P.new_axes(ax, figsize=(8, 3.2))
    _tasks_devices_draw(ax, tasks, devices, shape)
    return ax


def tasks_vs_devices_explorer() -> Explorer:
    """n tasks on P identical devices under greedy list scheduling, against max(W/P, D) and W/P + D."""
    draw = _tasks_devices_draw
    shapes = [("互不依赖的任务", "independent"), ("有依赖的任务图", "dag")]
    return Explorer(draw, {"tasks": int_slider("任务数 n", 1, 16, 8),
                           "devices": int_slider("设备数 P", 1, 8, 3),
                           "shape": dropdown("任务形状", shapes, "independent")},
                    figsize=(8, 3.2))


def scaling_figure(shape: str = "dag", tasks: int = 16, p_max: int = 8, ax=None):
    """Greedy makespan on P = 1..p_max identical devices against max(W/P, D) and W/P + D (a static figure)."""
    from hetlab._validate import check_int

    p_max = check_int("p_max", p_max, low=1, high=64)
    graph = example_graph(shape, check_int("tasks", tasks, low=1, high=200))
    ps = list(range(1, p_max + 1))
    made = [earliest_free(graph, identical(p, speed=SPEED)).makespan for p in ps]
    b = [WS.bounds(graph, p, speed=SPEED) for p in ps]
    ax = P.new_axes(ax, figsize=(7, 3.2))
    ax.fill_between(ps, [x.lower for x in b], [x.upper for x in b], color="0.9",
                    label=P.label("贪心调度可能落在的范围", "where a greedy schedule can land"))
    ax.plot(ps, [x.lower for x in b], ":", color="#2ca02c", label=P.label("下界 max(W/P, D)", "lower max(W/P, D)"))
    ax.plot(ps, [x.upper for x in b], ":", color="crimson", label=P.label("上界 W/P + D", "upper W/P + D"))
    ax.plot(ps, made, "o-", color="black", label=P.label("贪心调度的完工时间", "greedy makespan"))
    ax.axvline(b[0].parallelism, color="0.5", lw=1, ls="--")
    ax.text(b[0].parallelism, ax.get_ylim()[1] * 0.95, P.label(f" W/D = {b[0].parallelism:.2f}", f" W/D = "
            f"{b[0].parallelism:.2f}"), color="0.3", fontsize=8, va="top")
    ax.set_xlabel(P.label("设备数 P", "devices P"))
    ax.set_ylabel(P.label("完工时间（时间单位）", "makespan (time units)"))
    peak = WS.peak_width(graph)
    if peak <= p_max:
        ax.axvline(peak, color="#DD8452", lw=1, ls="--")
        ax.text(peak, ax.get_ylim()[1] * 0.80, P.label(f" 峰值宽度 = {peak}", f" peak width = {peak}"),
                color="#DD8452", fontsize=8, va="top")
    # The title describes this graph only: the knee of the greedy curve is no law (chapter 2 counts 16 of 20).
    reach = next((p for p, t, x in zip(ps, made, b) if p >= x.parallelism and t <= x.lower * (1 + 1e-9)), None)
    where = (P.label(f"贪心从 P = {reach} 起停在 D", f"greedy stays at D from P = {reach}") if reach
             else P.label(f"贪心到 P = {p_max} 仍高于 D", f"greedy still above D at P = {p_max}"))
    ax.set_title(P.label(f"这张 {tasks} 个任务的图：下界在 P = W/D 处拐平，",
                         f"this {tasks}-task graph: the lower bound flattens at P = W/D; ") + where)
    ax.legend(fontsize=8, frameon=False)
    return ax


#: (chapter, factory) for each widget of this module.
VIEWS = [(2, tasks_vs_devices_explorer)]
