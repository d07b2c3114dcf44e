"""How many of this process's CPUs other work keeps busy right now, and what a pool of processes can expect.

Chapter 12.1 predicts its process pool's effective parallelism before the run. The CPU count alone predicts
min(N_p, C), which holds only on an idle machine. :func:`busy_cpus` samples ``/proc/stat`` twice, ``interval``
seconds apart, and returns how many of the CPUs this process may run on were busy in between (this process
sleeps meanwhile, so it is the other work); :func:`fair_share` turns that into the CPUs a pool of N_p
CPU-bound processes can expect when the kernel shares the CPUs fairly among everything runnable.

Why the idle time of ``/proc/stat`` and not the load average: ``os.getloadavg()`` is an exponentially damped
one-minute average, so a program started ten seconds ago shows as about 0.15 of a CPU and one that stopped a
minute ago still counts; the runnable count (``procs_running``) is a single instant, counts this process too,
and misses programs that run in bursts. The CPUs' idle time over a short window measures the capacity that was
free just before the run. What it still assumes: the other work keeps the CPUs as busy during the run as in
that window, and each busy CPU's worth of it is one CPU-bound thread that competes for a fair share. Where that
assumption matters, :func:`mark` and :func:`others_since` read the other work over the whole measurement afterwards.

What it cannot see: idle time reads at most C busy CPUs, so on a full machine (:func:`saturated`: every CPU busy
in the window, up to :data:`SATURATED`) it cannot tell C competing threads from ten; the fair share for ``busy``
is then only the most a pool can get, and :func:`share_range`'s least is zero (review ch12-20 #1: three spinners
on two CPUs read ``busy = 2.00``, a fair share of 1.00, and the pool got 0.31).
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

from hetlab._validate import check_int, check_nonnegative, check_positive

__all__ = ["SATURATED", "busy_cpus", "fair_share", "saturated", "share_range", "CpuMark", "mark", "others_since"]

STAT = Path("/proc/stat")

#: CPUs below the usable count within which a sample counts as a full machine: two of the clock ticks that
#: ``/proc/stat`` counts in (100 per second), over the 0.2-second sample of :func:`busy_cpus` (each tick is 0.05
#: of a CPU there), so that a CPU idle for a tick or two while the other work waits to be scheduled does not
#: hide that every CPU was taken.
SATURATED = 0.1


def fair_share(processes: int, cpus: int, busy: float) -> float:
    """CPUs that ``processes`` CPU-bound processes can expect on ``cpus`` CPUs when other work keeps ``busy`` of
    them busy (one CPU-bound thread per busy CPU) and the kernel gives every runnable thread an equal share:
    ``min(N_p, C N_p / (N_p + busy))``. Idle (busy = 0) it is chapter 12's min(N_p, C).

    >>> fair_share(2, 2, 0.0), round(fair_share(2, 2, 1.0), 2), fair_share(2, 2, 2.0), fair_share(1, 1, 0.0)
    (2.0, 1.33, 1.0, 1.0)
    >>> fair_share(4, 8, 2.0)           # enough free CPUs for every process
    4.0
    """
    processes = check_int("processes", processes, low=1, high=4096)
    cpus = check_int("cpus", cpus, low=1, high=4096)
    busy = check_nonnegative("busy", busy, high=float(cpus))
    return float(min(processes, cpus * processes / (processes + busy)))


def saturated(cpus: int, busy: float) -> bool:
    """Whether a sample of ``busy`` CPUs out of ``cpus`` is a full machine (within :data:`SATURATED` of every
    CPU): idle time cannot count the threads that wait beyond C, so a prediction from it is an upper bound only.

    >>> saturated(2, 2.0), saturated(2, 1.95), saturated(2, 1.85), saturated(1, 0.0)
    (True, True, False, False)
    """
    cpus = check_int("cpus", cpus, low=1, high=4096)
    busy = check_nonnegative("busy", busy, high=float(cpus))
    return busy >= cpus - SATURATED - 1e-9


def share_range(processes: int, cpus: int, busy: float) -> tuple[float, float]:
    """The CPUs a pool of ``processes`` CPU-bound processes, each given an equal part of the work in advance, can
    expect as (least, most) when other work keeps ``busy`` CPUs busy. Most: :func:`fair_share`, the kernel
    rebalancing threads among CPUs all the time. Least: it does not move them during the run, and the pool's
    slowest process, which ends last and sets the span, sits where the other work crowds most. That work is
    ``k = floor(busy)`` CPU-bound threads spread over the CPUs with the pool, so the most crowded CPU holds
    ``ceil((N_p + k) / C)`` threads; a program busy for the fraction ``f = busy - k`` of a CPU, when no CPU is
    left free for it (``N_p + k >= C``), takes up to ``min(f, 1/2)`` from the process it shares one with:
    ``N_p min(1 / ceil((N_p + k) / C), 1 - min(f, 1/2))``, never above the most. On a full machine
    (:func:`saturated`) the other work may be more threads than CPUs, any number of them: the most still holds,
    the least is 0.

    >>> share_range(2, 2, 0.0), share_range(2, 2, 1.0)[0], round(share_range(2, 2, 0.15)[0], 2)
    ((2.0, 2.0), 1.0, 1.7)
    >>> share_range(2, 2, 2.0)          # full: three spinners on two CPUs read 2.00 too (fair share 0.8)
    (0.0, 1.0)
    """
    most = fair_share(processes, cpus, busy)
    if saturated(cpus, busy):
        return 0.0, most
    whole = math.floor(busy)
    slowest = 1 / math.ceil((processes + whole) / cpus)
    if processes + whole >= cpus:               # no CPU left free for the part-time program: it shares one of ours
        slowest = min(slowest, 1 - min(busy - whole, 0.5))
    return float(min(most, processes * slowest)), most


def _times(cpus: set[int]) -> tuple[int, int] | None:
    """(busy, total) jiffies summed over the lines ``cpuN`` of ``/proc/stat`` with N in ``cpus``; idle and iowait
    count as idle, steal as busy (the hypervisor gave the CPU to someone else); None where unreadable."""
    try:
        lines = STAT.read_text().splitlines()
    except OSError:
        return None
    busy = total = 0
    for line in lines:
        name, *fields = line.split()
        if not (name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus):
            continue
        ticks = [int(x) for x in fields[:8]]        # user nice system idle iowait irq softirq steal (guest is in user)
        total += sum(ticks)
        busy += sum(ticks) - ticks[3] - ticks[4]
    return (busy, total) if total else None


def busy_cpus(interval: float = 0.2, *, machine: bool = False) -> float | None:
    """How many of the CPUs this process may run on (``os.sched_getaffinity``) were busy during the next
    ``interval`` seconds (at most 1), summed busy fractions from ``/proc/stat``, capped by
    :func:`hetlab.real.measure.cpu_count` (a container's quota); None where ``/proc/stat`` is missing (not Linux)
    or did not advance. The caller sleeps meanwhile, so what it counts is other work. With ``machine``, every CPU
    of the machine instead (no cap): a process pinned to one CPU cannot see a program on another one, which can
    still move onto its CPU during a run.

    >>> busy = busy_cpus(0.05)
    >>> busy is None or 0 <= busy <= len(os.sched_getaffinity(0))
    True
    >>> whole = busy_cpus(0.05, machine=True)
    >>> whole is None or 0 <= whole <= (os.cpu_count() or 1)
    True
    """
    from hetlab.real.measure import cpu_count

    interval = check_positive("interval", interval, high=1.0)
    cpus = _watched(machine)
    if cpus is None:
        return None
    first = _times(cpus)
    if first is None:
        return None
    time.sleep(interval)
    second = _times(cpus)
    if second is None or second[1] <= first[1]:
        return None
    fraction = (second[0] - first[0]) / (second[1] - first[1])
    if machine:
        return max(0.0, fraction * len(cpus))
    return min(float(cpu_count()), max(0.0, fraction * len(cpus)))


@dataclass(frozen=True)
class CpuMark:
    """Where a measurement starts (:func:`mark`): the CPUs watched, their busy and total jiffies, and this
    process's CPU seconds with its reaped children's (``os.times``)."""
    cpus: frozenset[int]
    busy: int
    total: int
    own: float

    def __post_init__(self) -> None:
        if not isinstance(self.cpus, frozenset) or not self.cpus:
            raise TypeError(f"cpus must be a non-empty frozenset of CPU numbers, got {self.cpus!r}")
        for cpu in self.cpus:
            check_int("cpus", cpu, low=0, high=65535)
        total = check_int("total", self.total, low=0, high=2 ** 62)
        if check_int("busy", self.busy, low=0, high=2 ** 62) > total:
            raise ValueError(f"busy must be at most total ({total}) jiffies, got busy={self.busy}, total={total}")
        check_nonnegative("own", self.own, high=1e12)


def mark(*, machine: bool = False) -> CpuMark | None:
    """A :class:`CpuMark` now, for :func:`others_since`: the CPUs this process may run on, or with ``machine``
    every CPU of the machine; None where ``/proc/stat`` is missing (not Linux)."""
    cpus = _watched(machine)
    ticks = None if cpus is None else _times(cpus)
    return None if ticks is None else CpuMark(frozenset(cpus), ticks[0], ticks[1], _own_seconds())


def _watched(machine) -> set[int] | None:
    """The CPUs a reading watches: those this process may run on, or with ``machine`` every CPU of the machine;
    None off Linux (no affinity, no /proc/stat either)."""
    if not isinstance(machine, bool):
        raise TypeError(f"machine must be True or False, got {type(machine).__name__} {machine!r}")
    try:
        return set(range(os.cpu_count() or 1)) if machine else set(os.sched_getaffinity(0))
    except AttributeError:
        return None


def others_since(start: CpuMark | None) -> float | None:
    """How many CPUs other programs kept busy, on average, since ``start`` (:func:`mark`): the watched CPUs' busy
    jiffies less this process's own CPU time and that of its children it has reaped (so every process pool used
    in between must be closed first: a live worker's CPU would count as another program's). What it reads beside
    other programs: the hypervisor's steal, and about 0.05-0.15 of a CPU of accounting noise on the build VM over a
    one-second measurement. None where ``start`` is None or the clock did not advance.

    >>> start = mark()
    >>> _ = sum(range(10 ** 5))
    >>> busy = others_since(start)
    >>> busy is None or busy >= 0
    True
    """
    if start is None:
        return None
    if not isinstance(start, CpuMark):
        raise TypeError(f"start must be a CpuMark from mark(), got {type(start).__name__} {start!r}")
    ticks = _times(set(start.cpus))
    if ticks is None or ticks[1] <= start.total:
        return None
    own = (_own_seconds() - start.own) * os.sysconf("SC_CLK_TCK")
    return max(0.0, (ticks[0] - start.busy - own) / (ticks[1] - start.total) * len(start.cpus))


def _own_seconds() -> float:
    """CPU seconds of this process and of its children it has waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
