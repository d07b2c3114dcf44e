"""Chapter 11 (the Python demo): the article's dishes under each policy."""
from __future__ import annotations

from .. import plotting as P
from ..widgets import Explorer, dropdown, int_slider
from .ch01 import _kitchen_schedule

__all__ = ['article_policies']


def article_policies() -> Explorer:
    """The article's eight dishes under each policy, with the gap to the optimum; a slider
    changes the GPU cook's speed (the article's is 20)."""
    def draw(ax, policy: str, gpu_speed: float) -> str:
        s, best = _kitchen_schedule(policy, gpu_speed), _kitchen_schedule("optimal", gpu_speed)
        P.gantt(s, ax, xmax=_kitchen_schedule("round-robin", 5.0).makespan)
        return f"{policy}, GPU speed {gpu_speed:g}: makespan {s.makespan:.3f}, optimum {best.makespan:.3f}, " \
               f"gap {(s.makespan - best.makespan) / best.makespan:.1%}"

    names = ["article demo", "round-robin", "by affinity", "EFT", "LPT", "work stealing", "HEFT", "optimal"]
    return Explorer(draw, {"policy": dropdown("policy", names), "gpu_speed": int_slider("GPU speed", 5, 40, 20)},
                    figsize=(8, 2.6))


#: (chapter, factory) for each widget of this module.
VIEWS = [(11, article_policies)]
