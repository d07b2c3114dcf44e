"""Chapter 12.2's fifth misconception (nested parallelism): a thread pool whose threads call a multi-threaded
BLAS, read from the same split measured with BLAS pinned to one thread and to T threads
(:func:`hetlab.real.split_timing.split_matmul_timing`). :func:`oversubscription_lines` prints the prediction
from the BLAS that threadpoolctl reports, the two runs and one verdict per pair, judged against the run's noise
and the CPU clock's ticks (:data:`hetlab.book.readings.ch12.TICK`).
"""
from __future__ import annotations

from hetlab._validate import check_instance, check_int, check_nonnegative, check_sequence, check_str
from hetlab.book.readings.ch12 import TICK, _impossible_rows, _noise, _tick_error, _tick_words, _window_runs
from hetlab.book.reference import Reference
from hetlab.real.split_timing import SplitTiming

__all__ = ["oversubscription_lines", "spin_line", "reference_line"]


def _band(single: SplitTiming, nested: SplitTiming) -> float:
    """The noise band of a pool-CPU difference at the most pieces, in seconds: twice the run's relative noise
    (:func:`_noise`) of the baseline's CPU seconds, plus the clock's tick error of the pair's worse reading
    (:func:`_tick_error`: one tick per thread on another CPU, divided by the runs in the clock window)."""
    return 2 * _noise(single) * single.pool_cpu[-1] + _tick_error(_worse(single, nested))


def _worse(single: SplitTiming, nested: SplitTiming) -> SplitTiming:
    """The reading of the pair whose pool CPU at the most pieces the clock's ticks may misread more."""
    return max((single, nested), key=_tick_error)


def _cores_note(t: SplitTiming) -> str:
    """The run's cores (pool CPU / wall at the most pieces) when they exceed the pool's P cores: within the
    run's ticks it is the clock's accounting error; beyond them the reading is impossible."""
    cores, p = t.pool_cpu[-1] / t.pool[-1], t.workers
    if cores <= p:
        return ""
    if t.pieces[-1] in _impossible_rows(t):
        return f"（合 {cores:.2f} 个核，超出 {p} 个核 {_tick_words(t)}以上，物理上不可能，不解读）"
    return f"（合 {cores:.2f} 个核：多于 {p} 个核的部分不到 {_tick_words(t)}，是 CPU 时钟的记账误差）"


def _mode(nested: SplitTiming, blas: str) -> str:
    """"over" when the T BLAS threads alone outnumber the P CPUs (one CPU: the lock never matters), "lock" for
    OpenBLAS in any threading layer (one threaded level-3 call at a time: NUM_PARALLEL = 1 by default), else
    "compete" (a BLAS without that lock, such as MKL: P x T threads compete for P cores)."""
    return "over" if nested.blas_threads > nested.workers else "lock" if blas == "openblas" else "compete"


# review ch12-11 #2: a busy machine burns with the helper's idle spin switched off (OPENBLAS_THREAD_TIMEOUT=4):
# both sides of a locked multiply spin, and the reading cannot tell which burnt
_BURN = {"lock": "线程在忙等：帮手等下一份工作，调用者等帮手做完（机器忙时，等的一方空转到对方分到核）",
         "compete": "多出来的线程在抢核，等待时还会忙等",
         "over": "BLAS 线程多于核，在抢核，等待时还会忙等"}


def _decimals(diff: float, band: float) -> int:
    """The fewest decimals (1 to 3) at which the printed difference and the printed band compare as the true ones
    do, against the band and against twice the printed band, with no tie (a reader doubles the printed band).

    >>> _decimals(20.0, 9.2), _decimals(2.98, 1.47), _decimals(1.52, 1.48), _decimals(1.46, 1.48)
    (1, 2, 2, 2)
    """
    for d in (1, 2):
        p, b = round(diff, d), round(band, d)
        twice = round(2 * b, d)
        if p not in (b, twice) and (p > b) == (diff > band) and (p > twice) == (diff > 2 * band):
            return d
    return 3


