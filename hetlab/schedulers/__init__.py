"""Scheduling policies: one function each, all called as ``policy(graph, devices, **options)``.

Every policy accepts a :class:`~hetlab.tasks.TaskGraph` (or a list of independent
:class:`~hetlab.tasks.Task`) and a sequence of :class:`~hetlab.devices.Device`, and
returns a :class:`~hetlab.schedule.Schedule`. Run times come from
:func:`~hetlab.tasks.execution_time`; an edge between tasks on different devices
costs the transfer time of its data, an edge on one device costs nothing.

The policies live in one module per family and are all re-exported here:

- :mod:`~hetlab.schedulers.static`: ``serial``, ``round_robin``, ``block``, ``by_affinity``, ``article_demo``;
- :mod:`~hetlab.schedulers.list_scheduling`: ``execute_plan``, ``earliest_free``, ``eft``, ``lpt``;
- :mod:`~hetlab.schedulers.heft`: ``heft``, ``upward_rank``;
- :mod:`~hetlab.schedulers.cpop`: ``cpop``, ``downward_rank``;
- :mod:`~hetlab.schedulers.work_stealing`: ``work_stealing``, ``StealEvent``;
- :mod:`~hetlab.schedulers.exact`: ``optimal``, ``lower_bound``.

>>> from hetlab.devices import kitchen
>>> from hetlab.tasks import TaskGraph, Task
>>> tasks = [Task(f"t{i}", w) for i, w in enumerate([10, 20, 15, 8, 12, 25, 18, 6])]
>>> round(article_demo(tasks, kitchen()).makespan, 2)
2.67
>>> round(lpt(tasks, kitchen()).makespan, 2)
2.6
"""
from __future__ import annotations

from collections.abc import Callable

from hetlab.schedule import Schedule
from hetlab.schedulers.cpop import cpop, downward_rank
from hetlab.schedulers.exact import lower_bound, optimal
from hetlab.schedulers.heft import heft, upward_rank
from hetlab.schedulers.host_aware import host_aware
from hetlab.schedulers.list_scheduling import COMPILED_FROM, FRESH_FROM, earliest_free, eft, execute_plan, lpt
from hetlab.schedulers.static import article_demo, block, by_affinity, round_robin, serial
from hetlab.schedulers.work_stealing import StealEvent, work_stealing
from hetlab.tasks import cost_matrix  # noqa: F401 -- hetlab.schedulers.cost_matrix worked before the split

__all__ = [
    "serial", "article_demo", "earliest_free", "round_robin", "block", "by_affinity", "eft", "lpt",
    "work_stealing", "heft", "upward_rank", "optimal", "execute_plan", "lower_bound", "StealEvent",
    "POLICIES", "COMPILED_FROM", "FRESH_FROM", "cpop", "downward_rank",
    "host_aware",
]

POLICIES: dict[str, Callable[..., Schedule]] = {
    "serial": serial,
    "article demo": article_demo,
    "earliest free": earliest_free,
    "round-robin": round_robin,
    "block": block,
    "by affinity": by_affinity,
    "EFT": eft,
    "LPT": lpt,
    "work stealing": work_stealing,
    "HEFT": heft,
    "CPOP": cpop,
    "optimal": optimal,
    "host_aware": host_aware,
}
