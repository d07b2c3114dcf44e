"""Chapter 12 (misconceptions): readings of the measured cells, each robust on any machine.

A measured cell prints the prediction made before the run (from the CPU count, or from a calibration taken
before the sweep), then the measurement, then one verdict per lesson that follows from the printed numbers,
and last the same experiment on a named machine (:mod:`hetlab.book.reference`):

- :func:`gil_lines` (12.1): effective parallelism (CPU seconds per wall second) of threads and processes, and
  the waits that threads overlap; :func:`thread_verdict` and :func:`process_verdict` are its two verdicts,
  which appendix A1 reuses, and :func:`contrast_verdict` says whether the run could show the contrast at all;
- :func:`split_lines` (12.2): one matrix product split into N row blocks, read in CPU seconds: the
  computation slows as the blocks thin, against the dispatch cost and against :func:`split_prediction`;
  :func:`descent_line` reads the N = 1 -> P step only when the one-block run did not wait for a core, and
  :func:`gap_split` splits the pool's excess at the most pieces into three measured parts; the same split with
  BLAS pinned to one thread and to several is read by :mod:`hetlab.book.readings.ch12_nested`.
"""
from __future__ import annotations

from hetlab._validate import check_instance, check_int, check_nonnegative, check_str
from hetlab.book.readings.ch12_share import share_prediction, share_verdict
from hetlab.book.reference import Reference
from hetlab.models import granularity as G
from hetlab.real.experiments import GilReading
from hetlab.real.split_timing import SplitTiming

__all__ = ["TOLERANCE", "NOISE_FLOOR", "thread_verdict", "process_verdict", "contrast_verdict", "gil_lines",
           "split_prediction", "waiting", "descent_line", "gap_split", "gap_verdict", "split_lines", "split_table",
           "split_details",
           "TICK", "CONTRAST_MARGIN"]

#: Effective parallelism above 1 + TOLERANCE counts as "more than one core": the first start and the last end of
#: a run come from clock readings in different threads, which read a one-core run a few percent high.
TOLERANCE = 0.05

#: The smallest relative change of a CPU-second reading that 12.2 reads as more than noise (a floor under the
#: run's own noise estimate, see :func:`_noise`): the min-of-5 CPU times of one block vary by a few percent.
NOISE_FLOOR = 0.05

#: One scheduler tick in seconds (Linux with CONFIG_HZ = 250, the build machine's kernel: 4 ms; other kernels
#: tick every 1-10 ms). The kernel charges a thread that is running on another CPU with its runtime as of its
#: last tick, so a short window can read up to one tick high or low per such thread: min(threads, CPUs) ticks
#: in all (:func:`_ticks`; review ch12-6 #2 measured +3.8 ms over 5 ms windows).
#: ``time.get_clock_info("process_time").resolution`` is the
#: clock's unit (1 ns), not this accounting granularity.
TICK = 4e-3

#: 12.1's contrast counts as shown only when the process pool got at least this far above one core (and twice
#: the serial run's distance from one core, the run's own noise): a second core busy for under 30 % of the run is
#: what a competing program pausing for a moment gives, not evidence of two cores computing side by side.
CONTRAST_MARGIN = 0.3


def thread_verdict(parallelism: float, who: str = "线程", shown: bool = True) -> str:
    """One sentence on a thread pool's effective parallelism (CPU seconds per wall second): at most
    ``1 + TOLERANCE`` is "not above one core", as the GIL predicts; above it only an interpreter without the
    GIL can go. ``who`` names the threads. ``shown``: whether the same run's processes got above one core;
    if not, a reading at most one core does not tell a GIL from none, so no mechanism is asserted.

    >>> thread_verdict(0.62)
    '线程池 0.62 ≤ 1 + 0.05：线程轮流执行 Python 字节码，同一时刻至多一个在算，与 GIL 的预测相符'
    """
    par = check_nonnegative("parallelism", parallelism, high=1e4)
    who = check_str("who", who)
    check_instance("shown", shown, bool)
    if par <= 1 + TOLERANCE and not shown:
        return f"线程池 {par:.2f} ≤ 1 + {TOLERANCE:g}：与 GIL 的预测相符（这次还区分不了，见下）"
    if par <= 1 + TOLERANCE:
        return (f"线程池 {par:.2f} ≤ 1 + {TOLERANCE:g}：{who}轮流执行 Python 字节码，同一时刻至多一个在算，"
                "与 GIL 的预测相符")
    return (f"线程池 {par:.2f} > 1 + {TOLERANCE:g}：{who}同时在算，与 GIL 的预测不符——这个解释器没有 GIL"
            "（PEP 703 的无 GIL 构建）")