def _pair_verdict(single: SplitTiming, nested: SplitTiming, mode: str) -> str:
    """The burn (pool CPU difference beyond twice :func:`_band`, named only then) and the wall ratio (beyond
    twice the noise); a faster nested wall says the baseline idled cores by design (N not a multiple of P) or
    else that the two passes saw different machines."""
    ms, noise, band = 1e3, _noise(single), _band(single, nested)
    (w1, c1), (w2, c2) = (single.pool[-1], single.pool_cpu[-1]), (nested.pool[-1], nested.pool_cpu[-1])
    wall, diff, rel = w2 / w1, c2 - c1, round(c2 / c1 - 1, 2) or 0.0      # no "-0%"
    if any(t.pieces[-1] in _impossible_rows(t) for t in (single, nested)):
        return "有一次的线程池 CPU 超出物理上限，这一对不下结论"
    if wall < 1 - 2 * noise and single.pieces[-1] % single.workers:   # review ch12-11 #3: idle cores by design
        tail = (f"；墙钟反而短了（{wall:.2f} 倍）：N = {single.pieces[-1]} 不是 P = {single.workers} 的整数倍，"
                "基线最后一轮有核闲着，这次墙钟的比较检验不了两层并行")
    elif wall < 1 - 2 * noise:
        tail = (f"；墙钟反而短了（{wall:.2f} 倍）：基线那一遍只分到 {c1 / w1:.2f} 个核，两遍看到的机器不一样，"
                "这次墙钟的比较检验不了两层并行")
    else:
        # review ch12-17 #7a: a visible change within the noise band is named with its size, not "no change"
        digits = 1 if wall >= 10 else 2            # review ch12-19 #4: "52.5 倍", not "52.52 倍"
        tail = (f"；墙钟也变慢了，是 BLAS {single.blas_threads} 个线程时的 {wall:.{digits}f} 倍" if wall > 1 + 2 * noise
                else "；墙钟也没有明显变化" if abs(wall - 1) < 0.05
                else f"；墙钟{'短' if wall < 1 else '长'}了 {abs(wall - 1):.0%}，在这次噪声 {noise:.0%} 的两倍以内，"
                     "算不上变化")
    busy1, busy2 = c1 / w1, c2 / w2
    # reviews ch12-14 #1, ch12-15 #2, ch12-16 #1: a difference next to either threshold (the band, twice the band)
    # would print a tie at one decimal ("+3.0 over twice 1.5", "+1.5 beyond a band of 1.5"): enough decimals to
    # tell them apart, and then twice the band itself
    d = _decimals(diff * ms, band * ms)
    exact = f"即 {2 * band * ms:.{d}f} 毫秒" if d > 1 else ""
    cores = f"；两遍平均同时在算的核分别是 {busy1:.2f} 和 {busy2:.2f} 个"
    # review ch12-18 #4: beyond double, a multiple reads better than "5543%"
    times = f"是 BLAS {single.blas_threads} 个线程时的 {c2 / c1:.1f} 倍"
    size = f"（{diff * ms:+.{d}f} 毫秒"
    if diff > 2 * band:
        # review ch12-19 #11d: beyond double, "花的 CPU 秒是 … 的 2.0 倍（多 6.9 毫秒", not "多烧了 CPU 秒，是 …"
        burnt = (f"多烧了 {rel:.0%} 的 CPU 秒{size}" if rel < 1 else
                 f"花的 CPU 秒{times}（多 {diff * ms:.{d}f} 毫秒")
        return (f"同样的乘积{burnt}，超过噪声带 {band * ms:.{d}f} 毫秒的两倍{exact}）："
                + _BURN[mode] + cores + tail)
    if diff > band:
        return (f"CPU 秒{f'多了 {rel:.0%}' if rel < 1 else times}{size}），超过噪声带 {band * ms:.{d}f} 毫秒但不到两倍"
                f"{exact}：这次不下多烧的结论" + cores + tail)
    more = f"多了 {rel:.0%}" if rel > 0 else f"少了 {-rel:.0%}" if rel < 0 else "几乎没变"
    but = "，但" if abs(rel) >= 0.1 else "，"          # review ch12-9 #6: no "but" after a negligible change
    worse = _worse(single, nested)
    text = (f"CPU 秒{more}（{round(diff * ms, d) or 0.0:+.{d}f} 毫秒）{but}在噪声带 {band * ms:.{d}f} 毫秒以内"
            f"（这次噪声 {noise:.0%} 的两倍即 {2 * noise * c1 * ms:.1f} 毫秒，加 {_tick_words(worse)}即 "
            f"{_tick_error(worse) * ms:.1f} 毫秒，节拍按本书构建机 {TICK * ms:.0f} 毫秒一个计）：这次没有量出多烧")
    if mode == "lock" and wall > 1 + 2 * noise and busy2 < busy1 * (1 - 2 * noise):
        return (text + f"；墙钟是 BLAS {single.blas_threads} 个线程时的 {wall:.2f} 倍，同时在算的核（CPU 秒 ÷ "
                f"墙钟）从 {busy1:.2f} 降到 {busy2:.2f} 个：乘法排队时核有一部分闲着（这是实测）；"
                "为什么闲着是推断：一次只进一个多线程乘法，每次交接、唤醒帮手线程的空当没有别的块来填")
    if mode == "lock" and wall > 1 + 2 * noise:       # review ch12-8 #1: the busy cores did not clearly fall
        return (text + f"；墙钟是 BLAS {single.blas_threads} 个线程时的 {wall:.2f} 倍，但同时在算的核（CPU 秒 ÷ "
                f"墙钟）没有明显减少（{busy1:.2f} → {busy2:.2f} 个）：这次读不出乘法排队让核闲着")
    return text + tail


