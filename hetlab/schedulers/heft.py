"""HEFT, Heterogeneous Earliest Finish Time (Topcuoglu, Hariri & Wu, IEEE TPDS 2002), and its upward rank."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..devices import Device
from ..schedule import Schedule
from ..tasks import Task, TaskGraph
from ._core import _Problem, _problem
from .list_scheduling import _list_schedule

__all__ = ["heft", "upward_rank"]


def upward_rank(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> dict[str, float]:
    """HEFT's upward rank: ``rank(i) = mean_cost(i) + max over successors (mean_comm(i, s) + rank(s))``,
    with costs averaged over the devices that can run the task and transfers over ordered pairs
    of distinct devices (Topcuoglu, Hariri & Wu 2002)."""
    prob = _problem(graph, devices)
    ranks = _upward_rank(prob)
    return {t.name: float(r) for t, r in zip(prob.graph.tasks, ranks)}


def _upward_rank(prob: _Problem) -> np.ndarray:
    costs = prob.costs
    finite = np.isfinite(costs)
    mean_cost = np.where(finite, costs, 0.0).sum(axis=1) / finite.sum(axis=1)
    m = prob.m
    if m > 1:
        off = ~np.eye(m, dtype=bool)
        mean_latency = prob.latency[off].mean()
        mean_inverse = prob.inverse_bw[off].mean()
    else:
        mean_latency = mean_inverse = 0.0
    rank = mean_cost.copy()
    g = prob.graph
    for i in reversed(g.order):
        best = 0.0
        for s, data in zip(g.succs[i], g.succ_data[i]):
            value = mean_latency + data * mean_inverse + rank[s]
            if value > best:
                best = value
        rank[i] = mean_cost[i] + best
    return rank


def heft(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Heterogeneous Earliest Finish Time (Topcuoglu, Hariri & Wu, IEEE TPDS 2002).

    Tasks in decreasing upward rank (:func:`upward_rank`); each goes to the device that gives
    the earliest finish time, allowed to fill an idle gap between already placed tasks
    (insertion-based). ``info["upward_rank"]`` holds the ranks.
    """
    prob = _problem(graph, devices)
    rank = _upward_rank(prob)
    ranks = {t.name: float(r) for t, r in zip(prob.graph.tasks, rank)}
    return _list_schedule(prob, rank, "HEFT", insertion=True, info={"upward_rank": ranks})

