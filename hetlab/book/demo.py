"""The source article's Python demo as data, and its comparison with better policies.

>>> report = compare_policies()
>>> f"{report.serial:.2f} {report.parallel:.2f} {report.speedup:.2f}x"
'11.40 2.67 4.27x'
"""
from __future__ import annotations

from dataclasses import dataclass

from hetlab._validate import check_fields, check_instance, check_positive, describe
from hetlab.devices import Device, check_devices, kitchen
from hetlab.schedule import Schedule
from hetlab.tasks import TaskGraph, as_graph
from hetlab.workloads import article_tasks, heft_paper_example

__all__ = ["DemoReport", "compare_policies", "trace_article_demo", "preference_kitchen", "article_tasks",
           "heft_paper_example"]

@dataclass(frozen=True)
class DemoReport:
    """Serial and article-policy times, plus every better policy's schedule, the bound and the optimum."""

    serial: float
    parallel: float
    speedup: float
    schedules: dict[str, Schedule]
    lower_bound: float

    def __post_init__(self) -> None:
        check_fields(self)
        check_instance("schedules", self.schedules, dict)
        for name, schedule in self.schedules.items():
            check_instance(f"schedules[{name!r}]", schedule, Schedule)
        if "optimal" not in self.schedules:
            raise ValueError(f"schedules must include 'optimal' (the table's reference), got {list(self.schedules)}")
        if self.schedules["optimal"].makespan <= 0:
            raise ValueError("schedules must take time: the optimal makespan is 0")
        for name in ("serial", "parallel", "speedup", "lower_bound"):
            check_positive(name, getattr(self, name))

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


def _graph(graph) -> TaskGraph:
    """``graph`` as a TaskGraph; a TypeError that names ``graph`` (not an inner name) otherwise."""
    if isinstance(graph, TaskGraph):
        return graph
    try:
        return as_graph(graph)
    except TypeError:
        raise TypeError(f"graph must be a TaskGraph or a list of Task, got {describe(graph)}") from None
    except ValueError as exc:   # a list of tasks that is not a graph (empty, duplicate names)
        raise ValueError(f"graph: {exc}") from None


def compare_policies(graph: TaskGraph | None = None, devices: list[Device] | None = None) -> DemoReport:
    """Run the article's demo and the library's policies on the same tasks (default: the article's)."""
    from hetlab import schedulers as S

    graph = article_tasks() if graph is None else _graph(graph)
    devices = kitchen() if devices is None else check_devices(devices)
    base = S.serial(graph, devices, device="CPU").validate()
    if base.makespan <= 0:
        raise ValueError("graph must hold some work: every task takes 0 time, so no speed-up is defined")
    keys = ["article_demo", "round_robin", "by_affinity", "eft", "lpt", "work_stealing", "heft", "optimal"]
    schedules = {S.POLICY_LABELS[key]: S.POLICIES[key](graph, devices).validate() for key in keys}   # by label
    demo = schedules["article demo"]
    return DemoReport(base.makespan, demo.makespan, demo.speedup(base), schedules, S.lower_bound(graph, devices))


def trace_article_demo(graph: TaskGraph | None = None, devices: list[Device] | None = None) -> list[dict]:
    """Each step of the article's demo (see ``info["trace"]`` of
    :func:`~hetlab.schedulers.article_demo`): the popped entry and the preferred device's entry,
    showing why the re-routing test is never true."""
    from hetlab.schedulers import article_demo

    graph = article_tasks() if graph is None else _graph(graph)
    devices = kitchen() if devices is None else check_devices(devices)
    return article_demo(graph, devices).info["trace"]


def preference_kitchen(factor: float = 2.0) -> tuple[TaskGraph, list[Device]]:
    """The article's eight dishes and three cooks, where a preference really changes the run time.

    Each dish's operation kind is its preferred cook's kind (``Task.op == Task.kind``) and each
    cook runs its own kind ``factor`` times faster (``Device.affinity == {kind: factor}``): on its
    preferred cook a dish of work ``w`` takes ``w / (factor * speed)``, elsewhere ``w / speed``
    (a work discount of ``1 / factor``). ``factor=1`` gives the plain kitchen's run times.

    >>> graph, cooks = preference_kitchen(2.0)
    >>> [round(graph.tasks[0].work / c.speed_for(graph.tasks[0].op), 3) for c in cooks]   # t0 prefers the CPU
    [0.5, 0.5, 0.667]
    """
    from hetlab.tasks import Task
    from hetlab.workloads import ARTICLE_TASKS

    factor = check_positive("factor", factor)
    if factor < 1.0:
        raise ValueError(f"factor must be at least 1 (a preference speeds its cook up), got {factor!r}")
    graph = TaskGraph(Task(f"t{i}", work, kind, op=kind) for i, (work, kind) in enumerate(ARTICLE_TASKS))
    cooks = [Device(d.name, d.kind, d.speed, {d.kind: factor}) for d in kitchen()]
    return graph, cooks
