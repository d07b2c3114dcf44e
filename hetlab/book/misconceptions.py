"""Chapter 12's experiments, read aloud: Chinese verdicts on measured timings, and two small formulas.

The measured cells of chapter 12 differ from machine to machine and from minute to minute (a busy
shared machine can make a process pool slower than a serial loop). Prose cannot promise "about 2x"
for every reader, so the chapter prints what *this* run shows:

- :func:`pool_verdict`: did threads stay near 1x (the GIL) and did processes approach
  ``min(workers, cores)``? If not, was the machine busy (:func:`hetlab.real.measure.load_per_cpu`)?
- :func:`split_verdict`: in the row-block matrix product, did N = 1 -> P halve the time, is the
  curve a bathtub, and how much of the right-hand rise is arithmetic versus dispatch?

and two formulas the chapter needs: :func:`amdahl_p_for` (which parallel fraction a target speed-up
needs) and :func:`round_trip_us` (one operator falling back from an accelerator to the CPU costs
two copies).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hetlab._validate import (
    as_float_array,
    check_finite_result,
    check_int,
    check_nonnegative,
    check_positive,
    check_str,
)

__all__ = ["load_note", "pool_verdict", "split_verdict", "amdahl_p_for", "round_trip_us", "pool_spread_verdict",
           "offload_crossover", "best_cards", "row_block_intensity"]

#: Runnable processes per CPU above which a timing is flagged as taken on a busy machine.
BUSY = 0.5


def load_note(load: float | None = None) -> str:
    """One Chinese sentence on the machine's load (``None``: the system reports none)."""
    if load is None:
        return "（本系统不报告负载，无法判断机器是否空闲。）"
    lo = check_nonnegative("load", load, high=1e6)
    if lo > BUSY:
        return (f"注意：测量时每个 CPU 平均有 {lo:.2f} 个可运行进程，机器在忙别的事，"
                "这次的数字会偏慢、偏乱；在空闲时重跑一次再下结论。")
    return f"测量时机器基本空闲（每个 CPU 平均 {lo:.2f} 个可运行进程）。"


def pool_verdict(serial: float = 1.0, threads: float = 1.0, processes: float = 0.5, cores: int = 2,
                 workers: int = 8, load: float | None = None) -> str:
    """Read one :func:`hetlab.real.measure.time_pools` result (seconds) against the GIL model:
    threads ~ 1x, processes ~ ``min(workers, cores)``x. Returns Chinese lines.

    >>> print(pool_verdict(1.0, 1.02, 0.52, cores=2, workers=8, load=0.1).splitlines()[1])
    进程池 1.92x：接近上限 min(工作者数, 核数) = 2，几个进程真的在不同的核上同时计算。
    """
    s = check_positive("serial", serial, high=1e6)
    t = check_positive("threads", threads, high=1e6)
    pr = check_positive("processes", processes, high=1e6)
    c = check_int("cores", cores, low=1, high=4096)
    w = check_int("workers", workers, low=1, high=4096)
    busy = load is not None and check_nonnegative("load", load, high=1e6) > BUSY
    st, sp, bound = s / t, s / pr, min(w, c)
    if st < 1.15:
        line_t = f"线程池 {st:.2f}x：与串行相当，符合 GIL 的预期（同一时刻只有一个线程执行 Python 字节码）。"
    elif st < 1.5:
        line_t = (f"线程池 {st:.2f}x：比串行略快，但远不到核数倍；这点差别在测量噪声之内（几次测量被别的程序"
                  "打断的程度不同），仍符合 GIL 的预期。")
    else:
        line_t = (f"线程池 {st:.2f}x：明显快于串行，不符合带 GIL 的预期；这个 Python 可能是无 GIL 构建"
                  "（PEP 703），或者串行那次被别的程序打断了。")
    line_p = _process_pool_line(sp, bound, busy)
    return "\n".join([line_t, line_p, load_note(load)])


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


def amdahl_p_for(speedup: float = 7.5, n_devices: int = 8) -> float:
    """The parallel fraction p for which Amdahl's law gives ``speedup`` on ``n_devices``:
    ``p = (1 - 1/S) / (1 - 1/N)``, for ``1 <= S <= N`` and ``N >= 2``.

    >>> round(amdahl_p_for(7.5, 8), 4)
    0.9905
    """
    n = check_int("n_devices", n_devices, low=2, high=10**9)
    s = check_positive("speedup", speedup)
    if not 1.0 <= s <= n:
        raise ValueError(f"speedup must be in [1, n_devices] = [1, {n}], got {speedup!r}")
    return float((1.0 - 1.0 / s) / (1.0 - 1.0 / n))


