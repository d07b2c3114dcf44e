"""Chapter 12 (misconceptions): readings of the measured cells, each robust on any machine.

A measured cell prints the prediction made before the run (from the CPU count, or from a calibration taken
before the sweep), then the measurement, then one verdict per lesson that follows from the printed numbers,
and last the same experiment on a named machine (:mod:`hetlab.book.reference`):

- :func:`gil_lines` (12.1): effective parallelism (CPU seconds per wall second) of threads and processes, and
  the waits that threads overlap; :func:`thread_verdict` and :func:`process_verdict` are its two verdicts,
  which appendix A1 reuses, and :func:`contrast_verdict` says whether the run could show the contrast at all;
- :func:`split_lines` (12.2): one matrix product split into N row blocks, read in CPU seconds: the
  computation slows as the blocks thin, against the dispatch cost and against :func:`split_prediction`.
"""
from __future__ import annotations

from hetlab._validate import check_instance, check_int, check_nonnegative, check_str
from hetlab.book.reference import Reference
from hetlab.models import granularity as G
from hetlab.real.experiments import GilReading
from hetlab.real.split_timing import SplitTiming

__all__ = ["TOLERANCE", "NOISE_FLOOR", "thread_verdict", "process_verdict", "contrast_verdict", "gil_lines",
           "split_prediction", "gap_split", "gap_verdict", "split_lines"]

#: Effective parallelism above 1 + TOLERANCE counts as "more than one core": the first start and the last end of
#: a run come from clock readings in different threads, which read a one-core run a few percent high.
TOLERANCE = 0.05

#: The smallest relative change of a CPU-second reading that 12.2 reads as more than noise (a floor under the
#: run's own noise estimate, see :func:`_noise`): the min-of-5 CPU times of one block vary by a few percent.
NOISE_FLOOR = 0.05


def thread_verdict(parallelism: float, who: str = "线程") -> str:
    """One sentence on a thread pool's effective parallelism (CPU seconds per wall second): at most
    ``1 + TOLERANCE`` is "not above one core", as the GIL predicts; above it only an interpreter without the
    GIL can go. ``who`` names the threads.

    >>> thread_verdict(0.62)
    '线程池 0.62 ≤ 1 + 0.05：线程轮流执行 Python 字节码，同一时刻至多一个在算，与 GIL 的预测相符'
    """
    par = check_nonnegative("parallelism", parallelism, high=1e4)
    who = check_str("who", who)
    if par <= 1 + TOLERANCE:
        return (f"线程池 {par:.2f} ≤ 1 + {TOLERANCE:g}：{who}轮流执行 Python 字节码，同一时刻至多一个在算，"
                "与 GIL 的预测相符")
    return (f"线程池 {par:.2f} > 1 + {TOLERANCE:g}：{who}同时在算，与 GIL 的预测不符——这个解释器没有 GIL"
            "（PEP 703 的无 GIL 构建）")


def process_verdict(parallelism: float, cores: int, serial: float) -> str:
    """One sentence on a process pool's effective parallelism against ``cores`` = min(processes, usable CPUs),
    the prediction's ceiling; ``serial`` is the effective parallelism of one thread running alone in the same
    experiment, the share of a core this machine gave it (1 on an idle machine).

    >>> process_verdict(1.85, 2, 0.99)
    '进程池 1.85 > 1 + 0.05：几个进程真的同时在不同的核上计算（上限 2）'
    """
    par = check_nonnegative("parallelism", parallelism, high=1e4)
    cores = check_int("cores", cores, low=1, high=4096)
    serial = check_nonnegative("serial", serial, high=1e4)
    if cores == 1:
        return f"进程池 {par:.2f}：只有 1 个可用 CPU，进程也只能轮流执行（上限 1）"
    if par > 1 + TOLERANCE:
        return f"进程池 {par:.2f} > 1 + {TOLERANCE:g}：几个进程真的同时在不同的核上计算（上限 {cores}）"
    return (f"进程池 {par:.2f}，没有超过 1 个核（上限 {cores}）：这次本机没有第二个空闲的核"
            + (f"——一个线程单独运行也只分到 {serial:.2f} 个核，别的程序正在用 CPU" if serial < 0.9 else ""))


def _runs(reading: GilReading) -> tuple[float, float, float]:
    return reading.serial.parallelism, reading.thread_pool.parallelism, reading.process_pool.parallelism