def spin_line(spin: tuple[float, float], threads: int, reference: Reference | None = None) -> str:
    """What one ``threads``-thread product left behind (:func:`hetlab.real.split_timing.blas_spin`): the wall and
    CPU milliseconds this process kept burning after it returned, read in 20 ms probes; with a ``reference``
    that stored the same reading (review ch12-16 #3), a second line prints it.

    >>> spin_line((0.1, 0.09), 2).split("：")[0]
    '一次 2 个线程的乘法返回之后，本进程又烧了 90 毫秒 CPU（墙钟 100 毫秒，按 20 毫秒一次的探测读）才停下'
    >>> spin_line((0.0, 0.0), 2)
    '一次 2 个线程的乘法返回之后，本进程没有再烧 CPU（按 20 毫秒一次的探测读）：这次没有线程在空转等活'
    >>> print(spin_line((0.0, 0.0), 2, Reference("参照机", 2, spin=(0.12, 0.11))).splitlines()[1])
    参照 · 参照机：一次 2 个线程的乘法返回之后，进程又烧了 110 毫秒 CPU（墙钟 120 毫秒）才停下
    """
    pair = check_sequence("spin", spin)
    if len(pair) != 2:
        raise ValueError(f"spin must be (wall seconds, CPU seconds), got {len(pair)} values")
    wall, cpu = (check_nonnegative("spin", x) for x in pair)
    threads = check_int("threads", threads, low=1)
    if reference is not None:
        check_instance("reference", reference, Reference, "a Reference or None")
    head = f"一次 {threads} 个线程的乘法返回之后，"
    if cpu < 0.002:
        text = head + "本进程没有再烧 CPU（按 20 毫秒一次的探测读）：这次没有线程在空转等活"
    else:
        text = (head + f"本进程又烧了 {cpu * 1e3:.0f} 毫秒 CPU（墙钟 {wall * 1e3:.0f} 毫秒，按 20 毫秒一次的探测读）"
                "才停下：这时没有计算在做，是线程在空转等活")
    if reference is None or reference.spin is None:
        return text
    ref_wall, ref_cpu = reference.spin
    return (text + f"\n参照 · {reference.label}：{head}进程又烧了 {ref_cpu * 1e3:.0f} 毫秒 CPU"
            f"（墙钟 {ref_wall * 1e3:.0f} 毫秒）才停下")


