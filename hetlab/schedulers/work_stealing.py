"""Randomised work stealing as a discrete-event simulation (Blumofe & Leiserson 1999)."""
from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetlab._validate import check_int, check_nonnegative
from hetlab.devices import Device
from hetlab.schedule import Schedule
from hetlab.schedulers._core import _problem
from hetlab.tasks import Task, TaskGraph

__all__ = ["work_stealing", "StealEvent"]


@dataclass(frozen=True)
class StealEvent:
    """At ``time`` device ``thief`` tried to steal from ``victim``; ``task`` is what it got (None: nothing)."""

    time: float
    thief: str
    victim: str
    task: str | None

    def __post_init__(self) -> None:
        check_nonnegative("time", self.time)
        for name in ("thief", "victim"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise TypeError(f"{name} must be a device name (non-empty string), got {value!r}")
        if self.task is not None and (not isinstance(self.task, str) or not self.task):
            raise TypeError(f"task must be a task name (non-empty string) or None, got {self.task!r}")


def work_stealing(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *,
                  steal_latency: float = 0.0, seed: int | None = 0, initial: str = "round_robin") -> Schedule:
    """Randomised work stealing as a discrete-event simulation (Blumofe & Leiserson 1999).

    Each device owns a deque. Ready tasks are dealt to the deques (``initial``:
    ``"round_robin"``, ``"block"`` or ``"first"``: all on the first device); a finished
    task's newly ready successors go to the bottom of its device's deque. An owner pops
    from the bottom (newest first); an idle device picks a victim uniformly at random
    (seeded) and, ``steal_latency`` later, takes the task at the top (oldest) of the
    victim's deque, or tries again if it was empty. When no deque holds any task, idle
    devices wait until one is pushed. ``log`` lists every steal attempt as :class:`StealEvent`;
    ``info`` counts ``steals``, ``failed_steals`` and ``events``.
    """
    prob = _problem(graph, devices)
    steal_latency = check_nonnegative("steal_latency", steal_latency)
    if initial not in ("round_robin", "block", "first"):
        raise ValueError(f"initial must be 'round_robin', 'block' or 'first', got {initial!r}")
    g, n, m, costs = prob.graph, prob.n, prob.m, prob.costs
    if not np.isfinite(costs).all():
        raise ValueError("work_stealing needs every task to run on every device")
    if seed is not None:
        seed = check_int("seed", seed, low=0)
    rng = random.Random(seed)
    names = [d.name for d in prob.devices]
    cost_rows = costs.tolist()
    deques = [deque() for _ in range(m)]
    roots = [i for i in g.order if not g.preds[i]]
    for k, i in enumerate(roots):
        j = {"round_robin": k % m, "block": (k * m) // max(len(roots), 1), "first": 0}[initial]
        deques[j].append(i)
    queued = len(roots)
    device_of = [0] * n
    start = [0.0] * n
    end = [0.0] * n
    missing = [len(p) for p in g.preds]
    has_edges = bool(g.edges)
    log: list[StealEvent] = []
    events: list[tuple[float, int, int, int, int]] = []  # (time, seq, kind, device, payload)
    FREE, FINISH, STEAL = 0, 1, 2
    seq = 0
    for j in range(m):
        events.append((0.0, seq, FREE, j, -1))
        seq += 1
    parked: list[int] = []
    n_events = steals = failed = 0
    push, pop = heapq.heappush, heapq.heappop

    def run(i: int, j: int, t: float) -> None:
        nonlocal seq
        s = max(t, prob.ready_on(i, j, device_of, end)) if has_edges else t
        device_of[i], start[i] = j, s
        end[i] = s + cost_rows[i][j]
        push(events, (end[i], seq, FINISH, j, i))
        seq += 1

    while events:
        t, _, kind, j, payload = pop(events)
        n_events += 1
        if kind == FINISH:
            for k in g.succs[payload]:
                missing[k] -= 1
                if missing[k] == 0:
                    deques[j].append(k)
                    queued += 1
            while parked and queued:
                push(events, (t, seq, FREE, parked.pop(), -1))
                seq += 1
            kind = FREE
        elif kind == STEAL:
            victim_deque = deques[payload]
            if victim_deque:
                i = victim_deque.popleft()
                queued -= 1
                steals += 1
                log.append(StealEvent(t, names[j], names[payload], g.tasks[i].name))
                run(i, j, t)
                continue
            failed += 1
            log.append(StealEvent(t, names[j], names[payload], None))
            kind = FREE
        # The device is free at time t.
        own = deques[j]
        if own:
            queued -= 1
            run(own.pop(), j, t)
        elif queued and m > 1:
            victim = rng.randrange(m - 1)
            victim += victim >= j
            push(events, (t + steal_latency, seq, STEAL, j, victim))
            seq += 1
        else:
            parked.append(j)
    info = {"steals": steals, "failed_steals": failed, "events": n_events}
    return prob.schedule(np.array(device_of), np.array(start), np.array(end), "work stealing",
                         log=tuple(log), info=info)