def gil_lines(reading: GilReading, reference: Reference | None = None) -> str:
    """12.1: the prediction made from the CPU count alone, the three runs' effective parallelism, one verdict
    each for threads and processes, the waits that threads do overlap, and the stored machine's reading."""
    check_instance("reading", reading, GilReading)
    s, t, p = _runs(reading)
    n = reading.threads
    cores = min(reading.processes, reading.cpus)
    ceiling = 1 if reading.gil else min(n, reading.cpus)
    waits = reading.wait_serial.wall / reading.wait_threads.wall
    lines = [f"本机 {reading.cpus} 个可用 CPU。运行前的预测：{n} 个线程 ≤ {ceiling} 个核"
             + ("（GIL）" if reading.gil else "（这个解释器关闭了 GIL）")
             + f"，{reading.processes} 个进程 ≤ {cores} 个核",
             f"有效并行度（CPU 秒之和 ÷ 首个开始到最后一个结束的墙钟秒）：一个接一个 {s:.2f}，{n} 个线程 {t:.2f}，"
             f"{reading.processes} 个进程 {p:.2f}",
             thread_verdict(t, f"{n} 个线程") if reading.gil else
             f"线程池 {t:.2f}：这个解释器没有 GIL，线程可以同时计算（上限 {ceiling}）",
             process_verdict(p, cores, s),
             f"{n} 次等待（time.sleep）：一个接一个 {reading.wait_serial.wall:.3f} 秒，{n} 个线程 "
             f"{reading.wait_threads.wall:.3f} 秒，" + (f"快 {waits:.1f} 倍——等待可以重叠，这是线程真正的用处"
                                                      if waits > 1 else "并没有更快")]
    lines.append(contrast_verdict(t, p, cores))
    if reference is not None and check_instance("reference", reference, Reference).gil is not None:
        rs, rt, rp = _runs(reference.gil)
        g = reference.gil
        seen = (f"这份参照上进程池用了 {rp:.2f} 个核，对比出现了" if rp > 1 + TOLERANCE and rt <= 1 + TOLERANCE
                else "这份参照测时也没有空闲的核，对比同样没有出现")
        lines.append(f"参照 · {reference.label}：一个接一个 {rs:.2f}，{g.threads} 个线程 {rt:.2f}，"
                     f"{g.processes} 个进程 {rp:.2f}；等待快 {g.wait_serial.wall / g.wait_threads.wall:.1f} 倍；"
                     + seen)
    return "\n".join(lines)