def process_verdict(parallelism: float, cores: int, serial: float) -> str:
    """One sentence on a process pool's effective parallelism against ``cores`` = min(processes, usable CPUs),
    the prediction's ceiling; ``serial`` is the effective parallelism of one thread running alone in the same
    experiment, the share of a core this machine gave it (1 on an idle machine). "Computing side by side" needs
    the margin of :func:`contrast_verdict`, ``max(CONTRAST_MARGIN, 2 |1 - serial|)`` above one core.

    >>> process_verdict(1.85, 2, 0.99)
    '进程池 1.85 > 1 + 0.30：几个进程真的同时在不同的核上计算（上限 2）'
    """
    par = check_nonnegative("parallelism", parallelism, high=1e4)
    cores = check_int("cores", cores, low=1, high=4096)
    serial = check_nonnegative("serial", serial, high=1e4)
    if cores == 1:
        return f"进程池 {par:.2f}：只有 1 个可用 CPU，进程也只能轮流执行（上限 1）"
    margin = max(CONTRAST_MARGIN, 2 * abs(1 - serial))       # the same margin as contrast_verdict
    if par > 1 + margin:
        return f"进程池 {par:.2f} > 1 + {margin:.2f}：几个进程真的同时在不同的核上计算（上限 {cores}）"
    if par > 1 + TOLERANCE:
        return (f"进程池 {par:.2f}，比 1 个核只多 {par - 1:.2f}，不到判据 {margin:.2f}：" + _beyond(margin, cores)
                + f"（上限 {cores}）")
    return (f"进程池 {par:.2f}，没有超过 1 个核（上限 {cores}）：这次本机没有第二个空闲的核"
            + (f"——一个线程单独运行也只分到 {serial:.2f} 个核，别的程序正在用 CPU" if serial < 0.9 else ""))


def _beyond(margin: float, cores: int) -> str:
    """Why a process pool above one core is still no contrast: a short share of the second core, or, where the
    noise pushed the margin past the cores this machine can add (review ch12-21 #8c), a criterion it cannot meet.

    >>> _beyond(1.15, 2)
    '这次的噪声太大，判据已超过本机最多能多给的 1 个核'
    """
    if 1 + margin >= cores:
        return f"这次的噪声太大，判据已超过本机最多能多给的 {cores - 1} 个核"
    return "第二个核只分到一小段时间"


def _runs(reading: GilReading) -> tuple[float, float, float]:
    return reading.serial.parallelism, reading.thread_pool.parallelism, reading.process_pool.parallelism


def gil_lines(reading: GilReading, reference: Reference | None = None, busy: float | None = None) -> str:
    """12.1: the prediction made before the run (threads from the GIL; processes from ``busy``, the CPUs other
    work kept busy just before it, :func:`hetlab.real.cpu_load.busy_cpus`, None where it could not be read), the
    three runs' effective parallelism, one verdict each for threads and processes and the process pool against
    its prediction (:mod:`hetlab.book.readings.ch12_share`), the waits that threads do overlap, and the stored
    machine's reading."""
    check_instance("reading", reading, GilReading)
    s, t, p = _runs(reading)
    n = reading.threads
    cores = min(reading.processes, reading.cpus)
    ceiling = 1 if reading.gil else min(n, reading.cpus)
    waits = reading.wait_serial.wall / reading.wait_threads.wall
    lines = [f"本机 {reading.cpus} 个可用 CPU。运行前的预测：{n} 个线程 ≤ {ceiling} 个核"
             + ("（GIL）" if reading.gil else "（这个解释器关闭了 GIL）")
             + ("，" if busy is None else "；") + share_prediction(reading.processes, reading.cpus, busy),
             f"有效并行度（CPU 秒之和 ÷ 首个开始到最后一个结束的墙钟秒）：一个接一个 {s:.2f}，{n} 个线程 {t:.2f}，"
             f"{reading.processes} 个进程 {p:.2f}",
             thread_verdict(t, f"{n} 个线程", shown=cores > 1 and p > 1 + TOLERANCE) if reading.gil else
             f"线程池 {t:.2f}：这个解释器没有 GIL，线程可以同时计算（上限 {ceiling}）",
             process_verdict(p, cores, s)]
    if busy is not None:
        lines.append(share_verdict(p, reading.processes, reading.cpus, busy, s))
    lines.append(f"{n} 次等待（time.sleep）：一个接一个 {reading.wait_serial.wall:.3f} 秒，{n} 个线程 "
                 f"{reading.wait_threads.wall:.3f} 秒，" + (f"快 {waits:.1f} 倍——等待可以重叠，这是线程真正的用处"
                                                          if waits > 1 else "并没有更快"))
    lines.append(contrast_verdict(t, p, cores, s))
    if reference is not None and check_instance("reference", reference, Reference).gil is not None:
        rs, rt, rp = _runs(reference.gil)
        g = reference.gil
        margin = max(CONTRAST_MARGIN, 2 * abs(1 - rs))
        seen = (f"这份参照上进程池用了 {rp:.2f} 个核，比 1 个核多出判据 {margin:.2f} 以上，对比出现了"
                if rp > 1 + margin and rt <= 1 + TOLERANCE
                else "这份参照测时也没有空闲的核，对比同样没有出现")
        lines.append(f"参照 · {reference.label}：一个接一个 {rs:.2f}，{g.threads} 个线程 {rt:.2f}，"
                     f"{g.processes} 个进程 {rp:.2f}；等待快 {g.wait_serial.wall / g.wait_threads.wall:.1f} 倍；"
                     + seen)
    return "\n".join(lines)


