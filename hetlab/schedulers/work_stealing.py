"""Randomised work stealing as a discrete-event simulation (Blumofe & Leiserson 1999)."""
from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetlab._validate import check_bool, check_int, check_nonnegative
from hetlab.devices import Device
from hetlab.schedule import Schedule
from hetlab.schedulers._core import _problem
from hetlab.tasks import Task, TaskGraph

__all__ = ["work_stealing", "StealEvent"]

#: Most steal attempts a ``retry=True`` run may need (bounded before it starts, see :func:`work_stealing`).
MAX_RETRY_ATTEMPTS = 2_000_000


@dataclass(frozen=True)
class StealEvent:
    """At ``time`` device ``thief`` tried to steal from ``victim``; ``task`` is what it got (None: nothing).

    >>> StealEvent(0.5, "GPU", "CPU", None)
    StealEvent(time=0.5, thief='GPU', victim='CPU', task=None)
    """

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
                  steal_latency: float = 0.0, seed: int | None = 0, initial: str = "round_robin",
                  retry: bool = False) -> Schedule:
    """Randomised work stealing as a discrete-event simulation (Blumofe & Leiserson 1999).

    Each device owns a deque. Ready tasks are dealt to the deques (``initial``:
    ``"round_robin"``, ``"block"`` or ``"first"``: all on the first device); a finished
    task's newly ready successors go to the bottom of its device's deque. An owner pops
    from the bottom (newest first); an idle device picks a victim uniformly at random
    (seeded) and, ``steal_latency`` later, takes the task at the top (oldest) of the
    victim's deque, or tries again if it was empty. When no deque holds any task, idle
    devices wait until one is pushed; with ``retry=True`` they keep trying instead until every task has
    finished, as in Blumofe and Leiserson's model, where each device at each moment either works or
    steals: then ``P * makespan`` is the total run time plus the time spent on steal attempts (the
    attempts still under way at the end counted up to the makespan). ``retry=True`` needs
    ``steal_latency > 0``. ``log`` lists every steal attempt as :class:`StealEvent`
    (a read-only sequence that makes each event when it is read); ``info`` counts ``steals``,
    ``failed_steals`` and ``events``; an event's ``time`` is when the attempt resolved (it began
    ``steal_latency`` earlier).

    Four unit tasks all dealt to D0 of two devices: at time 0 D0 runs the newest (T3) and D1 steals the
    oldest (T0); at time 1 the same again (T2 and T1), so the four end at 2:

    >>> from hetlab.devices import identical
    >>> from hetlab.tasks import independent_tasks
    >>> s = work_stealing(independent_tasks([1.0] * 4), identical(2), initial="first")
    >>> s.makespan, s.info["steals"], s.tasks_on("D0")
    (2.0, 2, ['T3', 'T2'])
    >>> s.log[0]
    StealEvent(time=0.0, thief='D1', victim='D0', task='T0')

    With ``retry=True`` an idle device keeps trying while the one task runs: D1's attempts resolve at
    0.4, 0.8 and 1.2, so the two devices' 2 time units are the 1 of work plus 0.4 + 0.4 + 0.2 of stealing:

    >>> r = work_stealing(independent_tasks([1.0]), identical(2), steal_latency=0.4, initial="first", retry=True)
    >>> r.makespan, r.info["failed_steals"], [round(e.time, 1) for e in r.log]
    (1.0, 3, [0.4, 0.8, 1.2])

    See also
    --------
    hetlab.schedulers.list_scheduling.earliest_free : a central queue instead of one deque per device.

    References
    ----------
    R. D. Blumofe and C. E. Leiserson, "Scheduling multithreaded computations by work stealing",
    Journal of the ACM 46(5), 720-748, 1999.
    """
    prob = _problem(graph, devices)
    steal_latency = check_nonnegative("steal_latency", steal_latency)
    if initial not in ("round_robin", "block", "first"):
        raise ValueError(f"initial must be 'round_robin', 'block' or 'first', got {initial!r}")
    g, n, m = prob.graph, prob.n, prob.m
    if not prob.speed_only and not np.isfinite(prob.costs).all():
        raise ValueError("work_stealing needs every task to run on every device")
    if seed is not None:
        seed = check_int("seed", seed, low=0)
    retry = check_bool("retry", retry)
    if retry and steal_latency == 0:
        raise ValueError("retry=True needs steal_latency > 0 (free attempts repeated at one moment never end), "
                         "got steal_latency=0")
    rng = random.Random(seed)
    names = tuple(d.name for d in prob.devices)
    if prob.speed_only:
        # Run time work / speed, divided here as the cost matrix would be: no (tasks x devices) list to build.
        work, speeds = g.work.tolist(), [d.speed for d in prob.devices]

        def duration(i: int, j: int) -> float:
            return work[i] / speeds[j]
    else:
        rows = prob.costs.tolist()

        def duration(i: int, j: int) -> float:
            return rows[i][j]
    if retry and m > 1:
        # Some device works at every moment of a run (a queued task's owner is working, and while nothing is
        # queued some task is running), so, waits for inputs aside, the makespan is at most every task's longest
        # run time added up: a bound on the attempts, checked before the run rather than stopping it midway.
        longest = float((g.work / min(d.speed for d in prob.devices)).sum() if prob.speed_only
                        else prob.costs.max(axis=1).sum())
        if (m - 1) * (longest / steal_latency + 1) > MAX_RETRY_ATTEMPTS:
            raise ValueError(f"retry=True with steal_latency={steal_latency!r} could take more than "
                             f"{MAX_RETRY_ATTEMPTS:,} steal attempts on this graph; use a larger steal_latency")
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
    succs = g.succs
    has_edges = bool(g.edges)
    ready_on = prob.ready_on
    # Steal attempts as two flat lists, times and codes ``((task + 1) * m + thief) * m + victim`` (task -1: the
    # attempt failed); the log makes a StealEvent of one only when it is read, since a run may make millions of
    # attempts (most of them failed) that nobody reads, and flat lists of numbers keep the garbage collector idle.
    times: list[float] = []
    codes: list[int] = []
    record_time, record_code = times.append, codes.append
    mm = m * m
    # Events are (time, seq, kind, device, payload); seq, unique and increasing, breaks ties in push order.
    FREE, FINISH, STEAL = 0, 1, 2
    events = [(0.0, j, FREE, j, -1) for j in range(m)]   # already a heap: equal times, increasing seq
    seq = m
    parked: list[int] = []
    steals = 0
    done = 0
    push, pop = heapq.heappush, heapq.heappop
    # rng.randrange(m - 1) inlined: Random draws getrandbits(k) until the draw is below m - 1.
    getrandbits = rng.getrandbits
    others = m - 1
    bits = others.bit_length()

    def run(i: int, j: int, t: float) -> None:
        """Start task i on device j, free at t, as soon as its inputs are there."""
        nonlocal seq
        s = max(t, ready_on(i, j, device_of, end)) if has_edges else t
        device_of[i], start[i] = j, s
        end[i] = finish = s + duration(i, j)
        push(events, (finish, seq, FINISH, j, i))
        seq += 1

    while events:
        t, _, kind, j, payload = pop(events)
        if kind == STEAL:
            # payload is the attempt's code without a task, thief * m + victim (see _StealLog).
            victim_deque = deques[payload % m]
            if victim_deque:
                i = victim_deque.popleft()
                queued -= 1
                steals += 1
                record_time(t)
                record_code((i + 1) * mm + payload)
                run(i, j, t)
                continue
            record_time(t)
            record_code(payload)
        elif kind == FINISH:
            done += 1
            for k in succs[payload]:
                missing[k] -= 1
                if missing[k] == 0:
                    deques[j].append(k)
                    queued += 1
            while parked and queued:
                push(events, (t, seq, FREE, parked.pop(), -1))
                seq += 1
        # The device is free at time t.
        own = deques[j]
        if own:
            queued -= 1
            run(own.pop(), j, t)
        elif queued or (retry and done < n and m > 1):   # with one device its own deque holds every queued task
            victim = getrandbits(bits)
            while victim >= others:
                victim = getrandbits(bits)
            push(events, (t + steal_latency, seq, STEAL, j, j * m + victim + (victim >= j)))
            seq += 1
        else:
            parked.append(j)
    # Every event pushed was popped once: seq counts them.
    info = {"steals": steals, "failed_steals": len(times) - steals, "events": seq}
    log = _StealLog(times, codes, names, tuple(t.name for t in g.tasks))
    return prob.schedule(np.array(device_of), np.array(start), np.array(end), "work stealing", log=log, info=info)


