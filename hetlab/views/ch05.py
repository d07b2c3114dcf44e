"""Chapter 5 (runtime scheduling): policies on the kitchen."""
from __future__ import annotations

from .. import plotting as P
from .. import schedulers as S
from ..devices import kitchen
from ..widgets import Explorer, dropdown, int_slider, slider
from ..workloads import skewed_tasks

__all__ = ['policies']


def policies() -> Explorer:
    """Static vs dynamic vs work stealing on the kitchen: a policy dropdown and a task-count slider."""
    def draw(ax, policy: str, tasks: int, steal_latency: float) -> str:
        graph = skewed_tasks(tasks, spread=0.8, seed=7)
        devices = kitchen()
        options = {"steal_latency": steal_latency, "initial": "first"} if policy == "work stealing" else {}
        s = S.POLICIES[policy](graph, devices, **options).validate()
        base = S.serial(graph, devices, device="CPU")
        P.gantt(s, ax, show_names=tasks <= 16)
        text = f"{policy}: makespan {s.makespan:.2f}, speed-up {s.speedup(base):.2f}x, imbalance {s.imbalance:.2f}"
        if policy == "work stealing":
            text += f", steals {s.info['steals']} (failed {s.info['failed_steals']})"
        return text

    names = ["round-robin", "block", "by affinity", "earliest free", "EFT", "LPT", "work stealing"]
    return Explorer(draw, {"policy": dropdown("policy", names, "work stealing"),
                           "tasks": int_slider("tasks", 3, 60, 24),
                           "steal_latency": slider("steal latency", 0.0, 1.0, 0.05, 0.1)}, figsize=(8, 2.8))


#: (chapter, factory) for each widget of this module.
VIEWS = [(5, policies)]
