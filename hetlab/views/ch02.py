"""Chapter 2 (concepts): tasks against devices, with the work/span bounds drawn on the Gantt chart."""
from __future__ import annotations

from functools import lru_cache

from .. import plotting as P
from .. import workspan as WS
from ..devices import identical
from ..tasks import independent_tasks, random_dag
from ..widgets import Explorer, dropdown, int_slider

__all__ = ['tasks_vs_devices', 'scaling_figure', 'example_graph']

SPEED = 10.0


@lru_cache(maxsize=64)
def example_graph(shape: str, tasks: int):
    """The chapter's example graphs: ``"independent"`` tasks of uneven size, or a random ``"dag"``."""
    if shape == "independent":
        import numpy as np

        return independent_tasks(np.random.default_rng(2).uniform(5.0, 30.0, size=tasks).round(1))
    if shape == "dag":
        return random_dag(tasks, mean_degree=1.5, work=(5.0, 30.0), data=(0.0, 0.0), seed=3)
    raise ValueError(f"shape must be 'independent' or 'dag', got {shape!r}")


def tasks_vs_devices() -> Explorer:
    """n tasks on P identical devices under greedy list scheduling, against max(W/P, D) and W/P + D."""
    def draw(ax, tasks: int, devices: int, shape: str) -> str:
        from matplotlib.lines import Line2D

        graph = example_graph(shape, tasks)
        s = WS.greedy(graph, identical(devices, speed=SPEED, prefix="P")).validate()
        b = WS.bounds(graph, devices, speed=SPEED)
        P.gantt(s, ax, xmax=b.upper, show_deps=shape == "dag",
                title=P.label(f"{tasks} 个任务、{devices} 台设备：贪心调度 {s.makespan:.2f}",
                              f"{tasks} tasks, {devices} devices: greedy {s.makespan:.2f}"))
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        lower = ax.axvline(b.lower, color="#2ca02c", lw=1.5, ls=":", label=P.label("下界 max(W/P, D)", "lower"))
        upper = ax.axvline(b.upper, color="crimson", lw=1.5, ls=":", label=P.label("上界 W/P + D", "upper"))
        done = Line2D([], [], color="black", lw=0.8, ls="--", label=P.label("贪心完工时间", "greedy makespan"))
        ax.legend(handles=[lower, done, upper], loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8,
                  frameon=False)
        return (f"工作量 W = {b.work:.2f}，跨度 D = {b.span:.2f}，平均并行度 W/D = {b.parallelism:.2f}\n"
                f"下界 max(W/P, D) = {b.lower:.2f} ≤ 贪心 T_P = {s.makespan:.2f} ≤ 上界 W/P + D = {b.upper:.2f}")

    shapes = [("互不依赖的任务", "independent"), ("有依赖的任务图", "dag")]
    return Explorer(draw, {"tasks": int_slider("任务数 n", 1, 16, 8),
                           "devices": int_slider("设备数 P", 1, 8, 3),
                           "shape": dropdown("任务形状", shapes, "independent")},
                    figsize=(8, 3.2))


def scaling_figure(shape: str = "dag", tasks: int = 16, p_max: int = 8, ax=None):
    """Greedy makespan on P = 1..p_max identical devices against max(W/P, D) and W/P + D (a static figure)."""
    from .._validate import check_int

    p_max = check_int("p_max", p_max, low=1, high=64)
    graph = example_graph(shape, check_int("tasks", tasks, low=1, high=200))
    ps = list(range(1, p_max + 1))
    made = [WS.greedy(graph, identical(p, speed=SPEED)).makespan for p in ps]
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
    ax.set_title(P.label(f"{tasks} 个任务的任务图：加设备的收益在 P ≈ W/D 后消失",
                         f"{tasks}-task graph: extra devices stop helping beyond P = W/D"))
    ax.legend(fontsize=8, frameon=False)
    return ax


#: (chapter, factory) for each widget of this module.
VIEWS = [(2, tasks_vs_devices)]