def oversubscription_lines(single: SplitTiming, nested: SplitTiming, blas: str = "openblas",
                           layer: str = "pthreads", reference: Reference | None = None,
                           one_cpu: Reference | None = None) -> str:
    """12.2's fifth misconception, measured: the same split (the most pieces of both readings) with BLAS pinned
    to one thread (``single``) and to T threads (``nested``: each pool thread calls a multi-threaded BLAS).
    ``blas`` and ``layer`` are threadpoolctl's ``internal_api`` and ``threading_layer``. OpenBLAS lets one
    multi-threaded level-3 call run at a time in either layer (PRs #1875 and #4503: the OpenMP build admits
    NUM_PARALLEL = 1 by default): the P pool threads queue, at most T threads multiply at once (pthreads: P +
    T - 1 threads share T - 1 helpers; OpenMP: a team per caller, P x T threads); the wall does not
    shrink, and the CPU seconds grow on an idle machine too: a pthreads helper spins for 2**THREAD_TIMEOUT =
    2**28 TSC cycles (about 0.1 s; OPENBLAS_THREAD_TIMEOUT sets the exponent, 4-30) after each job before it
    sleeps (driver/others/blas_server.c, blas_thread_server), far longer than the gap between two locked calls,
    so every gap is burnt (an inference from the source; the idle reference measured +31 %). A BLAS without the
    lock (MKL): P x T threads compete for P cores. T > P (one CPU) is plain oversubscription, whatever the BLAS.
    The pool's CPU seconds are compared against :func:`_band`, the wall ratio against twice the noise; the
    verdict comes right after the two readings, and last the stored pairs of ``reference`` and ``one_cpu``
    (numpy's OpenBLAS; ``one_cpu``: the same machine pinned to one CPU, :func:`reference_line`).

    >>> one = SplitTiming(10, 2, 1, (1, 10), (1.0, 1.0), (1.0, 2.0), (0.0, 0.1), w0=1.0, os0=1e-3,
    ...                   pool_cpu=(1.0, 2.0))
    >>> two = SplitTiming(10, 2, 2, (1, 10), (1.0, 1.05), (1.0, 2.0), (0.0, 0.1), w0=1.0, os0=1e-3,
    ...                   pool_cpu=(1.0, 2.1))
    >>> oversubscription_lines(one, two).splitlines()[-1].split("（")[0]  # 2.1 / 2.0 - 1 = 5 %: band 0.208 s
    'CPU 秒多了 5%'
    >>> oversubscription_lines(one, two).splitlines()[3].split("——")[0]   # 2 pool threads + 2 - 1 shared helper
    '  · BLAS 2 个线程（2 个线程池线程 + 1 个共用的帮手线程 = 3 个线程，同一时刻至多 2 个在做乘法'
    """
    for name, t in (("single", single), ("nested", nested)):
        check_instance(name, t, SplitTiming)
        if not t.pool_cpu:
            raise ValueError(f"{name}.pool_cpu must hold the pool's CPU seconds, got a reading without them")
    if (single.n, single.workers, single.pieces) != (nested.n, nested.workers, nested.pieces):
        raise ValueError("single and nested must split the same product over the same pool, got "
                         f"{(single.n, single.workers, single.pieces)} and {(nested.n, nested.workers, nested.pieces)}")
    if nested.blas_threads <= single.blas_threads:
        raise ValueError(f"nested.blas_threads must exceed single.blas_threads = {single.blas_threads}, "
                         f"got {nested.blas_threads}")
    mode, layer = _mode(nested, check_str("blas", blas)), check_str("layer", layer)
    ms, p, k, b, b1 = 1e3, single.workers, single.pieces[-1], nested.blas_threads, single.blas_threads
    lock = "——OpenBLAS 一次只让一个同种的多线程乘法进来"
    if mode == "over":
        team = f"{b} 个 BLAS 线程多于 {p} 个核：这就是超额订阅，与锁无关"
        guess = f"{team}，同样的乘积花的 CPU 秒多于 BLAS {b1} 个线程的基线，墙钟变长"
    elif mode == "lock":
        team = (f"{p} 个线程池线程 + {b - 1} 个共用的帮手线程 = {p + b - 1} 个线程" if layer == "pthreads" else
                f"{p} 个线程池线程各开一组 {b} 个 {layer} 线程 = {p * b} 个线程")
        team += f"，同一时刻至多 {b} 个在做乘法{lock}"
        # blas_server.c: a pthreads helper spins 2**28 TSC cycles (~0.1 s) after a job before it sleeps, far
        # longer than the gap between two locked calls: the gaps are burnt on an idle machine too
        spin = ("帮手线程做完一份工作后先忙等一阵才睡" if layer == "pthreads" else
                f"等工作的 {layer} 线程先忙等一阵才睡（多久由线程层定）")
        guess = (f"OpenBLAS 一次只让一个同种的多线程乘法进来（这 {k} 块是同一种），"
                 f"{p} 个线程池线程轮流调用 {b} 个线程的乘法，"
                 + (f"N = {k} 是 P 的整数倍，墙钟不会更短；" if k % p == 0 else
                    f"N = {k} 不是 P 的整数倍，基线最后一轮有核闲着，墙钟可能更短；")
                 + f"{spin}，两次乘法之间的空当也记进 CPU 秒，所以机器空闲时也多烧 CPU 秒")
    else:
        team = f"{p} 个线程池线程 × 各 {b} 个 BLAS 线程 = {p * b} 个计算线程抢 {p} 个核"
        guess = (f"这个 BLAS 没有那把锁，{p * b} 个计算线程多于 {p} 个核，同样的乘积花的 CPU 秒多于 BLAS {b1} 个"
                 "线程的基线")
    lines = [f"运行前的预测：{guess}",
             f"同一次切分（N = {k}），线程池 {p} 个线程：",
             f"  · BLAS {b1} 个线程（{p} 个计算线程）：{_runs_words(single)}墙钟 {single.pool[-1] * ms:.1f} 毫秒，"
             f"线程池 CPU {single.pool_cpu[-1] * ms:.1f} 毫秒" + _cores_note(single),
             f"  · BLAS {b} 个线程（{team}）：{_runs_words(nested)}墙钟 {nested.pool[-1] * ms:.1f} 毫秒，"
             f"线程池 CPU {nested.pool_cpu[-1] * ms:.1f} 毫秒" + _cores_note(nested),
             _pair_verdict(single, nested, mode)]       # review ch12-10 #3: the reader's verdict next to its numbers
    for name, ref in (("reference", reference), ("one_cpu", one_cpu)):
        if ref is not None and check_instance(name, ref, Reference).oversubscription:
            lines.append(reference_line(ref))
    return "\n".join(lines)