def contrast_verdict(threads: float, processes: float, cores: int, serial: float = 1.0) -> str:
    """12.1's lesson in one sentence, from one run's own numbers: the contrast between threads (at most one core
    under the GIL) and processes (more than one core) appears only when the process pool got above one core;
    with ``cores`` = 1, or no free core at the time, it cannot appear, and a thread pool's reading at most one
    core then does not tell a GIL from none. The process pool must clear one core by the margin
    ``max(CONTRAST_MARGIN, 2 |1 - serial|)`` (``serial``: one thread alone, whose distance from one core is the
    run's noise); a process pool above ``1 + TOLERANCE`` but within that margin is a weak contrast, not shown.

    >>> contrast_verdict(0.96, 1.08, 2).split("：")[0]       # 1.08 - 1 = 0.08 < 0.3
    '对比很弱'
    >>> contrast_verdict(0.6, 1.9, 2)
    '对比出现了：同样的纯 Python 循环，线程池用了 0.60 个核，进程池用了 1.90 个核（比 1 个核多 0.90，超过判据 0.30）'
    """
    thr = check_nonnegative("threads", threads, high=1e4)
    pro = check_nonnegative("processes", processes, high=1e4)
    cores = check_int("cores", cores, low=1, high=4096)
    margin = max(CONTRAST_MARGIN, 2 * abs(1 - check_nonnegative("serial", serial, high=1e4)))
    if cores == 1:
        return "对比在这台机器上出现不了：只有 1 个可用 CPU，进程池也只有一个核可用"
    if pro > 1 + margin and thr <= 1 + TOLERANCE:
        return (f"对比出现了：同样的纯 Python 循环，线程池用了 {thr:.2f} 个核，进程池用了 {pro:.2f} 个核"
                f"（比 1 个核多 {pro - 1:.2f}，超过判据 {margin:.2f}）")
    if pro > 1 + TOLERANCE and thr <= 1 + TOLERANCE:
        return (f"对比很弱：进程池 {pro:.2f} 只比 1 个核多 {pro - 1:.2f}，不到判据 {margin:.2f}（至少 "
                f"{CONTRAST_MARGIN:g}，且不小于单线程读数离 1 的两倍）："
                + ("第二个核这次只分到一小段时间" if 1 + margin < cores else _beyond(margin, cores))
                + "，要看清对比，需要一台此刻有空闲核的机器")
    if pro > 1 + TOLERANCE:
        return (f"线程池 {thr:.2f} 和进程池 {pro:.2f} 都超过 1 个核："
                + ("这个解释器的线程能同时计算" if thr > 1 + margin else "差距在噪声以内，这次区分不了"))
    return ("这次对比出现不了：本机此刻没有第二个空闲的核，进程池也停在 1 个核附近或以下；"
            "线程池的读数 ≤ 1 在这里也区分不了有没有 GIL——没有 GIL 的解释器在这里同样 ≤ 1。"
            "要看到对比，需要一台此刻有空闲核的机器")


def split_prediction(timing: SplitTiming) -> tuple[float, ...]:
    """Chapter 4's rounds model with W fixed, ``N os0 + ceil(N / P) w0 / N`` at every piece count (seconds),
    from the two figures :func:`hetlab.real.split_timing.split_matmul_timing` calibrated before its sweep."""
    check_instance("timing", timing, SplitTiming)
    return tuple(float(G.total_time_on(k, timing.w0, timing.os0, timing.workers, model="rounds"))
                 for k in timing.pieces)


