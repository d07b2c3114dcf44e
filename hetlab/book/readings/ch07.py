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

__all__ = ["CPU_RATIO_BAND", "baseline_report", "thread_lab_report"]


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


#: The CPU-time ratio CPU_1 / CPU_N must leave this band before the verdict reads anything into it: 13
#: back-to-back runs of the lab on the busy shared 2-CPU machine that builds the book spread it over 77%-125%
#: (review ch07-3). The chapter's prose (7.7) states the band and where it comes from, once.
CPU_RATIO_BAND = (0.70, 1.30)


def _step(a: float, b: float) -> str:
    """Up, flat or down by one 5% threshold: 1.00 -> 1.14 is up, +10% then -20% is up then down."""
    return "上升" if b > 1.05 * a else "下降" if b < a / 1.05 else "持平"


def thread_lab_report(run: ThreadScaling, cpus: int, load: float | None = None) -> str:
    """The reader-side Karp-Flatt lab of 7.7 as a table and a short verdict, each line a reading of the table.

    Per thread count: ``T_N``, the wall speed-up ``S``, the CPUs the pool used (CPU / wall), the share ratio
    against one thread, the CPU-time ratio ``CPU_1 / CPU_N`` (= ``S / share ratio``: below 100% the same job
    cost more CPU time on N threads) and Karp-Flatt's ``e`` from wall times. ``load`` is the whole machine's
    exponentially damped one-minute load average, printed beside the ``cpus`` this process may use. The verdict
    says, step by step, whether the CPUs used and ``e`` rose or fell, and whether the CPU-time ratio left
    the busy-machine spread :data:`CPU_RATIO_BAND` (on an idle machine, ``load`` < 0.5, every ratio outside
    95%-105% is printed instead, more and less CPU time alike). A negative ``e`` or a ratio outside the band
    is never followed by "S 和 e 可以当...来读". A thread that waits uses no CPU, exactly like a thread kept off
    its core, so a low share is never read as the program's overhead.

    >>> run = ThreadScaling({1: 0.02, 2: 0.01}, {1: 0.02, 2: 0.02}, True, 5)
    >>> print(thread_lab_report(run, 2).splitlines()[-1])
    2 个线程用满了可用的 2 个 CPU：S 和 e 可以当这个程序在这台机器上的并行表现来读。
    """
    check_instance("run", run, ThreadScaling)
    check_int("cpus", cpus, low=1, high=4096)
    if load is not None:
        check_nonnegative("load", load, high=1e6)
    if sorted(run.wall)[0] != 1 or len(run.wall) < 2:
        raise ValueError(f"run must time 1 thread and at least one larger pool, got {sorted(run.wall)}")
    t1, r1 = run.wall[1], run.share(1)
    counts = sorted(run.wall)
    busy = "" if load is None else f"；整台机器的一分钟平均负载（指数平均）{load:.1f}"
    lines = [f"你可用 {cpus} 个 CPU{busy}；BLAS {'已' if run.blas_limited else '未'}限定为单线程",
             "线程数  T_N (ms)     S   CPU/墙钟  份额之比  CPU 时间比       e"]
    ratios, es = {}, {}
    for n in counts:
        s, share = t1 / run.wall[n], run.share(n) / r1
        ratios[n] = round(s / share, 3)      # compared as printed: 130.04% prints 130.0% and stays inside
        es[n] = None if n == 1 else round(karp_flatt(s, n), 3)
        e = "" if n == 1 else f"{es[n]:7.3f}"
        lines.append(f"{n:>6} {run.wall[n] * 1e3:9.1f} {s:5.2f} {run.share(n):9.2f} {share:9.2f}"
                     f" {ratios[n]:11.1%} {e}")
    if not run.blas_limited:
        lines.append("没有 threadpoolctl，单线程基线可能已用了几个核，这组数不可信（pip install threadpoolctl）。")
    # Each step: the CPUs used (share ratio) up, flat or down, and e up or down, both read from the table.
    parts, full_then_flat = [], None
    for a, b in zip(counts, counts[1:]):
        w = _step(run.share(a), run.share(b))
        text = f"{a} 到 {b} 个线程时{w}"
        if es[a] is not None:
            move = "升" if es[b] > es[a] else "降" if es[b] < es[a] else "持平"
            text += f"（e 从 {es[a]:.3f} {move}到 {es[b]:.3f}）" if move != "持平" else f"（e 持平于 {es[b]:.3f}）"
            # cell 54's prediction, claimed only where the table shows it: all CPUs used, share flat, e up
            if w == "持平" and run.share(a) >= 0.9 * cpus and b > cpus and es[b] > es[a]:
                full_then_flat = (a, b)
        parts.append(text)
    lines.append("用上的 CPU（份额之比 " + " → ".join(f"{run.share(n) / r1:.2f}" for n in counts) + "）："
                 + "，".join(parts) + "。")
    full_line = None
    if full_then_flat:
        a, b = full_then_flat
        full_line = (f"{a} 个线程已用满 {cpus} 个 CPU，{b} 个线程只能轮流用它们：这一步 e 的上升来自线程多于 CPU，"
                     "不是程序的开销。")
    low, high = CPU_RATIO_BAND
    # Idle needs both: a low load average (which lags a program started seconds ago) and no pool short of the CPUs
    # it could use in this run (one neighbour on 2 CPUs still leaves one thread a whole CPU, not two threads two).
    short = [n for n in counts if run.share(n) < 0.9 * min(n, cpus)]
    idle = load is not None and load < 0.5 and not short and r1 >= 0.95
    below = [n for n in counts if ratios[n] < low]
    above = [n for n in counts if ratios[n] > high]
    less = []                                # pools that spent less CPU time than 1 thread, idle reading
    if below and not idle:                   # idle: the reading below names every pool with its extra CPU time
        worst = min(ratios.values())
        each = "，" + "、".join(f"{n} 个线程 {ratios[n]:.1%}" for n in below)
        lines.append(f"CPU 时间比低到 {worst:.1%}（< {low:.0%}）{each}："
                     "同样的活，多线程多花了 CPU 时间：线程互相拖慢（超线程、睿频降低、共享缓存与内存带宽），"
                     "或者与别的程序争用这些硬件。")
    if above:
        best = max(ratios.values())
        lines.append(f"CPU 时间比高到 {best:.1%}（> {high:.0%}）：多线程反而少花了 CPU 时间，"
                     "多半是测量受了干扰，重跑。")
    if idle:                                 # idle machine: reruns barely move the ratio, so read every one
        more = [n for n in counts if ratios[n] < 0.95]
        less = [n for n in counts if ratios[n] > 1.05 and n not in above]
        if more:                             # CPU_N / CPU_1 - 1 = 1 / ratio - 1
            lines.append("机器几乎空闲：" + "、".join(f"{n} 个线程多花了约 {1 / ratios[n] - 1:.0%}" for n in more)
                         + " 的 CPU 时间，线程互相拖慢（两个 vCPU 共用一个物理核的超线程、多核同跑时睿频降低、"
                         "共享缓存与内存带宽）。")
        if less:
            lines.append("机器几乎空闲：" + "、".join(f"{n} 个线程少花了约 {1 - 1 / ratios[n]:.0%}" for n in less)
                         + " 的 CPU 时间：单线程基线可能慢了（降频、落在小核上）或测量受了干扰，重跑。")
        if not more and not less and not below and not above:
            lines.append("机器几乎空闲：CPU 时间比都在 95%–105%，多线程花的 CPU 时间与单线程相差不到 5%。")
    elif not below and not above:
        lines.append(f"CPU 时间比都在 {low:.0%}–{high:.0%}：机器上还有别的负载时，测不出多花的 CPU 时间。")
    negative = [n for n in counts[1:] if es[n] < -0.01]   # S a hair above N is rounding, not a disturbed run
    if negative and not above and not less:  # S > N: cell 54, a negative e only shows a disturbed measurement
        lines.append("、".join(f"{n} 个线程" for n in negative) + "的 S 超过线程数（e 为负）：测量受了干扰，重跑。")
    rerun = bool(below or above or less or negative)   # a disturbed or slowed run is not declared readable
    if full_line and not rerun:
        lines.append(full_line)
    if short:
        # Even where the load average says idle, it lags a program started seconds ago: no cause is claimed.
        why = "别的程序占着核，或线程在等（GIL、锁、串行部分），这组数分不出是哪一种"
        lines.append("、".join(f"{n} 个线程只用上 {run.share(n):.2f} 个 CPU" for n in short)
                     + f"：{why}；e 不能当程序的开销来读。")
    elif rerun:                              # a disturbed run, or one outside the band, is not read
        pass
    elif counts[-1] <= cpus:
        lines.append(f"{counts[-1]} 个线程用满了可用的 {cpus} 个 CPU："
                     "S 和 e 可以当这个程序在这台机器上的并行表现来读。")
    elif counts[1] <= cpus:
        lines.append(f"不超过 {cpus} 个线程时用满了 CPU，S 和 e 可以当程序的并行表现来读；"
                     f"多于 {cpus} 个线程时的 e 来自线程多于 CPU。")
    else:
        lines.append(f"这里的线程池都多于 {cpus} 个 CPU，e 来自线程轮流用核，不是程序的并行表现。")
    return "\n".join(lines)
