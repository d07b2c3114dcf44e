"""Chapter 11 (the Python demo): the article's dishes under each policy."""
from __future__ import annotations

from .. import plotting as P
from .. import schedulers as S
from ..widgets import Explorer, dropdown, int_slider
from ..workloads import article_tasks
from .ch01 import _kitchen_schedule

__all__ = ['article_policies', 'policy_readout', 'LABELS']

#: The policies the chapter compares, in the order the dropdown lists them.
NAMES = ["article demo", "round-robin", "by affinity", "EFT", "LPT", "work stealing", "HEFT", "optimal"]
#: Chinese labels (HEFT, EFT and LPT keep their names; the others as chapter 5 names them).
LABELS = {"article demo": "原文策略", "round-robin": "轮转", "by affinity": "按专长", "EFT": "EFT", "LPT": "LPT",
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
            f"{solo / s.makespan:.2f}x（以最快的 {fastest} 串行为基线）")


def article_policies() -> Explorer:
    """The article's eight dishes under each policy, with the gap to the optimum; a slider
    changes the GPU cook's speed (the article's is 20)."""
    def draw(ax, policy: str, gpu_speed: int) -> str:
        s = _kitchen_schedule(policy, gpu_speed)
        P.gantt(s, ax, xmax=_kitchen_schedule("round-robin", 5.0).makespan,
                title=P.label(f"{LABELS[policy]}：完成时间 {s.makespan:.3f}", f"{policy}: makespan {s.makespan:.3f}"))
        return policy_readout(policy, gpu_speed)

    return Explorer(draw, {"policy": dropdown("策略", [(LABELS[n], n) for n in NAMES]),
                           "gpu_speed": int_slider("GPU 速度", 5, 40, 20)},
                    figsize=(8, 2.6))


#: (chapter, factory) for each widget of this module.
VIEWS = [(11, article_policies)]