def contrast_verdict(threads: float, processes: float, cores: int) -> str:
    """12.1's lesson in one sentence, from one run's own numbers: the contrast between threads (at most one core
    under the GIL) and processes (more than one core) appears only when the process pool got above one core;
    with ``cores`` = 1, or no free core at the time, it cannot appear, and a thread pool's reading at most one
    core then does not tell a GIL from none.

    >>> contrast_verdict(0.6, 1.9, 2)
    '对比出现了：同样的纯 Python 循环，线程池用了 0.60 个核，进程池用了 1.90 个核'
    """
    thr = check_nonnegative("threads", threads, high=1e4)
    pro = check_nonnegative("processes", processes, high=1e4)
    cores = check_int("cores", cores, low=1, high=4096)
    if cores == 1:
        return "对比在这台机器上出现不了：只有 1 个可用 CPU，进程池也只有一个核可用"
    if pro > 1 + TOLERANCE and thr <= 1 + TOLERANCE:
        return f"对比出现了：同样的纯 Python 循环，线程池用了 {thr:.2f} 个核，进程池用了 {pro:.2f} 个核"
    if pro > 1 + TOLERANCE:
        return f"线程池 {thr:.2f} 和进程池 {pro:.2f} 都超过 1 个核：这个解释器的线程能同时计算"
    return ("这次对比出现不了：本机此刻没有第二个空闲的核，进程池也停在 1 个核以下；"
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
    """The run's own noise, relative: the whole-block product is timed twice (the calibration ``w0`` and the
    kernel column at the fewest pieces, one block when that is 1), so their relative difference, floored at
    NOISE_FLOOR, is the size of a change the run cannot tell from chance."""
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


def gap_split(timing: SplitTiming) -> tuple[float, float, float, float]:
    """The pool's wall time at the most pieces minus the prediction (W fixed) in three parts that add up to it
    (all seconds): ``(gap, computation, dispatch, waiting)``. In the rounds model ``ceil(N/P) W / N + N O_s``,
    ``computation`` replaces the calibrated W by the measured W(N) (the kernel column, CPU seconds), ``dispatch``
    replaces N O_s by the measured dispatch (CPU seconds), and ``waiting`` is the rest: wall time that no CPU
    second accounts for, threads waiting for a core or for the GIL.

    >>> t = SplitTiming(10, 2, 1, (1, 10), (1.0, 2.0), (1.0, 4.0), (0.01, 0.5), w0=1.0, os0=1e-3)
    >>> [round(x, 3) for x in gap_split(t)]      # 2.0 - 0.51; 5 rounds x 3 / 10; 0.5 - 0.01; 2.0 - (0.5 + 2.0)
    [1.49, 1.5, 0.49, -0.5]
    """
    check_instance("timing", timing, SplitTiming)
    k, p = timing.pieces[-1], timing.workers
    gap = timing.pool[-1] - split_prediction(timing)[-1]
    share = -(-k // p) / k                      # rounds x (one block's share of W)
    computation = share * (timing.kernel[-1] - timing.w0)
    dispatch = timing.dispatch[-1] - k * timing.os0
    return gap, computation, dispatch, gap - computation - dispatch


_CAUSES = ("最大的一份是计算变慢：模型假设 W 不随 N 变，没有算进它",
           "最大的一份是派发：实测的派发比标定的 O_s 预计的多",
           "最大的一份是等待：线程在墙钟上等核（别的程序占着核）或等 GIL——CPU 秒看得见计算，墙钟还看得见排队")


def gap_verdict(timing: SplitTiming) -> str:
    """12.2's verdict on the pool's time at the most pieces against the prediction: the gap, its three parts from
    :func:`gap_split` (they add up to it), and, when the pool was slower than predicted, the largest part named
    as the cause.

    >>> t = SplitTiming(10, 2, 1, (1, 10), (1.0, 9.0), (1.0, 2.0), (0.01, 0.02), w0=1.0, os0=1e-3)
    >>> gap_verdict(t).split(" = ")[2].split("：")[0]      # 9.0 - 0.51 = 8.49 s = 0.5 + 0.01 + 7.98
    '计算变慢 +500.0、派发之差 +10.0、CPU 秒里看不到的等待 +7980.0 毫秒'
    >>> gap_verdict(t).split("：")[-2]
    '最大的一份是等待'
    """
    gap, *parts = gap_split(timing)
    ms = 1e3
    text = (f"N = {timing.pieces[-1]}：线程池实测 {timing.pool[-1] * ms:.1f} 毫秒，"
            f"预测 {split_prediction(timing)[-1] * ms:.1f} 毫秒，"
            f"实测{'多' if gap > 0 else '少'} {abs(gap) * ms:.1f} 毫秒"
            f" = 计算变慢 {parts[0] * ms:+.1f}、派发之差 {parts[1] * ms:+.1f}、CPU 秒里看不到的等待 "
            f"{parts[2] * ms:+.1f} 毫秒")
    if gap <= 0:
        return text
    return text + "：" + _CAUSES[max(range(3), key=lambda i: parts[i])]


def split_lines(timing: SplitTiming, reference: Reference | None = None, h200: Reference | None = None) -> str:
    """12.2: the calibration and the prediction, the table (milliseconds), the kernel's growth against the
    dispatch cost, the pool against the prediction, and the stored readings (this experiment on the build
    machine; one GPU update split into N pieces on the H200 machine)."""
    pred = split_prediction(timing)
    p, first, top = timing.workers, timing.pieces[0], timing.pieces[-1]
    ms = 1e3
    lines = [f"运行前的标定（单线程，BLAS 固定 {timing.blas_threads} 个线程）：整块相乘 W = "
             f"{timing.w0 * ms:.1f} 毫秒 CPU，空任务派发 O_s = {timing.os0 * 1e6:.1f} µs；"
             f"线程池 P = {p} 个线程（本机可用 CPU 数）",
             f"{'N':>5} {'线程池 墙钟':>10} {'纯计算 CPU':>10} {'派发 CPU':>8} {'预测（W 不变）':>12}"]
    for k, pl, ke, di, pr in zip(timing.pieces, timing.pool, timing.kernel, timing.dispatch, pred):
        lines.append(f"{k:>5} {pl * ms:>12.2f} {ke * ms:>12.2f} {di * ms:>10.2f} {pr * ms:>14.2f}")
    ratio, extra, dispatch = _growth(timing)
    lines.append(f"N = {top} 时纯计算是 N = {first} 的 {ratio:.2f} 倍（多 {extra * ms:.1f} 毫秒），派发共 "
                 f"{dispatch * ms:.1f} 毫秒" + ("：切细的代价主要来自计算本身变慢，而不是派发" if extra > dispatch
                                            else "：这次派发比计算的增量还大"))
    lines.append(_dip_line(timing))
    if p == 1:
        lines.append("本机只有 1 个可用 CPU：线程池只有一个线程，N 再大也没有第二个核可用")
    elif first == 1 and p in timing.pieces:
        a, b = timing.pool[0], timing.at(p)[0]
        lines.append(f"N = 1 → {p}：线程池 {a * ms:.1f} → {b * ms:.1f} 毫秒，"
                     + (f"快 {a / b:.2f} 倍" if a > b else f"没有更快（{a / b:.2f} 倍）")
                     + f"；{p} 个空闲的核上理想是 {p} 倍")
    lines.append(gap_verdict(timing))
    if reference is not None and check_instance("reference", reference, Reference).split is not None:
        r, e, d = _growth(reference.split)
        lines.append(f"参照 · {reference.label}：纯计算 N = {reference.split.pieces[-1]} 是 N = "
                     f"{reference.split.pieces[0]} 的 {r:.2f} 倍（多 {e * ms:.1f} 毫秒），派发 {d * ms:.1f} 毫秒")
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
