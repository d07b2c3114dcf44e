"""Chapter 9 (optimisation): policies on a task graph."""
from __future__ import annotations

from functools import lru_cache

from .. import plotting as P
from .. import schedulers as S
from ..devices import kitchen
from ..widgets import Explorer, dropdown, int_slider

__all__ = ['dag_balance']


@lru_cache(maxsize=32)
def _dag(n: int, seed: int):
    from ..tasks import random_dag

    return random_dag(n, mean_degree=1.5, work=(1.0, 10.0), data=(0.0, 4.0), seed=seed)


def dag_balance() -> Explorer:
    """A random task graph on the kitchen: policies against the critical path."""
    def draw(ax, policy: str, tasks: int, seed: int) -> str:
        from ..devices import Link
        from ..tasks import critical_path

        graph = _dag(tasks, seed)
        devices = kitchen(link=Link(0.0, 10.0))
        s = S.POLICIES[policy](graph, devices).validate()
        length, path = critical_path(graph, devices)
        P.gantt(s, ax, show_names=tasks <= 20)
        ax.axvline(length, color="crimson", ls=":", lw=1)
        return (f"{policy}: makespan {s.makespan:.2f}; critical path {length:.2f} ({len(path)} tasks); "
                f"lower bound {S.lower_bound(graph, devices):.2f}; imbalance {s.imbalance:.2f}")

    names = ["round-robin", "earliest free", "EFT", "HEFT", "work stealing"]
    return Explorer(draw, {"policy": dropdown("policy", names, "HEFT"),
                           "tasks": int_slider("tasks", 5, 40, 16), "seed": int_slider("seed", 0, 9, 0)},
                    figsize=(8, 2.8))


#: (chapter, factory) for each widget of this module.
VIEWS = [(9, dag_balance)]
