"""Chapter 7 (metrics): a schedule's speed-up and efficiency read against every serial baseline, and the
verdict of the reader-side thread-scaling lab (7.7).

Chapters 5 and 11 print the same baseline table for their own schedules.
"""
from __future__ import annotations

from hetlab._validate import check_instance, check_int, check_nonnegative
from hetlab.formulas import karp_flatt
from hetlab.metrics import baseline_table
from hetlab.real.measure import ThreadScaling
from hetlab.schedule import Schedule

__all__ = ["baseline_report", "thread_lab_report"]


def baseline_report(schedule: Schedule) -> str:
    """:func:`hetlab.metrics.baseline_table` of ``schedule`` as an aligned table: one row per serial baseline,
    with ``T_serial``, the speed-up ``S``, the naive ``S/N``, the capacity ``C`` and the fair ``S/C``.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.schedulers import lpt
    >>> from hetlab.tasks import independent_tasks
    >>> print(baseline_report(lpt(independent_tasks([45.0, 45.0, 45.0]), kitchen())))
    串行基线   T_serial   加速比 S   S/N     容量 C   S/C
    CPU          13.50      3.00x    1.00     4.50   0.67
    GPU           6.75      1.50x    0.50     2.25   0.67
    NPU           9.00      2.00x    0.67     3.00   0.67
    """
    rows = baseline_table(schedule)
    lines = ["串行基线   T_serial   加速比 S   S/N     容量 C   S/C"]
    for r in rows:
        lines.append(f"{r.base_device:<9} {r.serial_time:8.2f} {r.speedup:9.2f}x {r.naive_efficiency:7.2f}"
                     f" {r.capacity:8.2f} {r.efficiency:6.2f}")
    return "\n".join(lines)


def thread_lab_report(run: ThreadScaling, cpus: int, load: float | None = None) -> str:
    """The reader-side Karp-Flatt lab of 7.7 as a table and a verdict computed from ``run``'s numbers.

    Per thread count: ``T_N``, the wall speed-up ``S``, the CPUs the pool got (CPU / wall), the share ratio
    against one thread, the efficiency per CPU obtained ``S / share ratio`` (= ``cpu_1 / cpu_N``) and
    Karp-Flatt's ``e`` from wall times. On a busy machine more threads win more CPU from the neighbours, so
    ``S`` follows the share, not the program: the verdict divides the share out first.

    >>> run = ThreadScaling({1: 0.02, 2: 0.01}, {1: 0.02, 2: 0.02}, True, 5)
    >>> print(thread_lab_report(run, 2).splitlines()[-1])
    S 与份额之比相差都不到 15%：线程池快了多少，取决于它多拿到多少 CPU；程序本身几乎没有并行开销。
    """
    check_instance("run", run, ThreadScaling)
    check_int("cpus", cpus, low=1, high=4096)
    if load is not None:
        check_nonnegative("load", load, high=1e6)
    if sorted(run.wall)[0] != 1 or len(run.wall) < 2:
        raise ValueError(f"run must time 1 thread and at least one larger pool, got {sorted(run.wall)}")
    t1, r1 = run.wall[1], run.share(1)
    busy = "" if load is None else f"，测量前每个 CPU 平均有 {load:.1f} 个可运行的任务"
    lines = [f"可用 {cpus} 个 CPU{busy}；BLAS {'已' if run.blas_limited else '未'}限定为单线程；"
             f"各取 {run.rounds} 轮交替测量里居中的一轮",
             "线程数  T_N (ms)     S   CPU/墙钟  份额之比  按份额折算的效率       e"]
    ratios = {}
    for n in sorted(run.wall):
        s, share = t1 / run.wall[n], run.share(n) / r1
        ratios[n] = s / share
        e = "" if n == 1 else f"{karp_flatt(s, n):7.3f}"
        lines.append(f"{n:>6} {run.wall[n] * 1e3:9.1f} {s:5.2f} {run.share(n):9.2f} {share:9.2f}"
                     f" {ratios[n]:17.0%} {e}")
    if not run.blas_limited:
        lines.append("注意：没有 threadpoolctl，BLAS 未被限定为单线程，单线程基线可能已用了几个核，"
                     "这组数不可信（pip install threadpoolctl 后重跑）。")
    if r1 < 0.9:
        lines.append(f"单线程基线只拿到 {r1:.2f} 个 CPU：别的程序在抢核。")
    short = [n for n in run.wall if n > 1 and run.share(n) < 0.9 * min(n, cpus)]
    if short:
        lines.append("拿到的 CPU 明显少于线程数（和可用 CPU 数）的："
                     + "、".join(f"{n} 个线程只有 {run.share(n):.2f} 个" for n in short) + "。")
    shares = [run.share(n) / r1 for n in run.wall if n > 1]
    if r1 < 0.9 or short:
        if all(v > 1.15 for v in shares):
            how = "线程越多，从别的程序那里抢到的份额越大"
        elif all(v < 0.85 for v in shares):
            how = "线程越多，拿到的 CPU 反而越少（多半是等 GIL 的线程让出了核，再轮到它时要和别的程序一起排队）"
        else:
            how = "线程池拿到的 CPU 份额随线程数忽高忽低（见“份额之比”一列）"
        lines.append(how + "；墙钟的 S 和 e 里混着份额的变化。")
    worst = min(ratios.values())
    if all(abs(v - 1) <= 0.15 for v in ratios.values()):
        lines.append("S 与份额之比相差都不到 15%：线程池快了多少，取决于它多拿到多少 CPU；"
                     "程序本身几乎没有并行开销。")
    elif worst < 0.85:
        lines.append(f"按份额折算的效率低到 {worst:.0%}：同样的活，多个线程多花了 CPU 时间，线程在共享的"
                     "硬件上互相拖慢（缓存、内存带宽、超线程、降频），这才是这台机器上真实的并行开销。")
    else:
        lines.append(f"按份额折算的效率高到 {max(ratios.values()):.0%}：同样的活，多个线程反而少花了 CPU "
                     "时间。差这么多多半是测量受了干扰（负载在变，缓存、频率不同），这组 e 不能当程序的开销读，"
                     "换个空闲的时候重跑。")
    return "\n".join(lines)
