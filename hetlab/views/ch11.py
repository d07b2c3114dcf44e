"""Chapter 11 (the Python demo): the article's dishes under each policy."""
from __future__ import annotations

from .. import plotting as P
from .. import schedulers as S
from ..widgets import Explorer, dropdown, int_slider
from ..workloads import article_tasks
from .ch01 import _kitchen_schedule, _preference_legend

__all__ = ['article_policies', 'policy_readout', 'LABELS', 'POLICY_DEFINITIONS', 'policy_table', 'demo_gantts']

#: The policies the chapter compares, in the order the dropdown lists them.
NAMES = ["article demo", "round-robin", "by affinity", "EFT", "LPT", "work stealing", "HEFT", "optimal"]
#: Chinese labels (HEFT, EFT and LPT keep their names; the others as chapter 5 names them).
LABELS = {"article demo": "演示程序", "round-robin": "轮转", "by affinity": "按专长", "EFT": "EFT", "LPT": "LPT",
          "work stealing": "工作窃取", "HEFT": "HEFT", "optimal": "最优解"}


def policy_readout(policy: str, gpu_speed: int) -> str:
    """The widget's readout for one setting: makespan, the optimum, the gap and both serial baselines.

    Both baselines run all 114 work units on one device: the CPU (speed 10, the article's choice)
    and the GPU (the fastest device at ``gpu_speed``)."""
    if policy not in NAMES:
        raise ValueError(f"policy must be one of {NAMES}, got {policy!r}")
    s, best = _kitchen_schedule(policy, gpu_speed), _kitchen_schedule("optimal", gpu_speed)
    cpu = S.serial(s.graph, s.devices, device="CPU").makespan
    fastest = max(s.devices, key=lambda d: d.speed).name
    solo = S.serial(article_tasks(), s.devices, device=fastest).makespan
    return (f"{LABELS[policy]}，GPU 速度 {gpu_speed:g}：完成时间 {s.makespan:.3f}，最优 {best.makespan:.3f}，"
            f"差距 {(s.makespan - best.makespan) / best.makespan:.1%}；"
            f"加速比 {cpu / s.makespan:.2f}x（以 CPU 串行为基线）、"
            f"{solo / s.makespan:.2f}x（以最快的 {fastest} 串行为基线）。{POLICY_DEFINITIONS[policy]}")


def article_policies() -> Explorer:
    """The article's eight dishes under each policy, with the gap to the optimum; a slider
    changes the GPU cook's speed (the article's is 20)."""
    def draw(ax, policy: str, gpu_speed: int) -> str:
        s = _kitchen_schedule(policy, gpu_speed)
        xmax = max(_kitchen_schedule(name, gpu_speed).makespan for name in NAMES)   # the slowest policy here
        P.gantt(s, ax, xmax=xmax,
                title=P.label(f"{LABELS[policy]}：完成时间 {s.makespan:.3f}", f"{policy}: makespan {s.makespan:.3f}"))
        _preference_legend(ax)
        return policy_readout(policy, gpu_speed)

    return Explorer(draw, {"policy": dropdown("策略", [(LABELS[n], n) for n in NAMES]),
                           "gpu_speed": int_slider("GPU 速度", 5, 40, 20)},
                    figsize=(8, 2.6))


#: One sentence per policy of the chapter's table (Chinese), in the order of :data:`NAMES`.
POLICY_DEFINITIONS = {
    "article demo": "演示程序的做法：按列表顺序，每道菜交给最早有空的设备（平局按设备名），不看速度。",
    "round-robin": "轮转：第 i 道菜交给第 i mod 3 台设备，开工前就定好，不看大小也不看速度。",
    "by affinity": "按专长：每道菜交给它偏好的那类设备，同类有几台就轮流，不看那台设备有多忙。",
    "EFT": "EFT（Earliest Finish Time）：按列表顺序，每道菜交给能让它最早做完的设备。",
    "LPT": "LPT（Longest Processing Time first）：先按最快耗时从大到小排序，再逐道按 EFT 派。",
    "work stealing": "工作窃取：先轮流发到各设备的队列，谁闲下来就从别人的队列里随机偷一道（第 5 章）。",
    "HEFT": "HEFT：按向上秩排序、按最早完成时刻放置并允许插空（第 9 章）；菜互不依赖时向上秩就是平均耗时。",
    "optimal": "最优解：分支定界枚举 3^8 种分法，求出最短的完成时间。",
}


def policy_table(gpu_speed: float = 20.0) -> str:
    """The chapter's results table as markdown: makespan, speed-up over the CPU and over the GPU run
    alone, and the gap to the optimum, for every policy, with the kitchen's GPU at ``gpu_speed``."""
    from .._validate import check_positive

    gpu_speed = check_positive("gpu_speed", gpu_speed)
    best = _kitchen_schedule("optimal", gpu_speed)
    cpu = S.serial(best.graph, best.devices, device="CPU").makespan
    gpu = S.serial(best.graph, best.devices, device="GPU").makespan
    rows = ["| 策略 | 完成时间 | 相对 CPU 串行 | 相对 GPU 串行 | 距最优 |", "|---|---:|---:|---:|---:|"]
    for name in NAMES:
        t = _kitchen_schedule(name, gpu_speed).makespan
        rows.append(f"| {LABELS[name]} | {t:.3f} | {cpu / t:.2f}x | {gpu / t:.2f}x | "
                    f"{(t - best.makespan) / best.makespan:.1%} |")
    rows.append(f"| 下界 | {S.lower_bound(best.graph, best.devices):.3f} | | | |")
    return "\n".join(rows)


def demo_gantts(policies: tuple[str, ...] = ("article demo", "LPT", "optimal"), gpu_speeds=(20, 40)):
    """A static grid of Gantt charts: one row per policy, one column per GPU speed; bars are coloured
    by the dish's preferred device (the row is the device that made it). Returns the figure."""
    import matplotlib.pyplot as plt

    for name in policies:
        if name not in NAMES:
            raise ValueError(f"policies must be drawn from {NAMES}, got {name!r}")
    if not policies or not gpu_speeds:
        raise ValueError("policies and gpu_speeds must each name at least one value")
    P.use_cjk_font()
    size = (5.2 * len(gpu_speeds), 0.4 + 1.45 * len(policies))
    fig, axes = plt.subplots(len(policies), len(gpu_speeds), figsize=size, layout="constrained", sharex="col",
                             squeeze=False)
    for c, speed in enumerate(gpu_speeds):
        xmax = max(_kitchen_schedule(name, float(speed)).makespan for name in policies)
        for r, name in enumerate(policies):
            s, ax = _kitchen_schedule(name, float(speed)), axes[r, c]
            P.gantt(s, ax, xmax=xmax, xlabel="" if r < len(policies) - 1 else None, title=P.label(
                f"{LABELS[name]}，GPU 速度 {speed:g}：完成 {s.makespan:.3f}",
                f"{name}, GPU speed {speed:g}: makespan {s.makespan:.3f}"))
            if c < len(gpu_speeds) - 1 or r > 0:
                ax.get_legend().remove()
            else:
                _preference_legend(ax)
    return fig


#: (chapter, factory) for each widget of this module.
VIEWS = [(11, article_policies)]
