"""The source article's Python demo as data, and its comparison with better policies.

>>> report = compare_policies()
>>> f"{report.serial:.2f} {report.parallel:.2f} {report.speedup:.2f}x"
'11.40 2.67 4.27x'
"""
from __future__ import annotations

from dataclasses import dataclass

from .devices import Device, kitchen
from .schedule import Schedule
from .tasks import Task, TaskGraph

__all__ = ["ARTICLE_TASKS", "article_tasks", "DemoReport", "compare_policies", "HEFT_PAPER_EXAMPLE",
           "heft_paper_example"]

#: (work, preferred device) of the article's eight dishes, in its order.
ARTICLE_TASKS = [(10, "CPU"), (20, "GPU"), (15, "NPU"), (8, "CPU"), (12, "GPU"), (25, "NPU"), (18, "CPU"), (6, "GPU")]


def article_tasks() -> TaskGraph:
    """The article's eight independent tasks ``t0 .. t7`` with their work and preferred device."""
    return TaskGraph(Task(f"t{i}", work, kind) for i, (work, kind) in enumerate(ARTICLE_TASKS))


@dataclass(frozen=True)
class DemoReport:
    """Serial and article-policy times, plus every better policy's schedule, the bound and the optimum."""

    serial: float
    parallel: float
    speedup: float
    schedules: dict[str, Schedule]
    lower_bound: float

    def table(self) -> str:
        rows = [f"{'policy':<16}{'makespan':>10}{'speed-up':>10}{'gap to optimum':>16}"]
        best = self.schedules["optimal"].makespan
        for name, s in self.schedules.items():
            gap = (s.makespan - best) / best
            rows.append(f"{name:<16}{s.makespan:>10.3f}{self.serial / s.makespan:>9.2f}x{gap:>15.1%}")
        rows.append(f"{'lower bound':<16}{self.lower_bound:>10.3f}")
        return "\n".join(rows)

    def text(self) -> str:
        head = (f"serial time (one CPU):        {self.serial:.2f}\n"
                f"parallel time (article demo): {self.parallel:.2f}\n"
                f"speed-up:                     {self.speedup:.2f}x\n")
        return head + "\n" + self.table()


def compare_policies(graph: TaskGraph | None = None, devices: list[Device] | None = None) -> DemoReport:
    """Run the article's demo and the library's policies on the same tasks (default: the article's)."""
    from . import schedulers as S

    graph = article_tasks() if graph is None else graph
    devices = kitchen() if devices is None else devices
    base = S.serial(graph, devices, device="CPU").validate()
    names = ["article demo", "round-robin", "by affinity", "EFT", "LPT", "work stealing", "HEFT", "optimal"]
    schedules = {name: S.POLICIES[name](graph, devices).validate() for name in names}
    demo = schedules["article demo"]
    return DemoReport(base.makespan, demo.makespan, demo.speedup(base), schedules, S.lower_bound(graph, devices))


#: Topcuoglu, Hariri & Wu (2002), Fig. 2 and Table 1: run time of tasks n1..n10 on P1..P3,
#: and the communication cost of each edge (paid only when the two tasks are on different processors).
HEFT_PAPER_EXAMPLE = {
    "costs": {1: (14, 16, 9), 2: (13, 19, 18), 3: (11, 13, 19), 4: (13, 8, 17), 5: (12, 13, 10),
              6: (13, 16, 9), 7: (7, 15, 11), 8: (5, 11, 14), 9: (18, 12, 20), 10: (21, 7, 16)},
    "edges": [(1, 2, 18), (1, 3, 12), (1, 4, 9), (1, 5, 11), (1, 6, 14), (2, 8, 19), (2, 9, 16), (3, 7, 23),
              (4, 8, 27), (4, 9, 23), (5, 9, 13), (6, 8, 15), (7, 10, 17), (8, 10, 11), (9, 10, 13)],
}


def heft_paper_example() -> tuple[TaskGraph, list[Device]]:
    """The ten-task, three-processor example of the HEFT paper, as a graph and devices.

    Links have zero latency and unit bandwidth, so an edge's data equals its published cost.
    """
    from .devices import Link

    devices = [Device(f"P{j}", "CPU", link=Link(0.0, 1.0)) for j in (1, 2, 3)]
    tasks = [Task(f"n{i}", times={f"P{j + 1}": c for j, c in enumerate(costs)})
             for i, costs in HEFT_PAPER_EXAMPLE["costs"].items()]
    edges = [(f"n{a}", f"n{b}", c) for a, b, c in HEFT_PAPER_EXAMPLE["edges"]]
    return TaskGraph(tasks, edges), devices
