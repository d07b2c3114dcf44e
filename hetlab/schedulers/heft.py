"""HEFT, Heterogeneous Earliest Finish Time (Topcuoglu, Hariri & Wu, IEEE TPDS 2002), and its upward rank."""
from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import numpy as np

from hetlab.devices import Device
from hetlab.schedule import Schedule
from hetlab.schedulers._core import _Problem, _problem
from hetlab.tasks import Task, TaskGraph

__all__ = ["heft", "upward_rank"]


def upward_rank(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> dict[str, float]:
    """HEFT's upward rank: ``rank(i) = mean_cost(i) + max over successors (mean_comm(i, s) + rank(s))``,
    with costs averaged over the devices that can run the task and transfers over ordered pairs
    of distinct devices (Topcuoglu, Hariri & Wu 2002).

    On the paper's example the entry task's rank is the length of the critical path by mean costs, 108
    (the paper's Table 2; n1: mean run time (14 + 16 + 9) / 3 = 13, and 95 along n1 -> n2 -> n9 -> n10):

    >>> from hetlab.workloads import heft_paper_example
    >>> ranks = upward_rank(*heft_paper_example())
    >>> ranks["n1"], round(ranks["n6"], 3)
    (108.0, 63.333)

    See also
    --------
    heft : schedules tasks in decreasing upward rank.
    hetlab.schedulers.cpop.downward_rank : the rank CPOP adds to it.

    References
    ----------
    H. Topcuoglu, S. Hariri and M.-Y. Wu, "Performance-effective and low-complexity task scheduling for
    heterogeneous computing", IEEE Transactions on Parallel and Distributed Systems 13(3), 260-274, 2002.
    """
    prob = _problem(graph, devices)
    ranks = _upward_rank(prob)
    return {t.name: float(r) for t, r in zip(prob.graph.tasks, ranks)}


def _means(prob: _Problem) -> tuple[np.ndarray, float, float]:
    """The averages both ranks use: each task's mean run time over the devices that can run it, and the mean
    latency and inverse bandwidth over ordered pairs of distinct devices (0 on one device)."""
    costs = prob.costs
    finite = np.isfinite(costs)
    mean_cost = np.where(finite, costs, 0.0).sum(axis=1) / finite.sum(axis=1)
    if prob.m < 2:
        return mean_cost, 0.0, 0.0
    off = ~np.eye(prob.m, dtype=bool)
    return mean_cost, float(prob.latency[off].mean()), float(prob.inverse_bw[off].mean())


def _upward_rank(prob: _Problem) -> np.ndarray:
    mean_cost, mean_latency, mean_inverse = _means(prob)
    g = prob.graph
    if not g.edges:
        return mean_cost                    # no successors: the rank is the mean run time
    # Python floats in the loop (numpy scalars are slow to index); the same IEEE operations in the same order.
    mean = mean_cost.tolist()
    rank = list(mean)
    succs, succ_data = g.succs, g.succ_data
    for i in reversed(g.order):
        best = 0.0
        for s, data in zip(succs[i], succ_data[i]):
            value = mean_latency + data * mean_inverse + rank[s]
            if value > best:
                best = value
        rank[i] = mean[i] + best
    return np.array(rank)


def heft(graph: TaskGraph | Sequence[Task], devices: Sequence[Device]) -> Schedule:
    """Heterogeneous Earliest Finish Time (Topcuoglu, Hariri & Wu, IEEE TPDS 2002).

    Tasks in decreasing upward rank (:func:`upward_rank`; ties: lower index, among ready tasks);
    each goes to the device that gives the earliest finish time (ties: earlier-listed device),
    allowed to fill an idle gap between already placed tasks (insertion-based).
    ``info["upward_rank"]`` holds the ranks.

    Each device keeps its idle gaps in a sorted list, so finding the earliest gap that fits is a
    binary search plus a scan of the gaps that are too short; with no gap to fill (always the case
    for independent tasks) a task goes after the device's last one in O(1). Independent tasks whose
    run time is work / speed take an O(n (k + log m)) path (k: distinct speeds).

    The paper's ten-task example takes 80 time units (its Fig. 4(a)); on two identical devices the longest of
    three independent tasks goes first, then the two others share the second device:

    >>> from hetlab.devices import identical
    >>> from hetlab.tasks import independent_tasks
    >>> from hetlab.workloads import heft_paper_example
    >>> heft(*heft_paper_example()).makespan
    80.0
    >>> [(p.task, p.device, p.start) for p in heft(independent_tasks([3.0, 2.0, 2.0]), identical(2)).placements()]
    [('T0', 'D0', 0.0), ('T1', 'D1', 0.0), ('T2', 'D1', 2.0)]

    See also
    --------
    upward_rank : the priority.
    hetlab.schedulers.cpop.cpop : the paper's companion, which pins the critical path to one device.

    References
    ----------
    H. Topcuoglu, S. Hariri and M.-Y. Wu, "Performance-effective and low-complexity task scheduling for
    heterogeneous computing", IEEE Transactions on Parallel and Distributed Systems 13(3), 260-274, 2002.
    """
    prob = _problem(graph, devices)
    rank = _upward_rank(prob)
    ranks = dict(zip((t.name for t in prob.graph.tasks), rank.tolist()))
    if not prob.graph.edges and prob.speed_only:
        device_of, start, end = _heft_independent_speed_only(prob, rank)
    else:
        device_of, start, end = _insertion(prob, rank)
    return prob.schedule(device_of, start, end, "HEFT", info={"upward_rank": ranks})


#: Gaps per block of a device's gap list: a scan skips whole blocks whose longest gap is too short.
_BLOCK = 16


class _Timeline:
    """One device's busy time for insertion-based scheduling.

    The idle gaps before ``tail`` (positive-length, disjoint, in time order) are kept in blocks of
    about :data:`_BLOCK`, each with its longest gap, so the search for the earliest gap that fits
    skips runs of short gaps a block at a time. Gaps shorter than every positive run time on the
    device are dropped at once. When zero-length tasks occur the positive busy slots are kept too,
    for where an instant may go.
    """

    __slots__ = ("tail", "horizon", "starts", "ends", "longest", "last", "slot_starts", "slot_ends", "keep_slots",
                 "shortest")

    def __init__(self, keep_slots: bool, shortest: float):
        self.shortest = shortest            # no positive run time on this device is shorter
        self.tail = 0.0
        self.horizon = -math.inf             # end of the last gap: from here on only the tail is free
        self.starts: list[list[float]] = []  # per block: gap starts
        self.ends: list[list[float]] = []    # per block: gap ends
        self.longest: list[float] = []       # per block: longest gap, fl(end - start)
        self.last: list[float] = []          # per block: its last gap's end (for the binary search)
        self.slot_starts: list[float] = []
        self.slot_ends: list[float] = []
        self.keep_slots = keep_slots

    def earliest(self, ready: float, duration: float) -> tuple[float, int, int]:
        """(earliest start t >= ready where [t, t + duration] fits, block and gap used, or -1, -1: after
        the last task). Same answer as scanning every busy slot from ``ready`` on."""
        if duration == 0:
            # An instant fits anywhere but strictly inside a busy slot; inside one it waits for its end.
            k = bisect_right(self.slot_ends, ready)
            if k < len(self.slot_ends) and self.slot_starts[k] < ready:
                return self.slot_ends[k], -1, -1
            return ready, -1, -1
        last = self.last
        b = bisect_right(last, ready)       # blocks whose gaps all end by ready cannot hold anything
        if b < len(last):
            starts, ends = self.starts[b], self.ends[b]
            for g in range(bisect_right(ends, ready), len(ends)):
                t = starts[g] if starts[g] > ready else ready
                if t + duration <= ends[g]:
                    return t, b, g
            longest = self.longest
            for later in range(b + 1, len(last)):
                # Every gap here starts after ready. Skip the block when even its longest gap is short
                # by more than rounding could hide (1e-15 relative, far above half an ulp).
                if longest[later] + 1e-15 * (last[later] + duration) < duration:
                    continue
                starts, ends = self.starts[later], self.ends[later]
                for g in range(len(ends)):
                    if starts[g] + duration <= ends[g]:
                        return starts[g], later, g
        return (ready if ready > self.tail else self.tail), -1, -1

    def place(self, t: float, end: float, b: int, g: int) -> None:
        """Mark [t, end] busy for a task of positive run time; ``b, g`` as returned by :meth:`earliest`."""
        # A gap no run time fits (left + shortest > right, the very test ``earliest`` makes, and rounding
        # is monotonic) can never be used: it is not kept, so scans never walk over it.
        shortest = self.shortest
        if b < 0:
            if self.tail + shortest <= t:
                if not self.last or len(self.ends[-1]) >= _BLOCK:
                    self.starts.append([])
                    self.ends.append([])
                    self.longest.append(0.0)
                    self.last.append(t)
                self.starts[-1].append(self.tail)
                self.ends[-1].append(t)
                self.last[-1] = t
                if t - self.tail > self.longest[-1]:
                    self.longest[-1] = t - self.tail
            self.tail = end
            if self.last:
                self.horizon = self.last[-1]
        else:
            starts, ends = self.starts[b], self.ends[b]
            left, right = starts[g], ends[g]
            pieces_s, pieces_e = [], []
            if left + shortest <= t:
                pieces_s.append(left)
                pieces_e.append(t)
            if end + shortest <= right:
                pieces_s.append(end)
                pieces_e.append(right)
            starts[g:g + 1] = pieces_s
            ends[g:g + 1] = pieces_e
            if not ends:
                del self.starts[b], self.ends[b], self.longest[b], self.last[b]
                self.horizon = self.last[-1] if self.last else -math.inf
            else:
                self.last[b] = ends[-1]
                self.horizon = self.last[-1]
                if right - left >= self.longest[b]:   # the longest may be gone; the pieces are shorter
                    self.longest[b] = max([e - s for s, e in zip(starts, ends)])
                if len(ends) > 2 * _BLOCK:
                    half = len(ends) // 2
                    self.starts[b + 1:b + 1] = [starts[half:]]
                    self.ends[b + 1:b + 1] = [ends[half:]]
                    del starts[half:], ends[half:]
                    self.last[b:b + 1] = [ends[-1], self.ends[b + 1][-1]]
                    self.longest[b:b + 1] = [max([e - s for s, e in zip(starts, ends)]),
                                             max([e - s for s, e in zip(self.starts[b + 1], self.ends[b + 1])])]
        if self.keep_slots:
            k = bisect_left(self.slot_starts, t)
            self.slot_starts.insert(k, t)
            self.slot_ends.insert(k, end)


def _insertion(prob: _Problem, rank: np.ndarray, pinned: Sequence[int] | None = None):
    """Insertion-based list scheduling on any graph, shared by HEFT and CPOP: ready tasks in decreasing
    ``rank`` (ties: lower index), each to the device and gap where it finishes earliest (ties: earlier-listed
    device), or, where ``pinned[i] >= 0``, to the earliest gap on that device."""
    g, n, m = prob.graph, prob.n, prob.m
    costs = prob.costs
    rows = costs.tolist()
    has_instants = bool((costs == 0).any())
    positive = np.where(costs > 0, costs, np.inf).min(axis=0).tolist()
    lines = [_Timeline(has_instants, positive[j]) for j in range(m)]
    finite = [[j for j, c in enumerate(row) if c != math.inf] for row in rows] if not np.isfinite(costs).all() \
        else None
    every = list(range(m))
    lat = prob.latency.tolist()
    inv = prob.inverse_bw.tolist()
    preds, pred_data, succs = g.preds, g.pred_data, g.succs
    device_of = [-1] * n
    start = [0.0] * n
    end = [0.0] * n
    priority = (-rank).tolist()
    missing = [len(p) for p in preds]
    ready = [(priority[i], i) for i in range(n) if missing[i] == 0]
    heapq.heapify(ready)
    pop, push = heapq.heappop, heapq.heappush
    zeros = [0.0] * m
    while ready:
        _, i = pop(ready)
        if preds[i]:
            # Same arithmetic as the vectorised form: (end + latency) + data * inverse bandwidth.
            arrive = None
            for p, data in zip(preds[i], pred_data[i]):
                dp = device_of[p]
                e, lrow, irow = end[p], lat[dp], inv[dp]
                times = [e + lrow[j] + data * irow[j] for j in range(m)]
                arrive = times if arrive is None else [a if a >= b else b for a, b in zip(arrive, times)]
        else:
            arrive = zeros
        row = rows[i]
        best_finish, best_j, best_t, best_b, best_g = math.inf, -1, 0.0, -1, -1
        if pinned is not None and pinned[i] >= 0:
            candidates = (pinned[i],)
        else:
            candidates = every if finite is None else finite[i]
        for j in candidates:
            c = row[j]
            r = arrive[j]
            line = lines[j]
            if r >= line.horizon and c > 0:   # no gap ends after r: the task can only go after the last
                t = r if r > line.tail else line.tail
                if t + c < best_finish:
                    best_finish, best_j, best_t, best_b, best_g = t + c, j, t, -1, -1
                continue
            t, b, gap = line.earliest(r, c)
            if t + c < best_finish:
                best_finish, best_j, best_t, best_b, best_g = t + c, j, t, b, gap
        j, t = best_j, best_t
        finish = t + row[j]
        if row[j] > 0:                     # an instant occupies nothing (even if t + c rounds to t, keep it)
            lines[j].place(t, finish, best_b, best_g)
        device_of[i], start[i], end[i] = j, t, finish
        for k in succs[i]:
            missing[k] -= 1
            if missing[k] == 0:
                push(ready, (priority[k], k))
    return np.array(device_of, dtype=int), np.array(start), np.array(end)


def _heft_independent_speed_only(prob: _Problem, rank: np.ndarray):
    """HEFT on independent tasks whose run time is work / speed, without the (tasks x devices) loop.

    With every task ready at 0 no device ever has a gap, so each task goes after some device's last
    task: the earliest finish ``tail_j + w / speed_j``, ties to the lower device index. Devices of
    equal speed are interchangeable but for their tails, so each speed keeps a heap of
    ``(tail, device)`` and a task compares one candidate per distinct speed. A task that takes no
    time finishes at 0 on the first device where it takes none.
    """
    n = prob.n
    speeds = [d.speed for d in prob.devices]
    groups: dict[float, list[tuple[float, int]]] = {}
    for j, s in enumerate(speeds):
        groups.setdefault(s, []).append((0.0, j))
    heaps = list(groups.values())          # each already a heap: equal tails, increasing j
    group_speed = list(groups)
    order = np.lexsort((np.arange(n), -rank)).tolist()   # decreasing rank, ties to the lower index
    work = prob.graph.work.tolist()
    device_of = [0] * n
    start = [0.0] * n
    end = [0.0] * n
    replace = heapq.heapreplace
    fastest = max(speeds)
    for i in order:
        w = work[i]
        if w / fastest == 0:
            # An instant (zero work, or work / speed below the smallest float) finishes at 0 on the
            # first device where it takes no time: nothing busy starts before 0.
            device_of[i] = next(j for j, s in enumerate(speeds) if w / s == 0)
            continue
        best_finish, best_j, best_h = math.inf, -1, -1
        for h, heap in enumerate(heaps):
            tail, j = heap[0]
            finish = tail + w / group_speed[h]
            if finish < best_finish or (finish == best_finish and j < best_j):
                best_finish, best_j, best_h = finish, j, h
        tail = heaps[best_h][0][0]
        device_of[i], start[i], end[i] = best_j, tail, best_finish
        replace(heaps[best_h], (best_finish, best_j))
    return np.array(device_of, dtype=int), np.array(start), np.array(end)
