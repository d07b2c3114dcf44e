"""CPOP, Critical-Path-on-a-Processor (Topcuoglu, Hariri & Wu, IEEE TPDS 2002), and its downward rank.

HEFT's companion in the same paper. A task's priority is ``rank_u + rank_d``: the length of the
longest path (mean run times, mean transfer costs) from the entry task through it to the exit task.
Tasks whose priority equals the entry task's lie on the critical path; they all go to the single
processor that runs the whole path fastest, so the path pays no transfer between its own tasks.
The other tasks go, in priority order, to the processor where they finish earliest (insertion-based,
like HEFT). On the paper's ten-task example (Fig. 2) the schedule length is 86 (HEFT: 80).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hetlab.devices import Device
from hetlab.schedule import Schedule
from hetlab.schedulers._core import _Problem, _problem
from hetlab.schedulers.heft import _heft_independent_speed_only, _insertion, _means, _upward_rank
from hetlab.tasks import Task, TaskGraph

__all__ = ["cpop", "downward_rank"]


def _downward_rank(prob: _Problem) -> np.ndarray:
    g = prob.graph
    if not g.edges:
        return np.zeros(prob.n)              # no predecessors: every task is an entry
    mean_cost, lat, inv = _means(prob)
    # Python floats in the loop, as in HEFT's upward rank; the same IEEE operations in the same order.
    mean = mean_cost.tolist()
    rank = [0.0] * prob.n
    preds, pred_data = g.preds, g.pred_data
    for i in g.order:
        best = 0.0
        for p, data in zip(preds[i], pred_data[i]):
            value = rank[p] + mean[p] + lat + data * inv
            if value > best:
                best = value
        rank[i] = best
    return np.array(rank)


def downward_rank(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> dict[str, float]:
    """CPOP's downward rank: ``rank_d(entry) = 0`` and
    ``rank_d(i) = max over predecessors p (rank_d(p) + mean_cost(p) + mean_comm(p, i))``: the longest
    mean-cost path from an entry task to ``i``, excluding ``i`` itself (Topcuoglu, Hariri & Wu 2002).

    In the paper's example n2 follows the entry n1 only: n1's mean run time (14 + 16 + 9) / 3 = 13 plus the
    edge's communication cost 18:

    >>> from hetlab.workloads import heft_paper_example
    >>> ranks = downward_rank(*heft_paper_example())
    >>> ranks["n1"], ranks["n2"]
    (0.0, 31.0)

    See also
    --------
    hetlab.schedulers.heft.upward_rank : the other half of CPOP's priority.

    References
    ----------
    H. Topcuoglu, S. Hariri and M.-Y. Wu, "Performance-effective and low-complexity task scheduling for
    heterogeneous computing", IEEE Transactions on Parallel and Distributed Systems 13(3), 260-274, 2002.
    """
    prob = _problem(graph, devices)
    return {t.name: float(r) for t, r in zip(prob.graph.tasks, _downward_rank(prob))}


def _critical_path(prob: _Problem, priority: np.ndarray) -> list[int]:
    """Entry task of highest priority, then at each step the successor whose priority equals |CP|."""
    g = prob.graph
    length = float(priority.max())
    # Relative to |CP| alone: priorities on the path differ from it only by the rounding of their sums, and
    # an absolute floor would put every successor on the path when the times are tiny (1e-12).
    tol = 1e-9 * abs(length)
    preds, rank = g.preds, priority.tolist()
    node = max((i for i in range(prob.n) if not preds[i]), key=lambda i: (rank[i], -i))
    path = [node]
    while g.succs[node]:
        on_path = [s for s in g.succs[node] if abs(priority[s] - length) <= tol]
        if not on_path:     # the path ends at a task with no successor on it; only rounding gets here
            break
        node = on_path[0]
        path.append(node)
    return path


def cpop(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, order: str = "rank_u+rank_d",
         pin: bool = True) -> Schedule:
    """Critical-Path-on-a-Processor (Topcuoglu, Hariri & Wu, IEEE TPDS 2002).

    Priority ``rank_u + rank_d`` (:func:`~hetlab.schedulers.upward_rank`, :func:`downward_rank`);
    the critical path is followed from the entry task through successors whose priority equals the
    entry's; the critical-path processor is the device with the smallest total run time of those
    tasks (ties: earlier-listed device). Ready tasks are taken in decreasing priority (ties: lower
    index): a critical-path task goes to the critical-path processor, any other task to the device
    where it finishes earliest; both may fill an idle gap between placed tasks (insertion-based).
    If no single device can run every critical-path task, those tasks are placed like the others.

    Two keyword options take CPOP apart, for ablation experiments (the defaults are the paper's CPOP):
    ``order="rank_u"`` takes ready tasks by HEFT's upward rank instead of ``rank_u + rank_d`` (the
    critical path and its processor are still found from ``rank_u + rank_d``); ``pin=False`` places
    critical-path tasks like the others (earliest finish on any device) instead of on the
    critical-path processor.

    ``info`` holds ``"priority"``, ``"upward_rank"``, ``"downward_rank"`` (name -> value),
    ``"critical_path"`` (task names) and ``"cp_device"`` (its name, or None).

    Ready tasks are placed with HEFT's engine (each device's idle gaps in a searchable list); on independent
    tasks with run time work / speed the schedule is HEFT's (``rank_d`` is 0 and the critical path is the first
    task taken), computed by HEFT's fast path.

    The paper's example: critical path n1 -> n2 -> n9 -> n10 on P2 (54 there, 66 on P1, 63 on P3), schedule
    length 86 (its Fig. 4(b); HEFT: 80):

    >>> from hetlab.workloads import heft_paper_example
    >>> s = cpop(*heft_paper_example())
    >>> s.info["critical_path"], s.info["cp_device"], s.makespan
    (['n1', 'n2', 'n9', 'n10'], 'P2', 86.0)

    See also
    --------
    downward_rank, hetlab.schedulers.heft.upward_rank : the two halves of the priority.
    hetlab.schedulers.heft.heft : the same paper's other algorithm.

    References
    ----------
    H. Topcuoglu, S. Hariri and M.-Y. Wu, "Performance-effective and low-complexity task scheduling for
    heterogeneous computing", IEEE Transactions on Parallel and Distributed Systems 13(3), 260-274, 2002.
    """
    if not isinstance(order, str):
        raise TypeError(f"order must be 'rank_u+rank_d' or 'rank_u', got {type(order).__name__} {order!r:.80}")
    if order not in ("rank_u+rank_d", "rank_u"):
        raise ValueError(f"order must be 'rank_u+rank_d' or 'rank_u', got {order!r}")
    if not isinstance(pin, bool):
        raise TypeError(f"pin must be True or False, got {type(pin).__name__} {pin!r:.80}")
    prob = _problem(graph, devices)
    g, n = prob.graph, prob.n
    costs = prob.costs
    up, down = _upward_rank(prob), _downward_rank(prob)
    priority = up + down
    path = _critical_path(prob, priority)
    totals = costs[path].sum(axis=0)
    cp_device = int(np.argmin(totals)) if np.isfinite(totals).any() else -1
    rank = priority if order == "rank_u+rank_d" else up
    if not g.edges and prob.speed_only:
        # Independent tasks: rank_d is 0, so the priority is HEFT's rank; the critical path is the first task
        # taken, and the device where it runs fastest (the critical-path processor) is where it finishes first.
        # So CPOP's schedule is HEFT's, and HEFT's O(n (k + log m)) path for these tasks gives it.
        device_of, start, end = _heft_independent_speed_only(prob, rank)
    else:
        pinned = None
        if cp_device >= 0 and pin:
            pinned = [-1] * n
            for i in path:
                pinned[i] = cp_device
        # HEFT's engine: each device's idle gaps in a searchable list, so placing a task costs a binary search
        # and a scan of the gaps too short for it, not a walk over every earlier task.
        device_of, start, end = _insertion(prob, rank, pinned)
    names = [t.name for t in g.tasks]
    info = {"priority": dict(zip(names, map(float, priority))), "upward_rank": dict(zip(names, map(float, up))),
            "downward_rank": dict(zip(names, map(float, down))), "critical_path": [names[i] for i in path],
            "cp_device": prob.devices[cp_device].name if cp_device >= 0 else None}
    return prob.schedule(device_of, start, end, "CPOP", info=info)
