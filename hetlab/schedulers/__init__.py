"""Scheduling policies: one function each, all called as ``policy(graph, devices, **options)``.

Every policy accepts a :class:`~hetlab.tasks.TaskGraph` (or a list of independent
:class:`~hetlab.tasks.Task`) and a sequence of :class:`~hetlab.devices.Device`, and
returns a :class:`~hetlab.schedule.Schedule`. Run times come from
:func:`~hetlab.tasks.execution_time`; an edge between tasks on different devices
costs the transfer time of its data, an edge on one device costs nothing.

The policies live in one module per family and are all re-exported here:

- :mod:`~hetlab.schedulers.static`: ``serial``, ``round_robin``, ``block``, ``by_affinity``, ``article_demo``;
- :mod:`~hetlab.schedulers.list_scheduling`: ``central_queue`` (the one greedy engine, "whoever is free takes
  the next task"), ``earliest_free``, ``eft``, ``lpt``, ``execute_plan``;
- :mod:`~hetlab.schedulers.heft`: ``heft``, ``upward_rank``;
- :mod:`~hetlab.schedulers.cpop`: ``cpop``, ``downward_rank``;
- :mod:`~hetlab.schedulers.work_stealing`: ``work_stealing``, ``StealEvent``;
- :mod:`~hetlab.schedulers.exact`: ``optimal``;
- :mod:`~hetlab.schedulers.bounds`: ``lower_bound``, work and span, Brent's bound, ``staged_bound``.

:data:`POLICIES` maps a lower-case key to each policy, :data:`POLICY_LABELS` the same keys to the label
the policy gives its schedule. An unknown key raises :class:`UnknownPolicyError` (a ValueError and a
KeyError) that lists the valid keys.

>>> from hetlab.devices import kitchen
>>> from hetlab.tasks import TaskGraph, Task
>>> tasks = [Task(f"t{i}", w) for i, w in enumerate([10, 20, 15, 8, 12, 25, 18, 6])]
>>> round(article_demo(tasks, kitchen()).makespan, 2)
2.67
>>> round(POLICIES["lpt"](tasks, kitchen()).makespan, 2)
2.6
>>> POLICY_LABELS["lpt"]
'LPT'
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from hetlab.schedule import Schedule
from hetlab.schedulers.bounds import lower_bound
from hetlab.schedulers.cpop import cpop, downward_rank
from hetlab.schedulers.exact import optimal
from hetlab.schedulers.heft import heft, upward_rank
from hetlab.schedulers.host_aware import host_aware
from hetlab.schedulers.list_scheduling import (
    COMPILED_FROM,
    FRESH_FROM,
    central_queue,
    earliest_free,
    eft,
    execute_plan,
    lpt,
)
from hetlab.schedulers.static import article_demo, block, by_affinity, round_robin, serial
from hetlab.schedulers.work_stealing import StealEvent, work_stealing

__all__ = [
    "serial", "article_demo", "central_queue", "earliest_free", "round_robin", "block", "by_affinity", "eft",
    "lpt", "work_stealing", "heft", "upward_rank", "optimal", "execute_plan", "lower_bound", "StealEvent",
    "POLICIES", "POLICY_LABELS", "UnknownPolicyError", "COMPILED_FROM", "FRESH_FROM", "cpop", "downward_rank",
    "host_aware",
]


class UnknownPolicyError(KeyError, ValueError):
    """A policy key that :data:`POLICIES` does not hold (a KeyError for lookups, a ValueError for the contract)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class _Policies(Mapping):
    """A read-only mapping whose unknown keys raise :class:`UnknownPolicyError` naming the valid ones."""

    def __init__(self, policies: dict[str, Callable[..., Schedule]]) -> None:
        self._policies = dict(policies)

    def __getitem__(self, key: str) -> Callable[..., Schedule]:
        try:
            return self._policies[key]
        except (KeyError, TypeError):
            raise UnknownPolicyError(f"policy must be one of {', '.join(self._policies)}; got {key!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._policies)

    def __len__(self) -> int:
        return len(self._policies)

    def __repr__(self) -> str:
        return f"POLICIES({', '.join(self._policies)})"


#: Every policy by its key (lower case, words joined by ``_``, like the function names).
POLICIES: Mapping[str, Callable[..., Schedule]] = _Policies({
    "serial": serial,
    "article_demo": article_demo,
    "earliest_free": earliest_free,
    "round_robin": round_robin,
    "block": block,
    "by_affinity": by_affinity,
    "eft": eft,
    "lpt": lpt,
    "work_stealing": work_stealing,
    "heft": heft,
    "cpop": cpop,
    "optimal": optimal,
    "host_aware": host_aware,
})

#: The label each policy gives its schedules (``Schedule.policy``), for tables and legends; the book
#: translates them in its views.
POLICY_LABELS: dict[str, str] = {
    "serial": "serial", "article_demo": "article demo", "earliest_free": "earliest free",
    "round_robin": "round-robin", "block": "block", "by_affinity": "by affinity", "eft": "EFT", "lpt": "LPT",
    "work_stealing": "work stealing", "heft": "HEFT", "cpop": "CPOP", "optimal": "optimal",
    "host_aware": "host-aware",
}
