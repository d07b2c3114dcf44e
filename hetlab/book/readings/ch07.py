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
#: (review ch07-3). A fixed band, not the reader's own rerun spread, so the verdict says where it comes from.
CPU_RATIO_BAND = (0.70, 1.30)


def thread_lab_report(run: ThreadScaling, cpus: int, load: float | None = None) -> str:
    """The reader-side Karp-Flatt lab of 7.7 as a table and a verdict computed from ``run``'s numbers.

    Per thread count: ``T_N``, the wall speed-up ``S``, the CPUs the pool used (CPU / wall), the share ratio
    against one thread, the CPU-time ratio ``CPU_1 / CPU_N`` (= ``S / share ratio``: below 100% the same job
    cost more CPU time on N threads) and Karp-Flatt's ``e`` from wall times. The verdict keeps apart what the
    numbers show (CPUs used, speed-up, extra CPU time beyond :data:`CPU_RATIO_BAND`) from what they cannot:
    a thread that waits (GIL, lock, serial part) uses no CPU, exactly like a thread a neighbour kept off its
    core, so a low share is either, and a CPU-time ratio near 100% says nothing about waiting.

    >>> run = ThreadScaling({1: 0.02, 2: 0.01}, {1: 0.02, 2: 0.02}, True, 5)
    >>> print(thread_lab_report(run, 2).splitlines()[-1][:31])
    线程用满了可用的 CPU，CPU 时间比也在 70%–130%
    """
    check_instance("run", run, ThreadScaling)
    check_int("cpus", cpus, low=1, high=4096)
    if load is not None:
        check_nonnegative("load", load, high=1e6)
    if sorted(run.wall)[0] != 1 or len(run.wall) < 2:
        raise ValueError(f"run must time 1 thread and at least one larger pool, got {sorted(run.wall)}")
    t1, r1 = run.wall[1], run.share(1)
    # load_per_cpu divides the whole machine's load by the usable CPUs: say so (under taskset they differ)
    busy = "" if load is None else (f"；测量前过去一分钟整台机器的负载，按这 {cpus} 个 CPU 折算，"
                                    f"每个 CPU 平均 {load:.1f} 个可运行的任务")
    lines = [f"可用 {cpus} 个 CPU{busy}；BLAS {'已' if run.blas_limited else '未'}限定为单线程；"
             f"各取 {run.rounds} 轮交替测量里居中的一轮",
             "线程数  T_N (ms)     S   CPU/墙钟  份额之比  CPU 时间比       e"]
    ratios, slower = {}, []
    for n in sorted(run.wall):
        s, share = t1 / run.wall[n], run.share(n) / r1
        ratios[n] = s / share
        if s < 1:
            slower.append(n)
        e = "" if n == 1 else f"{karp_flatt(s, n):7.3f}"
        lines.append(f"{n:>6} {run.wall[n] * 1e3:9.1f} {s:5.2f} {run.share(n):9.2f} {share:9.2f}"
                     f" {ratios[n]:11.1%} {e}")
    if slower:
        lines.append("e 大于 1 表示多线程反而比单线程慢（S < 1）：" + "、".join(f"{n} 个线程" for n in slower)
                     + "就是这样。")
    if not run.blas_limited:
        lines.append("注意：没有 threadpoolctl，BLAS 未被限定为单线程，单线程基线可能已用了几个核，"
                     "这组数不可信（pip install threadpoolctl 后重跑）。")
    # What the numbers show: the CPUs each pool used, and how S follows them.
    if r1 < 0.9:
        lines.append(f"单线程基线只用了 {r1:.2f} 个 CPU。")
    short = [n for n in run.wall if n > 1 and run.share(n) < 0.9 * min(n, cpus)]
    if short:
        lines.append("用上的 CPU 明显少于线程数（和可用 CPU 数）的："
                     + "、".join(f"{n} 个线程只用了 {run.share(n):.2f} 个" for n in short) + "。")
    # Each step 1 -> 2 -> 4 threads is up, flat or down by one threshold (5%): a steady rise (1.00 -> 1.14 ->
    # 1.21) is not "up and down", +10% then -20% is not "unchanged", 1.00 -> 2.00 -> 2.00 is "up, then flat".
    counts = sorted(run.wall)
    seq = [run.share(n) / r1 for n in counts]
    steps = ["上升" if b > 1.05 * a else "下降" if b < a / 1.05 else "持平" for a, b in zip(seq, seq[1:])]
    if set(steps) == {"持平"}:
        how = "线程数变了，用上的 CPU 几乎没变"
    elif set(steps) == {"上升"}:
        how = "线程越多，用上的 CPU 越多"
    elif set(steps) == {"下降"}:
        how = "线程越多，用上的 CPU 反而越少"
    else:
        how = ("、".join(f"{a} 到 {b} 个线程时{w}" for a, b, w in zip(counts, counts[1:], steps))
               + ("，用上的 CPU 随线程数忽高忽低" if {"上升", "下降"} <= set(steps) else ""))
    how = "份额之比 " + " → ".join(f"{v:.2f}" for v in seq) + "：" + how
    # Compare the ratios as printed (one decimal of a percent): 130.04% prints "130.0%" and stays inside.
    low, high = CPU_RATIO_BAND
    worst, best = round(min(ratios.values()), 3), round(max(ratios.values()), 3)
    steady = low <= worst and best <= high
    lines.append(how + ("，墙钟的 S 跟着它走。" if steady else "。"))
    # Once the share stops rising, the extra threads take turns on the CPUs they got (cell 54's answer): T_N
    # stops falling and Karp-Flatt's e rises for that alone (e = 1/3 for a perfect program, 4 threads on 2
    # CPUs), which a learner must not read as a serial fraction.
    stall = next(((a, b) for a, b, w in zip(counts, counts[1:], steps)
                  if w != "上升" and b > 1.05 * run.share(b)), None)
    if stall:
        a, b = stall
        full = run.share(b) >= 0.9 * cpus
        lines.append(f"从 {a} 个线程起用上的 CPU 不再增加：{b} 个线程只用上 {run.share(b):.2f} 个 CPU，"
                     f"多出的线程只能轮流用它们，T_{b} 不再下降；从这里起 e 的上升来自线程多于用上的 CPU"
                     + (f"（可用的 {cpus} 个 CPU 已用满），不是程序的开销。" if full else "。"))
    # What they cannot show: a waiting thread and a thread kept off its core both use no CPU.
    if r1 < 0.9 or short:
        why = ("CPU/墙钟 只数线程真正在算的时间：别的程序占着核，或者线程在等（GIL、锁、程序的串行部分），"
               "都让它变小，这组数分不出是哪一种")
        if load is not None and load < 0.5:
            why += "；不过测量前机器几乎空闲，少用的 CPU 多半是线程自己在等"
        lines.append(why + "。")
    band = (f"{low:.0%}–{high:.0%}（这是本书构建用的忙碌共享机器上重跑的摆动；空闲的机器上摆动小得多，"
            "这个区间会漏掉小的额外开销）")
    if worst < low:
        lines.append(f"CPU 时间比低到 {worst:.1%}，超出了 {band}：同样的活，多个线程多花了 CPU 时间，"
                     "线程互相拖慢（共享的缓存、内存带宽、超线程、降频），或者在空转等待、重复计算。")
    elif best > high:
        lines.append(f"CPU 时间比高到 {best:.1%}，超出了 {band}：同样的活，多个线程反而少花了 CPU 时间。"
                     "差这么多多半是测量受了干扰（负载在变，缓存、频率不同），换个空闲的时候重跑。")
    elif r1 < 0.9 or short:
        lines.append(f"CPU 时间比都在 {band}之内：测不出多花的 CPU 时间。它看不见不占 CPU 的等待，"
                     "所以不能说程序没有并行开销；e 里混着各线程数抢到的 CPU 份额的变化，不能当程序的开销来读。")
    else:
        within = [n for n in counts if 1 < n <= cpus]
        if len(within) == len(counts) - 1:
            read = "墙钟的 S 和 e 可以当这个程序在这台机器上的并行表现来读。"
        elif within:
            read = (f"不超过 {cpus} 个线程时，墙钟的 S 和 e 可以当这个程序在这台机器上的并行表现来读；"
                    f"多于 {cpus} 个线程时的 e 来自线程多于 CPU，不是程序的表现。")
        else:
            read = f"这里的线程池都多于 {cpus} 个 CPU，e 来自线程轮流用核，不是程序的并行表现。"
        lines.append(f"线程用满了可用的 CPU，CPU 时间比也在 {band}之内：" + read)
    return "\n".join(lines)