def row_block_intensity(rows: int = 1, n: int = 600, bytes_per_element: int = 8, reads_all_of_b: bool = True) -> float:
    """Arithmetic intensity (FLOP/byte) of one ``rows x n`` block of an ``n x n`` matrix product:
    ``2 rows n^2`` FLOPs over ``bytes_per_element * (2 rows n + n^2)`` bytes (read the block of A and
    all of B, write the block of C; each moved once). ``reads_all_of_b=False`` drops the ``n^2`` term:
    the common slip of forgetting that every block re-reads all of B (it gives ``n / (2 b)`` for any
    ``rows``), kept so that chapter 12's quiz can show where that slip leads.

    >>> round(row_block_intensity(1, 600), 2), round(row_block_intensity(600, 600), 2)
    (0.25, 50.0)
    """
    n = check_int("n", n, low=1, high=10**6)
    r = check_int("rows", rows, low=1, high=n)
    b = check_int("bytes_per_element", bytes_per_element, low=1, high=16)
    if not isinstance(reads_all_of_b, (bool, np.bool_)):
        raise TypeError(f"reads_all_of_b must be True or False, got {type(reads_all_of_b).__name__} {reads_all_of_b!r}")
    moved = 2 * r * n + (n * n if reads_all_of_b else 0)
    return float(2.0 * r * n * n / (b * moved))


def round_trip_us(nbytes: float = 2e6, bandwidth: float = 25e9, launch: float = 10e-6) -> float:
    """Microseconds for one tensor of ``nbytes`` to leave an accelerator for the CPU and come back:
    two copies of ``launch + nbytes / bandwidth`` seconds each (chapter 12's copy model).

    >>> round(round_trip_us(2e6, 25e9, 10e-6), 1)     # 2 MB over 25 GB/s: 2 x (10 + 80) us
    180.0
    """
    b = check_nonnegative("nbytes", nbytes, high=1e15)
    bw = check_positive("bandwidth", bandwidth, high=1e15)
    lat = check_nonnegative("launch", launch, high=1e3)
    return float(check_finite_result(2.0 * (lat + b / bw) * 1e6, nbytes=b, bandwidth=bw, launch=lat))


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


def offload_crossover(cpu_flops: float = 1e12, gpu_flops: float = 15e12, bandwidth: float = 25e9,
                      launch: float = 1e-5, copies: int = 3, max_n: int = 8192) -> int:
    """Smallest ``n`` (>= 1) at which the GPU with ``copies`` host-device copies beats the CPU in
    :func:`hetlab.formulas.matmul_offload_ms` (float32); ``max_n + 1`` if it never does up to ``max_n``.
    The search is :func:`hetlab.real.measure.offload_breakeven`'s, in chapter 12's units (FLOP/s, bytes/s).

    >>> offload_crossover()
    373
    >>> offload_crossover(cpu_flops=100e9) < 373     # a slower CPU: the GPU wins sooner
    True
    """
    from hetlab.real.measure import offload_breakeven

    max_n = check_int("max_n", max_n, low=1, high=100_000)
    # The ranges of offload_breakeven, checked here under this function's own parameter names.
    cpu = check_positive("cpu_flops", cpu_flops, high=1e16)
    gpu = check_positive("gpu_flops", gpu_flops, high=1e18)
    bw = check_positive("bandwidth", bandwidth, high=1e14)
    lat = check_nonnegative("launch", launch, high=1.0)
    copies = check_int("copies", copies, low=0, high=1000)
    try:
        n = offload_breakeven(cpu / 1e9, gpu / 1e12, bw / 1e9, element_bytes=4, launch_s=lat, copies=copies)
    except ValueError:   # the only one left after the checks above: no break-even below n = 1e9
        return max_n + 1
    return n if 0 < n <= max_n else max_n + 1


def best_cards(p: float, grad_bytes: float = 0.5e9, bandwidth: float = 25e9, latency: float = 20e-6,
               max_n: int = 1024) -> tuple[int, float]:
    """The card count in [1, max_n] with the highest speed-up under Amdahl plus a ring all-reduce
    (one-second single-card step), and that speed-up: the reference for exercise 12.1.

    >>> best_cards(0.95)
    (151, 9.80...)
    """
    from hetlab import strong_scaling as ss

    max_n = check_int("max_n", max_n, low=1, high=1_000_000)
    link = dict(grad_bytes=grad_bytes, bandwidth=bandwidth, latency=latency)
    best = ss.best_device_count(p, max_devices=max_n, **link)
    return best, float(ss.speedup_with_allreduce(p, best, **link))


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