class _StealLog(Sequence):
    """The steal attempts of one run, in order, as :class:`StealEvent`; each event is made when it is read.

    Attempt ``k`` happened at ``times[k]``; ``codes[k] = ((task + 1) * m + thief) * m + victim`` with device
    indices in ``devices`` (m of them) and ``task`` an index in ``tasks``, or -1 when the attempt failed.
    """

    __slots__ = ("_times", "_codes", "_devices", "_tasks")

    def __init__(self, times: list[float], codes: list[int], devices: tuple[str, ...], tasks: tuple[str, ...]):
        self._times, self._codes, self._devices, self._tasks = times, codes, devices, tasks

    def _event(self, t: float, code: int) -> StealEvent:
        m = len(self._devices)
        code, victim = divmod(code, m)
        task, thief = divmod(code, m)
        return StealEvent(t, self._devices[thief], self._devices[victim], self._tasks[task - 1] if task else None)

    def __len__(self) -> int:
        return len(self._times)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(map(self._event, self._times[k], self._codes[k]))
        return self._event(self._times[k], self._codes[k])

    def __iter__(self):
        return map(self._event, self._times, self._codes)

    def __eq__(self, other) -> bool:
        if isinstance(other, _StealLog) and (self._devices, self._tasks) == (other._devices, other._tasks):
            return self._times == other._times and self._codes == other._codes
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None   # equal to a tuple of the same events, which hashes differently

    def __repr__(self) -> str:
        return f"<{len(self)} steal attempts>"
