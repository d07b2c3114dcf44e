"""Chapter 2 (concepts): tasks against devices, with the work/span bounds drawn on the Gantt chart."""
from __future__ import annotations

from functools import lru_cache

from .. import plotting as P
from .. import workspan as WS
from ..devices import identical
from ..tasks import independent_tasks, random_dag
from ..widgets import Explorer, dropdown, int_slider

__all__ = ['tasks_vs_devices']

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
        return P.label(
            f"工作量 W = {b.work:.2f}，跨度 D = {b.span:.2f}，平均并行度 W/D = {b.parallelism:.2f}\n"
            f"下界 max(W/P, D) = {b.lower:.2f} ≤ 贪心 T_P = {s.makespan:.2f} ≤ 上界 W/P + D = {b.upper:.2f}",
            f"work W = {b.work:.2f}, span D = {b.span:.2f}, parallelism W/D = {b.parallelism:.2f}\n"
            f"lower max(W/P, D) = {b.lower:.2f} <= greedy T_P = {s.makespan:.2f} <= upper W/P + D = {b.upper:.2f}")

    shapes = [(P.label("互不依赖的任务", "independent tasks"), "independent"),
              (P.label("有依赖的任务图", "task graph (DAG)"), "dag")]
    return Explorer(draw, {"tasks": int_slider(P.label("任务数 n", "tasks n"), 1, 16, 8),
                           "devices": int_slider(P.label("设备数 P", "devices P"), 1, 8, 3),
                           "shape": dropdown(P.label("任务形状", "shape"), shapes, "independent")},
                    figsize=(8, 3.2))


#: (chapter, factory) for each widget of this module.
VIEWS = [(2, tasks_vs_devices)]
