"""Chapter 12.1's process pool, predicted before the run from the CPUs that other work kept busy just before it
(:func:`hetlab.real.cpu_load.busy_cpus`) and judged against that prediction afterwards, so that a busy or a
one-CPU machine gets a prediction that its run checks instead of an excuse.

The prediction is :func:`hetlab.real.cpu_load.share_range` (from a fair share of every CPU down to the crowded
CPU setting the span); the verdict widens it by :data:`SHARE_NOISE` on both sides. On a full machine
(:func:`hetlab.real.cpu_load.saturated`) idle time cannot count the threads that wait beyond the CPUs, so the
prediction says "at most" before the run (its lower end is 0) and a pool below it is not blamed on a busier
machine alone: more threads than CPUs before the run would give the same reading, so the verdict names both
(review ch12-20 #1, ch12-21 #1); a pool above it is compared with that most (ch12-21 #3).
"""
from __future__ import annotations

from hetlab._validate import check_int, check_nonnegative
from hetlab.real.cpu_load import saturated, share_range

__all__ = ["SHARE_NOISE", "share_prediction", "share_verdict"]

#: Cores by which a process pool's effective parallelism may miss the predicted range and still agree with it:
#: its first start and last end are read in different processes, the loop rate is calibrated once, and the
#: other work's load moves a little between the sample and the run (the build VM, idle, one and two spinners,
#: pinned to one CPU, December 2026: within 0.1 of the range unless the machine got busier during the run).
SHARE_NOISE = 0.1


def _span(low: float, high: float) -> str:
    return f"{high:.2f}" if round(low, 2) == round(high, 2) else f"{low:.2f}–{high:.2f}"


def share_prediction(processes: int, cpus: int, busy: float | None) -> str:
    """The clause of the prediction line about the process pool: the range of
    :func:`hetlab.real.cpu_load.share_range` when ``busy`` (CPUs other work kept busy just before) was measured,
    only its most on a full machine (:func:`hetlab.real.cpu_load.saturated`), else the ceiling min(N_p, C) with
    a note that no sample was taken.

    >>> share_prediction(2, 2, 1.0)
    '运行前 0.2 秒里别的程序占着 1.00 个 CPU，按此预测 2 个进程能用 1.00–1.33 个核'
    >>> share_prediction(2, 2, 0.0)
    '运行前 0.2 秒里别的程序占着 0.00 个 CPU，按此预测 2 个进程能用 2.00 个核'
    >>> share_prediction(2, 2, 2.0)
    '运行前 0.2 秒里别的程序占满了全部 2 个 CPU（2.00），读不出还有几个线程在等核，只能预测 2 个进程至多能用 1.00 个核'
    """
    processes = check_int("processes", processes, low=1, high=4096)
    cpus = check_int("cpus", cpus, low=1, high=4096)
    if busy is None:
        return (f"{processes} 个进程 ≤ {min(processes, cpus)} 个核（这台机器没有 /proc/stat，读不到运行前的空闲 CPU，"
                "不预测进程池实际能用几个核）")
    busy = check_nonnegative("busy", busy, high=float(cpus))
    low, high = share_range(processes, cpus, busy)
    if saturated(cpus, busy):
        return (f"运行前 0.2 秒里别的程序占满了全部 {cpus} 个 CPU（{busy:.2f}），读不出还有几个线程在等核，"
                f"只能预测 {processes} 个进程至多能用 {high:.2f} 个核")
    return f"运行前 0.2 秒里别的程序占着 {busy:.2f} 个 CPU，按此预测 {processes} 个进程能用 {_span(low, high)} 个核"


def share_verdict(parallelism: float, processes: int, cpus: int, busy: float, serial: float) -> str:
    """The process pool's measured effective parallelism against :func:`share_prediction`'s range widened by
    :data:`SHARE_NOISE`: agreeing, or below it (the machine got busier during the run; ``serial``, one thread
    alone in the same run, below 0.9 of a core is the evidence printed), or above it (other work yielded CPUs).
    On a full machine only the most was predicted: a pool well below it may as well have met more threads than
    CPUs already before the run, and the verdict names both causes; a pool above it is compared with that most.

    >>> share_verdict(1.18, 2, 2, 1.0, 1.0)
    '进程池 1.18 在预测的 1.00–1.33 个核以内（两端各放宽 0.1）：与运行前量到的空闲 CPU 相符'
    >>> share_verdict(1.96, 2, 2, 0.0, 1.0)
    '进程池 1.96 与预测的 2.00 个核相差不到 0.1：与运行前量到的空闲 CPU 相符'
    >>> share_verdict(0.5, 2, 2, 1.0, 0.36).split("：")[0]
    '进程池 0.50 低于预测的 1.00–1.33 个核（放宽 0.1 后 0.90）'
    >>> share_verdict(0.31, 2, 2, 2.0, 0.38).split("：")[0]
    '进程池 0.31 没有超过预测的上限 1.00 个核，比它低 0.69'
    >>> share_verdict(1.19, 2, 2, 2.0, 0.9)
    '进程池 1.19 高于预测的上限 1.00 个核（放宽 0.1 后 1.10）：运行中别的程序让出了 CPU'
    """
    par = check_nonnegative("parallelism", parallelism, high=1e4)
    processes = check_int("processes", processes, low=1, high=4096)
    cpus = check_int("cpus", cpus, low=1, high=4096)
    busy = check_nonnegative("busy", busy, high=float(cpus))
    serial = check_nonnegative("serial", serial, high=1e4)
    low, high = share_range(processes, cpus, busy)
    evidence = f"——一个线程单独运行也只分到 {serial:.2f} 个核" if serial < 0.9 else ""
    full = saturated(cpus, busy)
    if par > high + SHARE_NOISE:      # on a full machine only the most was predicted (review ch12-21 #3)
        return (f"进程池 {par:.2f} 高于预测的" + (f"上限 {high:.2f}" if full else f" {_span(low, high)}")
                + f" 个核（放宽 {SHARE_NOISE:g} 后 {high + SHARE_NOISE:.2f}）：运行中别的程序让出了 CPU")
    if full:
        if par >= high - SHARE_NOISE:
            return (f"进程池 {par:.2f} 与预测的上限 {high:.2f} 个核相差不到 {SHARE_NOISE:g}："
                    "与运行前量到的满载相符")
        return (f"进程池 {par:.2f} 没有超过预测的上限 {high:.2f} 个核，比它低 {high - par:.2f}："
                "运行前机器已满，别的程序要算的线程可能多于核数（空闲时间读不出多几个），也可能运行中更忙了"
                + evidence)
    if par >= low - SHARE_NOISE:
        if round(low, 2) == round(high, 2):
            return (f"进程池 {par:.2f} 与预测的 {high:.2f} 个核相差不到 {SHARE_NOISE:g}："
                    "与运行前量到的空闲 CPU 相符")
        return (f"进程池 {par:.2f} 在预测的 {_span(low, high)} 个核以内（两端各放宽 {SHARE_NOISE:g}）："
                "与运行前量到的空闲 CPU 相符")
    return (f"进程池 {par:.2f} 低于预测的 {_span(low, high)} 个核（放宽 {SHARE_NOISE:g} 后 {low - SHARE_NOISE:.2f}）："
            "运行中别的程序占的 CPU 比运行前那 0.2 秒多" + evidence)