def _growth(timing: SplitTiming) -> tuple[float, float, float]:
    """(kernel at the most pieces / at the fewest, the kernel's growth in seconds, dispatch at the most pieces)."""
    return timing.kernel[-1] / timing.kernel[0], timing.kernel[-1] - timing.kernel[0], timing.dispatch[-1]


def _noise(timing: SplitTiming) -> float:
    """The run's own noise, relative: the same code (the whole product in one block, written into the
    preallocated result) is timed twice, by the calibration ``w0`` and by the kernel column at the fewest
    pieces when that is 1, so their relative difference, floored at NOISE_FLOOR, is the size of a change the
    run cannot tell from chance."""
    same = timing.pieces[0] == 1
    return max(NOISE_FLOOR, abs(timing.kernel[0] - timing.w0) / timing.w0 if same else 0.0)


def _dip_line(timing: SplitTiming) -> str:
    """The largest fall of the kernel column, diagnosed only when it exceeds twice the run's noise."""
    ms, noise = 1e3, _noise(timing)
    dips = [((timing.kernel[i] - timing.kernel[i + 1]) / timing.kernel[i], i) for i in range(len(timing.pieces) - 1)
            if timing.kernel[i + 1] < timing.kernel[i]]
    if not dips:
        return "纯计算一栏随 N 单调上涨"
    fall, i = max(dips)
    if fall <= 2 * noise:
        return (f"纯计算一栏最大的回落（N = {timing.pieces[i]} → {timing.pieces[i + 1]}，{fall:.0%}）不超过本次"
                f"噪声 {noise:.0%} 的两倍，看作测量的起伏")
    return (f"纯计算一栏并不单调：N = {timing.pieces[i]} → {timing.pieces[i + 1]} 时从 "
            f"{timing.kernel[i] * ms:.1f} 降到 {timing.kernel[i + 1] * ms:.1f} 毫秒（回落 {fall:.0%}，"
            f"超过本次噪声 {noise:.0%} 的两倍）——很可能是 BLAS 按块的形状挑选内核，每种形状的代价不同")


def _ceiling(timing: SplitTiming, i: int) -> int:
    """How many cores row ``i`` can keep busy: min(N blocks x BLAS threads, P), P being the pool's size, which
    :func:`hetlab.real.split_timing.split_matmul_timing` sets to the usable CPUs."""
    return min(timing.pieces[i] * timing.blas_threads, timing.workers)


def _ticks(timing: SplitTiming, i: int = -1) -> int:
    """How many ticks ``process_time`` may misread row ``i`` by: one per thread that can run on another CPU,
    min(threads, CPUs) = min(N x BLAS threads, P) (:func:`_ceiling`)."""
    return _ceiling(timing, i % len(timing.pieces))


def _window_runs(timing: SplitTiming, i: int = -1) -> int:
    """How many back-to-back pool runs one clock window timed at row ``i`` (one in readings without
    ``pool_runs``)."""
    return timing.pool_runs[i] if timing.pool_runs else 1


def _tick_error(timing: SplitTiming, i: int = -1) -> float:
    """The most ``process_time`` may misread one pool run's CPU seconds by at row ``i``, in seconds: one
    :data:`TICK` per thread that can run on another CPU (:func:`_ticks`) over the clock window, which held
    :func:`_window_runs` runs, so a per-run mean carries that share of it (review ch12-10 #2). Every tick term
    of chapter 12 is this one; :func:`_tick_words` says it in words.

    >>> t = SplitTiming(600, 2, 1, (1, 16), (9e-3, 6e-3), (9e-3, 9e-3), (0.0, 0.0), w0=9e-3, os0=1e-6,
    ...                 pool_cpu=(9e-3, 12e-3), pool_runs=(12, 16))
    >>> round(_tick_error(t) * 1e3, 2), _tick_words(t)      # 2 threads x 4 ms / 16 runs in one window
    (0.5, '2 个时钟节拍 ÷ 连跑的 16 遍')
    """
    return _ticks(timing, i) * TICK / _window_runs(timing, i)


def _tick_words(timing: SplitTiming, i: int = -1) -> str:
    """:func:`_tick_error` in words: the ticks, divided by the runs in the window when there were several."""
    runs = _window_runs(timing, i)
    return f"{_ticks(timing, i)} 个时钟节拍" + (f" ÷ 连跑的 {runs} 遍" if runs > 1 else "")


