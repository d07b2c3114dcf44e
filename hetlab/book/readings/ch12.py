"""Chapter 12 (misconceptions): readings of the measured cells, which differ from machine to machine.

Prose cannot promise "about 2x" for every reader (a busy shared machine can make a process pool slower than a
serial loop), so the chapter prints what *this* run shows:

- :func:`pool_spread_verdict`: over interleaved repeats, did threads stay near 1x (the GIL) and did processes
  approach ``min(workers, cores)``? Is a difference inside the run-to-run spread? Was the machine busy?
- :func:`split_verdict`: in the row-block matrix product, did N = 1 -> P divide the time, is the curve a
  bathtub, and how much of the right-hand rise is arithmetic versus dispatch?

The load sentence is :func:`hetlab.book.readings.ch04.load_note`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hetlab._validate import as_float_array, check_int, check_nonnegative, check_str
from hetlab.book.readings.ch04 import BUSY, load_note

__all__ = ["split_verdict", "pool_spread_verdict"]


def split_verdict(pieces: Any = (1, 2, 4), pool: Any = (3.0, 1.6, 1.7), kernel: Any = (3.0, 3.1, 3.3),
                  dispatch: Any = (0.01, 0.02, 0.04), workers: int = 2, load: float | None = None,
                  unit: str = "") -> str:
    """Read a :class:`hetlab.real.split_timing.SplitTiming` (any time unit): does N = 1 -> ``workers``
    come close to dividing the time by ``workers``; is the pool curve a bathtub (its minimum strictly
    inside, both ends at least 20 % higher); and, at the largest N, how much did the pure arithmetic
    grow compared with the dispatch cost (printed with ``unit``)? Returns Chinese lines.

    The pool time at N = 1 is checked against kernel + dispatch at N = 1: if it is more than 1.3 times
    slower, it is reported as an outlier. The speed-up and the bathtub test both start from the
    cheaper of the two N = 1 readings, so one slow reading cannot make a bathtub by itself.

    >>> print(split_verdict((1, 2, 4), (3.0, 1.6, 2.0), (3.0, 3.1, 3.4), (0.01, 0.02, 0.04), 2, 0.1).splitlines()[1])
    线程池时间在 N = 2 处最低，两头都至少高 20 %：这次的曲线呈“浴缸形”。
    """
    counts = as_float_array("pieces", pieces, low=1.0, high=1e9, finite=True, integer=True, empty=False)
    arrays = {}
    for name, value in (("pool", pool), ("kernel", kernel), ("dispatch", dispatch)):
        arr = as_float_array(name, value, low=0.0, high=1e12, finite=True, empty=False)
        if arr.shape != counts.shape or arr.ndim != 1:
            raise ValueError(f"pieces and {name} must be flat lists of the same length, got shapes "
                             f"{counts.shape} and {arr.shape}")
        arrays[name] = arr
    pl, ke, di = arrays["pool"], arrays["kernel"], arrays["dispatch"]
    if pl.min() <= 0 or ke.min() <= 0:
        raise ValueError("pool and kernel times must be positive (a measured product takes time)")
    w = check_int("workers", workers, low=1, high=4096)
    u = check_str("unit", unit, empty=True)
    lines = []
    at = {int(n): i for i, n in enumerate(counts)}
    left = pl[0]
    if 1 in at:
        # N = 1 on the pool should cost one kernel plus one dispatch; a much slower reading is an outlier
        # (the machine was interrupted), so the left end is read from the cheaper of the two.
        i1 = at[1]
        expect = ke[i1] + di[i1]
        if pl[i1] > 1.3 * expect:
            lines.append(f"N = 1 的线程池读数 {pl[i1]:.3g}{u} 比“纯计算 + 派发” {expect:.3g}{u} 慢了 "
                         f"{pl[i1] / expect:.2f} 倍：这次读数是离群值（测量被打断），下面改用 {expect:.3g}{u} "
                         "作为 N = 1 的时间。")
            if i1 == 0:
                left = expect
        elif pl[i1] < expect / 1.05:
            lines.append(f"N = 1 的线程池读数 {pl[i1]:.3g}{u} 反而比“纯计算 + 派发” {expect:.3g}{u} 快 "
                         f"{1 - pl[i1] / expect:.0%}：按模型它不可能更快，差别来自同一格内部的测量波动"
                         "（CPU 频率变化、缓存已经预热）；两栏之差应当看作这次测量误差的量级。")
        base = min(pl[i1], expect)
        if i1 == 0:
            left = base          # the left end of the curve is the cheaper of the two N = 1 readings
    busy = load is not None and check_nonnegative("load", load, high=1e6) > BUSY
    if 1 in at and w in at and w > 1:
        gain = base / pl[at[w]]
        # the best pool time at any multiple of `workers` shows whether the extra cores were usable
        mult = [i for i, n in enumerate(counts) if int(n) % w == 0]
        best_gain = base / min(pl[i] for i in mult)
        change = (f"加速比 {gain:.2f}x" if gain >= 1 else
                  f"加速比 {gain:.2f}x（反而变慢 {1 / gain - 1:.0%}）")
        if gain > 1.1 * w:
            verdict = (f"超过了理想的 {w} 倍，这不可能是真实加速：N = 1 的读数（或其中的“纯计算”一栏）"
                       "这次受了干扰、偏慢，应把它看作测量噪声")
        elif gain >= 0.8 * w:
            verdict = f"接近理想的 {w} 倍"
        elif busy:
            verdict = f"远不到理想的 {w} 倍：机器此刻很忙，第二个核没有真正空出来"
        elif best_gain >= 0.8 * w or best_gain >= 1.5 * max(gain, 1e-12):
            verdict = (f"远不到理想的 {w} 倍；可同一张表里 {w} 的倍数处最好达到 {best_gain:.2f}x，核是空出来的："
                       f"N = {w} 这一格疑似离群值，请重跑")
        elif gain < 1:
            verdict = ("两个线程反而比一个慢：负载一行显示机器不忙，但它是过去一分钟的平均，抓不住几秒内的干扰；"
                       "第二个核这次多半没有真正空出来（也可能是线程间争抢内存带宽或缓存），在空闲时重跑再下结论")
        else:
            verdict = (f"远不到理想的 {w} 倍：机器不忙，可能是线程间争抢内存带宽或缓存，"
                       "也可能是负载平均抓不住的短暂干扰")
        cores_used = ke[at[w]] / pl[at[w]]
        lines.append(f"N = 1 → {w}：{change}，{verdict}。N = {w} 时，纯计算 {ke[at[w]]:.3g}{u} 在线程池上用了 "
                     f"{pl[at[w]]:.3g}{u}，相当于平均同时用上 {cores_used:.2f} 个核（理想是 {w} 个）。")
    else:
        lines.append(f"（表中没有 N = 1 和 N = {w} 两行，无法比较左侧的下坡。）")
    b = int(np.argmin(pl))
    best = int(counts[b])
    if 0 < b < len(pl) - 1 and left >= 1.2 * pl[b] and pl[-1] >= 1.2 * pl[b]:
        lines.append(f"线程池时间在 N = {best} 处最低，两头都至少高 20 %：这次的曲线呈“浴缸形”。")
    elif b == 0:
        lines.append(f"线程池时间最低就在最左端 N = {best}：这次没有下坡，曲线是一段（或先平后升的）上坡，不是浴缸。")
    elif left < 1.2 * pl[b]:
        lines.append(f"线程池时间最低在 N = {best}，但最左端与它相差不到 20 %：这次没有明显的下坡，"
                     "曲线更像一段平地接一段上坡，不是浴缸。")
    else:
        lines.append(f"线程池时间在最右端 N = {best} 最低：这次没有上坡（少见，多半是测量被打断）。")
    grow = ke[-1] - ke[0]
    lines.append(f"N = {int(counts[-1])} 时：纯计算比 N = {int(counts[0])} 多了 {grow:.3g}{u}，"
                 f"派发开销共 {di[-1]:.3g}{u}；"
                 + ("右侧上涨的大头是计算本身变慢，不是派发。" if grow > di[-1] else
                    "这次派发开销比计算的增量还大。"))
    lines.append(load_note(load))
    return "\n".join(lines)


def pool_spread_verdict(serial: Any = (1.0, 1.0, 1.0), threads: Any = (1.0, 1.0, 1.0),
                        processes: Any = (0.5, 0.5, 0.5), cores: int = 2, workers: int = 8,
                        load: float | None = None) -> str:
    """Read interleaved repeats of serial / thread-pool / process-pool timings (seconds, one
    entry per round). Prints median and min-max of each; calls the thread-pool difference
    "noise" only when the thread interval overlaps the serial one. Returns Chinese lines.

    >>> print(pool_spread_verdict((1.0, 1.1, 0.9), (1.05, 0.95, 1.0), (0.5, 0.6, 0.55), load=0.1).splitlines()[1][:34])
    线程池相对串行 1.00x：两者的区间重叠，差别在重复测量的波动之内
    """
    arrays = []
    for name, xs in (("serial", serial), ("threads", threads), ("processes", processes)):
        a = as_float_array(name, xs)
        if a.ndim != 1 or a.size < 1 or not np.all(np.isfinite(a)) or np.any(a <= 0):
            raise ValueError(f"{name} must be a non-empty 1-D sequence of positive finite seconds, got {xs!r}")
        arrays.append(a)
    s, t, pr = arrays
    if not s.size == t.size == pr.size:
        raise ValueError(f"serial, threads and processes must have the same length, got {s.size}, {t.size}, {pr.size}")
    c = check_int("cores", cores, low=1, high=4096)
    w = check_int("workers", workers, low=1, high=4096)
    busy = load is not None and check_nonnegative("load", load, high=1e6) > BUSY
    ms, mt, mp = (float(np.median(a)) for a in (s, t, pr))
    head = (f"重复 {s.size} 轮（三种方式交替计时），中位数 [最小–最大]："
            f"串行 {ms:.3f} [{s.min():.3f}–{s.max():.3f}] 秒，"
            f"线程池 {mt:.3f} [{t.min():.3f}–{t.max():.3f}] 秒，进程池 {mp:.3f} [{pr.min():.3f}–{pr.max():.3f}] 秒")
    st, sp, bound = ms / mt, ms / mp, min(w, c)
    overlap = t.min() <= s.max() and s.min() <= t.max()
    if overlap:
        line_t = (f"线程池相对串行 {st:.2f}x：两者的区间重叠，差别在重复测量的波动之内，符合 GIL 的预期"
                  "（同一时刻只有一个线程执行 Python 字节码）。")
    elif st > 1:
        line_t = (f"线程池相对串行 {st:.2f}x：超出了重复测量的波动，不符合带 GIL 的预期；多半是串行那几轮恰好被"
                  "别的程序打断，也可能这个 Python 是无 GIL 构建。在空闲时重跑再下结论。")
    else:
        line_t = (f"线程池相对串行 {st:.2f}x：比串行还慢，超出了重复测量的波动：线程轮流抢 GIL、来回切换的代价"
                  "（或测量时机器负载的变化）。它同样说明线程没有带来并行。")
    lo_sp, hi_sp = float(s.min() / pr.max()), float(s.max() / pr.min())
    low_p = float(s.min() / np.median(pr))
    if bound != 1 and sp > bound:
        line_p = (f"进程池按中位数 {sp:.2f}x，按串行最小值只有 {low_p:.2f}x"
                  f"（按区间算在 {lo_sp:.2f}–{hi_sp:.2f}x 之间）："
                  f"中位数倍数超过了模型上限 min(工作者数, 核数) = {bound}，这不可能是真实加速，"
                  "说明串行的中位数这次被干扰拖慢了；应当按区间来读。")
    else:
        line_p = (_process_pool_line(sp, bound, busy)
                  + f"（这是按中位数；按串行最小值算是 {low_p:.2f}x，按区间在 {lo_sp:.2f}–{hi_sp:.2f}x 之间。）")
    return "\n".join([head, line_t, line_p, load_note(load)])


def _process_pool_line(sp: float, bound: int, busy: bool) -> str:
    """The reading of a process-pool speed-up ``sp`` at or below ``bound`` = min(workers, cores)."""
    if bound == 1:
        return f"进程池 {sp:.2f}x：只有 1 个可用核，进程池不可能快过串行。"
    if sp >= 0.75 * bound:
        return f"进程池 {sp:.2f}x：接近上限 min(工作者数, 核数) = {bound}，几个进程真的在不同的核上同时计算。"
    if sp > 1.1:
        why = "机器此刻很忙，工作者抢不到全部空闲的核" if busy else "传递参数、结果和进程切换吃掉了一部分收益"
        return f"进程池 {sp:.2f}x：快于串行，但离上限 {bound} 还远：{why}。"
    why = ("机器此刻很忙，别的程序占着核，多出来的进程没有空闲的核可用"
           if busy else "任务太小，进程间传递参数和结果的开销盖过了计算")
    return f"进程池 {sp:.2f}x：没有快过串行（上限本应是 {bound}）：{why}。"