def reference_line(reference: Reference) -> str:
    """The stored nested-BLAS pair of ``reference`` (numpy's OpenBLAS) in one line: both pool readings and their
    verdict (:func:`_pair_verdict`).

    >>> from hetlab.book.reference import load
    >>> reference_line(load("build-vm-one-cpu")).split("：")[0]
    '参照 · 本书构建机（2 个 vCPU 的 KVM 虚拟机，只用 1 个 CPU（taskset -c 0）；2026-12-05，测时每个 CPU 的负载 0.13）'
    """
    if not check_instance("reference", reference, Reference).oversubscription:
        raise ValueError(f"reference must store a nested-BLAS pair, got {reference.label!r} without one")
    ms, (r1, r2) = 1e3, reference.oversubscription
    return (f"参照 · {reference.label}：线程池 {r1.workers} 个线程，BLAS {r1.blas_threads} 个线程 CPU "
            f"{r1.pool_cpu[-1] * ms:.1f} 毫秒（墙钟 {r1.pool[-1] * ms:.1f}），BLAS {r2.blas_threads} 个线程 "
            f"CPU {r2.pool_cpu[-1] * ms:.1f} 毫秒（墙钟 {r2.pool[-1] * ms:.1f}）："
            + _pair_verdict(r1, r2, _mode(r2, "openblas")))


def _runs_words(t: SplitTiming) -> str:
    """"一个时钟窗口连跑 k 遍，每遍" before the per-run means when the window held several runs, else nothing."""
    runs = _window_runs(t)
    return f"一个时钟窗口连跑 {runs} 遍，每遍" if runs > 1 else ""