def _impossible_rows(timing: SplitTiming) -> tuple[int, ...]:
    """The piece counts whose pool CPU seconds exceed what the run could spend, ``min(N T, P) x wall`` plus the
    clock's tick error (:func:`_tick_error`: one scheduler tick per thread that can run on another CPU, over the
    runs in the window): a physically impossible reading, an accounting error of ``process_time`` over a short
    window, flagged, not interpreted.

    >>> _impossible_rows(SplitTiming(10, 2, 1, (1, 2), (8.79e-3, 4.65e-3), (8.55e-3, 8.5e-3), (0.0, 0.0),
    ...                             w0=8.5e-3, os0=1e-5, pool_cpu=(16.77e-3, 9.04e-3)))   # 16.77 > 8.79 + 4
    (1,)
    >>> _impossible_rows(SplitTiming(10, 2, 1, (1, 2), (8.79e-3, 4.65e-3), (8.55e-3, 8.5e-3), (0.0, 0.0),
    ...                             w0=8.5e-3, os0=1e-5, pool_cpu=(8.8e-3, 16.5e-3)))  # 16.5 < 9.3 + 2 x 4
    ()
    """
    check_instance("timing", timing, SplitTiming)
    return tuple(k for i, (k, w, c) in enumerate(zip(timing.pieces, timing.pool, timing.pool_cpu))
                 if c > _ceiling(timing, i) * w + _tick_error(timing, i))


def waiting(timing: SplitTiming, pieces: int) -> float:
    """Seconds the pool's threads waited at ``pieces`` blocks, measured: the pool's wall time minus the CPU
    seconds the rounds model lets it spend on its cores, ``ceil(N / P) / N`` of the pool's CPU seconds (one
    block's CPU per round). In readings stored before the pool's CPU seconds were measured, the kernel column
    stands in for them, and so it does for a row whose pool CPU is impossible (:func:`_impossible_rows`).

    >>> t = SplitTiming(10, 2, 1, (1, 10), (3.0, 2.0), (1.0, 2.0), (0.0, 0.1), w0=1.0, os0=1e-3,
    ...                 pool_cpu=(1.0, 3.0))
    >>> waiting(t, 1), waiting(t, 10)      # 3.0 - 1.0; 2.0 - 5 rounds x 3.0 / 10
    (2.0, 0.5)
    """
    check_instance("timing", timing, SplitTiming)
    wall, kernel, _ = timing.at(pieces)
    cpu = (timing.pool_cpu[timing.pieces.index(pieces)]
           if timing.pool_cpu and pieces not in _impossible_rows(timing) else kernel)
    return wall - -(-pieces // timing.workers) / pieces * cpu


def descent_line(timing: SplitTiming) -> str:
    """The N = 1 -> P step of the pool's wall time (P = ``timing.workers``, the fewest pieces being 1 and P
    measured). A one-block run that waited for a core beyond twice the run's noise makes the ratio a reading of
    that wait, not of a second core: then the ratio is not printed. Otherwise the ratio is printed, with the
    wait of the P-block run when it exceeds the same band (it explains a ratio below P); a ratio within
    1 +- twice the noise reads "没有明显更快", not as a speed-up.

    >>> t = SplitTiming(10, 2, 1, (1, 2), (3.0, 2.0), (1.0, 1.0), (0.0, 0.0), w0=1.0, os0=1e-3)
    >>> "但 N = 1 本身就等了 2000.0 毫秒的核" in descent_line(t), "快" in descent_line(t)   # 3.0 s wall, 1.0 CPU
    (True, False)
    >>> fast = SplitTiming(10, 2, 1, (1, 2), (8.85e-3, 4.0e-3), (6.12e-3, 6.2e-3), (0.0, 0.0), w0=6.1e-3, os0=1e-6,
    ...                    pool_cpu=(8.85e-3, 7.9e-3))      # review ch12-17: 2.21 x on 2 cores
    >>> descent_line(fast).split("；")[2]
    '超过 2 倍：N = 1 那次线程池比纯计算多花了 2.7 毫秒 CPU'
    """
    check_instance("timing", timing, SplitTiming)
    p, ms = timing.workers, 1e3
    if p == 1:
        return "本机只有 1 个可用 CPU：线程池只有一个线程，N 再大也没有第二个核可用"
    if timing.pieces[0] != 1 or p not in timing.pieces:
        raise ValueError(f"timing.pieces must start at 1 and hold workers = {p}, got {timing.pieces}")
    one, at_p = timing.pool[0], timing.at(p)[0]
    wait = waiting(timing, 1)
    head = f"N = 1 → {p}：线程池 {one * ms:.1f} → {at_p * ms:.1f} 毫秒，"
    if wait > 2 * _noise(timing) * (one - wait):
        return (head + f"但 N = 1 本身就等了 {wait * ms:.1f} 毫秒的核（墙钟 {one * ms:.1f}、CPU "
                f"{(one - wait) * ms:.1f} 毫秒）：这个比值量的是等待的起伏，不是第二个核；要看下坡，需要此刻有空闲的核")
    later = waiting(timing, p)
    noise = _noise(timing)
    if abs(one / at_p - 1) <= 2 * noise:          # within the run's noise band: not a speed-up
        ratio = f"没有明显更快（{one / at_p:.2f} 倍，在本次噪声 {noise:.0%} 的两倍以内）"
    else:
        ratio = f"快 {one / at_p:.2f} 倍" if one > at_p else f"反而更慢（{one / at_p:.2f} 倍）"
    beyond = ""
    # reviews ch12-17 #7b, ch12-18 #7: a ratio above P beyond the run's noise needs its own clause
    if one / at_p > p * (1 + 2 * noise) and timing.pool_cpu:
        spent = timing.pool_cpu[0] - timing.kernel[0]
        beyond = (f"；超过 {p} 倍：N = 1 那次线程池比纯计算多花了 {spent * ms:.1f} 毫秒 CPU" if spent > 0
                  else f"；超过 {p} 倍，超出的部分是这次测量的起伏")
    return (head + f"N = 1 没有等核；{ratio}，{p} 个空闲的核上理想是 {p} 倍" + beyond
            + (f"；N = {p} 那次等了 {later * ms:.1f} 毫秒的核" if later > 2 * _noise(timing) * (at_p - later) else ""))


def gap_split(timing: SplitTiming) -> tuple[float, float, float, float]:
    """The pool's wall time at the most pieces minus the prediction (W fixed) in three measured parts that add
    up to it (all seconds): ``(gap, computation, overhead, waiting)``. In the rounds model
    ``N O_s + ceil(N/P) W / N``, with ``s = ceil(N/P) / N`` (one block's share of a round):

    - ``computation`` = s (W(N) - W): the measured W(N) (kernel column, CPU seconds) replaces the calibrated W;
    - ``overhead`` = s (pool CPU - W(N)) - N O_s: the pool's CPU seconds beyond the computation (dispatch, GIL
      hand-offs, thread switches), spread over the rounds, against the predicted dispatch;
    - ``waiting`` = wall - s pool CPU (:func:`waiting`): wall time in which the threads did not compute.

    Needs the pool's CPU seconds (``timing.pool_cpu``).

    >>> t = SplitTiming(10, 2, 1, (1, 10), (1.0, 2.0), (1.0, 4.0), (0.01, 0.5), w0=1.0, os0=1e-3,
    ...                 pool_cpu=(1.0, 4.6))
    >>> [round(x, 3) for x in gap_split(t)]      # 2.0 - 0.51; 0.5 x 3; 0.5 x 0.6 - 0.01; 2.0 - 0.5 x 4.6
    [1.49, 1.5, 0.29, -0.3]
    """
    check_instance("timing", timing, SplitTiming)
    if not timing.pool_cpu:
        raise ValueError("timing.pool_cpu must hold the pool's CPU seconds, got a reading without them")
    k, p = timing.pieces[-1], timing.workers
    gap = timing.pool[-1] - split_prediction(timing)[-1]
    share = -(-k // p) / k                      # rounds x (one block's share of W)
    computation = share * (timing.kernel[-1] - timing.w0)
    overhead = share * (timing.pool_cpu[-1] - timing.kernel[-1]) - k * timing.os0
    return gap, computation, overhead, timing.pool[-1] - share * timing.pool_cpu[-1]


_CAUSES = ("最大的一份是计算变慢：模型假设 W 不随 N 变，没有算进它",
           "最大的一份是其余开销：线程池在计算之外烧掉的 CPU（派发、GIL 交接、线程切换）比预测的派发多",
           "最大的一份是等待：线程在墙钟上等核（别的程序占着核）或等 GIL（线程之间交接，或主线程提交任务时"
           "握着它）——CPU 秒看得见计算，墙钟还看得见排队")


def gap_verdict(timing: SplitTiming) -> str:
    """12.2's verdict on the pool's time at the most pieces against the prediction: the gap, its three measured
    parts from :func:`gap_split` (they add up to it), and, when the pool was slower than predicted, the largest
    part named as the cause. Waiting also names a starved pool (one thread dispatches the blocks one by one,
    and the threads idle for the next block) only when the run's own dispatch column could account for it:
    the dispatch CPU at the most pieces is at least half of the waiting (a dispatcher that submits every
    block in D seconds can keep the threads idle for at most about D).

    >>> t = SplitTiming(10, 2, 1, (1, 10), (1.0, 9.0), (1.0, 2.0), (0.01, 0.02), w0=1.0, os0=1e-3,
    ...                 pool_cpu=(1.0, 2.1))
    >>> gap_verdict(t).split(" = ")[2].split("：")[0]      # 9.0 - 0.51 = 8.49 s = 0.5 + 0.04 + 7.95
    '计算变慢 +500.0、其余开销 +40.0、等待 +7950.0 毫秒'
    >>> "最大的一份是等待" in gap_verdict(t), "等派发" in gap_verdict(t)   # dispatch 0.02 s << 7.95 s waiting
    (True, False)
    """
    gap, *parts = gap_split(timing)
    ms = 1e3
    text = (f"N = {timing.pieces[-1]}：线程池实测 {timing.pool[-1] * ms:.1f} 毫秒，"
            f"预测 {split_prediction(timing)[-1] * ms:.1f} 毫秒，"
            f"实测{'多' if gap > 0 else '少'} {abs(gap) * ms:.1f} 毫秒")
    if timing.pieces[-1] in _impossible_rows(timing):
        return text + "；这一行的线程池 CPU 超出物理上限（见上），三份拆不开，这次不拆"
    text += (f" = 计算变慢 {parts[0] * ms:+.1f}、其余开销 {parts[1] * ms:+.1f}、等待 {parts[2] * ms:+.1f} 毫秒")
    if gap <= 0:
        return text
    cause = max(range(3), key=lambda i: parts[i])
    dispatch = timing.dispatch[-1]
    if cause == 2 and timing.workers > 1 and dispatch >= 0.5 * parts[2]:
        # a serial dispatcher can starve the pool only for about as long as it takes to submit every block
        return (text + "：" + _CAUSES[2] + f"；派发共用了 {dispatch * ms:.1f} 毫秒 CPU，不少于等待的一半，"
                f"也可能是在等派发：一个主线程依次提交 {timing.pieces[-1]} 块，线程算得比它派得快时就闲着等下一块")
    return text + "：" + _CAUSES[cause]


def _calibration_check(timing: SplitTiming) -> str:
    """O_s against the run's own dispatch column at the most pieces (dispatch / N): both count the CPU seconds of
    bursts of that many empty tasks, so they should read alike (review ch12-11 #1: a 10,000-task calibration,
    inflated by the garbage collector, read 3.2 times the column).

    >>> _calibration_check(SplitTiming(10, 2, 1, (1, 10), (1.0, 1.0), (1.0, 1.0), (0.0, 6e-5), w0=1.0, os0=7e-6))
    '（对照：派发一栏 N = 10 时每个任务 6.0 µs）'
    """
    top = timing.pieces[-1]
    return f"（对照：派发一栏 N = {top} 时每个任务 {timing.dispatch[-1] / top * 1e6:.1f} µs）"


def split_lines(timing: SplitTiming, reference: Reference | None = None, h200: Reference | None = None) -> str:
    """12.2's whole reading: :func:`split_table` (what the cell before figure 12-1 prints) and then
    :func:`split_details` (the cell after it)."""
    return split_table(timing, reference) + "\n" + split_details(timing, reference, h200)


def split_table(timing: SplitTiming, reference: Reference | None = None) -> str:
    """12.2's lean reading: the table (milliseconds) with the prediction from the calibration taken before the
    sweep, the kernel's growth against the dispatch cost, rows the CPU clock cannot have measured, the pool
    against the prediction at the most pieces (:func:`gap_verdict`, when the pool's CPU seconds were measured),
    and the stored machine's growth in one line."""
    pred = split_prediction(timing)
    first, top, ms = timing.pieces[0], timing.pieces[-1], 1e3
    lines = [f"{'N':>5} {'线程池 墙钟':>10} {'线程池 CPU':>10} {'纯计算 CPU':>10} {'派发 CPU':>8} "
             f"{'预测（W 不变）':>12}"]
    cpus = [f"{c * ms:>12.2f}" for c in timing.pool_cpu] or [f"{'—':>12}"] * len(timing.pieces)
    for k, pl, pc, ke, di, pr in zip(timing.pieces, timing.pool, cpus, timing.kernel, timing.dispatch, pred):
        lines.append(f"{k:>5} {pl * ms:>12.2f} {pc} {ke * ms:>12.2f} {di * ms:>10.2f} {pr * ms:>14.2f}")
    ratio, extra, dispatch = _growth(timing)
    lines.append(f"N = {top} 时纯计算是 N = {first} 的 {ratio:.2f} 倍（多 {extra * ms:.1f} 毫秒），派发共 "
                 f"{dispatch * ms:.1f} 毫秒" + ("：切细的代价主要来自计算本身变慢，而不是派发" if extra > dispatch
                                            else "：这次派发比计算的增量还大"))
    for k in _impossible_rows(timing) if timing.pool_cpu else ():
        i = timing.pieces.index(k)
        lines.append(f"N = {k} 一行的线程池 CPU {timing.pool_cpu[i] * ms:.2f} 毫秒超过 {_ceiling(timing, i)} 个核 × "
                     f"墙钟 {timing.pool[i] * ms:.2f} 毫秒再加 {_tick_words(timing, i)}（按本书构建机每个 "
                     f"{TICK * ms:.0f} 毫秒计），物理上不可能：这是 CPU 时钟在短窗口里的记账误差，这一格不解读"
                     "（等待改用纯计算一栏估算）")
    if timing.pool_cpu:
        lines.append(gap_verdict(timing))
    if reference is not None and check_instance("reference", reference, Reference).split is not None:
        ref = reference.split
        r, e, d = _growth(ref)
        lines.append(f"参照 · {reference.label}：纯计算 N = {ref.pieces[-1]} 是 N = {ref.pieces[0]} 的 {r:.2f} 倍"
                     f"（多 {e * ms:.1f} 毫秒），派发 {d * ms:.1f} 毫秒")
    return "\n".join(lines)


def split_details(timing: SplitTiming, reference: Reference | None = None, h200: Reference | None = None) -> str:
    """12.2's reading behind figure 12-1: the calibration (with its check against the dispatch column), the
    kernel column's largest dip, the N = 1 -> P step (:func:`descent_line`), the stored machine's calibration,
    step, pool CPU, waiting and split, and one GPU update split into N pieces on the H200 machine."""
    check_instance("timing", timing, SplitTiming)
    p, ms = timing.workers, 1e3
    lines = [f"运行前的标定（单线程，BLAS 固定 {timing.blas_threads} 个线程）：整块相乘 W = "
             f"{timing.w0 * ms:.1f} 毫秒 CPU，空任务派发 O_s = {timing.os0 * 1e6:.1f} µs"
             + _calibration_check(timing) + f"；线程池 P = {p} 个线程（本机可用 CPU 数）", _dip_line(timing)]
    if p == 1 or (timing.pieces[0] == 1 and p in timing.pieces):
        lines.append(descent_line(timing))
    else:
        lines.append(f"N = 1 → {p} 的一步没有量：块数 {timing.pieces} 里缺 1 或 P = {p}"
                     "（split_matmul_timing 默认会把 P 加进块数）")
    if reference is not None and check_instance("reference", reference, Reference).split is not None:
        ref = reference.split
        lines.append(f"参照的标定：空任务派发 O_s = {ref.os0 * 1e6:.1f} µs" + _calibration_check(ref))
        if ref.pieces[0] == 1 and ref.workers in ref.pieces:
            lines.append(f"参照的 {descent_line(ref)}")
        if ref.pool_cpu:
            lines.append("参照的线程池 CPU（毫秒）：" + "、".join(f"N = {k} {c * ms:.1f}" for k, c in
                                                       zip(ref.pieces, ref.pool_cpu)))
            lines.append("参照的等待（毫秒）：" + "、".join(f"N = {k} {waiting(ref, k) * ms:.1f}"
                                                      for k in ref.pieces[-2:]))
            lines.append("参照的 " + gap_verdict(ref))
    if h200 is not None and (check_instance("h200", h200, Reference).extra or {}).get("grain"):
        rows = {row["N"]: row["seconds"] for row in h200.extra["grain"]["rows"]}
        few, most = min(rows), max(rows)
        piece = (rows[most] - rows[few]) / (most - few)
        launch = h200.extra.get("launch", {}).get("per_launch_async_us")
        per = h200.extra["grain"].get("kernels_per_piece", 1)
        lines.append(f"参照 · {h200.label}：GPU 上同一次逐元素更新切成 N 份（每份 {per} 个核函数），N = {few} 时 "
                     f"{rows[few] * ms:.2f} 毫秒，N = {most:,} 时 {rows[most] * ms:.0f} 毫秒"
                     f"（{rows[most] / rows[few]:.0f} 倍）——每多一份约 {piece * 1e6:.0f} µs，"
                     f"即每个核函数约 {piece / per * 1e6:.1f} µs"
                     + (f"，与单独测的一次发射 {launch:.1f} µs 相当：决定 GPU 墙钟的是派发"
                        + (f"——N = {most:,} 时每份只有 {h200.extra['grain']['elements'] // most:,} 个数，"
                           "它的计算其实也变得低效，但被每份的发射时间完全盖住了"
                           if h200.extra["grain"].get("elements") else "") if launch else ""))
    return "\n".join(lines)
