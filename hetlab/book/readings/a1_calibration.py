"""Appendix A1.1 (calibration): the figures every later prediction of the appendix is made from, printed with
their own spread and next to the stored machines' (:mod:`hetlab.book.reference`): the pool's pipelined O_s, the
single round trip, and the hand-overs of the executor A1.4 runs (:func:`hetlab.real.measure.handovers`), whose
medians and batch spread become A1.4's costs and their allowed range (:func:`handover_costs`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetlab._validate import check_instance, check_int, check_nonnegative, check_positive, check_sequence
from hetlab.book.reference import Reference

__all__ = ["Costs", "handover_costs", "trip_band", "calibration_lines"]


def _ref(reference, name: str = "reference") -> Reference | None:
    return None if reference is None else check_instance(name, reference, Reference)


@dataclass(frozen=True)
class Costs:
    """A1.4's dispatch costs in seconds: ``released``, what a released task waits after it became ready;
    ``queued``, what a queued task waits after its worker freed; ``stretch``, what every task lasts beyond
    its set length."""

    released: float
    queued: float
    stretch: float = 0.0

    def __post_init__(self) -> None:
        check_positive("released", self.released, high=1.0)
        check_positive("queued", self.queued, high=1.0)
        check_nonnegative("stretch", self.stretch, high=1.0)


def _medians(batches, name: str) -> tuple[float, float, float]:
    """(median of all values, least batch median, greatest batch median) of non-negative seconds."""
    rows = [[check_nonnegative(name, t, high=1.0) for t in check_sequence(name, b)]
            for b in check_sequence(name, batches)]
    if len(rows) < 3 or not all(rows):
        raise ValueError(f"{name} must hold at least 3 non-empty batches, got {[len(r) for r in rows]}")
    medians = [float(np.median(r)) for r in rows]
    return float(np.median([t for r in rows for t in r])), min(medians), max(medians)


def handover_costs(handovers: dict) -> tuple[Costs, Costs, Costs]:
    """(typical, low, high) :class:`Costs` from :func:`hetlab.real.measure.handovers`: the medians over all
    batches, and each kind's least and greatest batch median -- the calibration's own spread, from which A1.4
    states its allowed range before the run (a floor of 1 µs keeps a hand-over positive).

    >>> h = {"released": ((8e-4,), (6e-4,), (1e-3,)), "queued": ((9e-5,), (8e-5,), (1e-4,)),
    ...      "stretch": ((1e-4,), (8e-5,), (9e-5,))}
    >>> [round(c.released * 1e6) for c in handover_costs(h)]
    [800, 600, 1000]
    """
    if not isinstance(handovers, dict) or not {"released", "queued", "stretch"} <= set(handovers):
        raise TypeError(f"handovers must be the dict of hetlab.real.measure.handovers(), got {handovers!r:.80}")
    parts = [_medians(handovers[k], k) for k in ("released", "queued", "stretch")]
    floor = 1e-6
    return tuple(Costs(max(floor, r[i]), max(floor, q[i]), s[i]) for i in range(3) for r, q, s in [parts])


def _us(seconds: float) -> str:
    """Microseconds, with a decimal under 10 µs: a ratio printed beside two of them reads right (review A1-13:
    "9.6 倍" beside 81 and 8 µs).

    >>> _us(6.94e-6), _us(61.4e-6)
    ('6.9 µs', '61 µs')
    """
    us = seconds * 1e6
    return f"{us:.1f} µs" if us < 9.95 else f"{us:.0f} µs"


def trip_band(trips) -> tuple[float, float, float]:
    """(round trip, low, high) from the single trips of :func:`hetlab.real.measure.round_trips` (one sequence
    of trips, in seconds, per batch): the median of all trips (seconds), and the lowest and highest batch
    median as multiples of it -- the calibration's own spread. Both are medians of single trips, the statistic
    A1.4 sets beside the median gap of its released tasks.

    >>> [round(x, 6) for x in trip_band([[1e-4, 1e-4, 9e-3], [2e-4, 2e-4, 2e-4], [3e-4, 3e-4, 1e-4]])]
    [0.0002, 0.5, 1.5]
    """
    return _band(trips, "trips")


def _band(trips, name: str) -> tuple[float, float, float]:
    """:func:`_medians` of positive single trips, the batch medians as multiples of the median of all."""
    batches = [[check_positive(name, t, high=1.0) for t in check_sequence(name, b)]
               for b in check_sequence(name, trips)]
    mid, low, high = _medians(batches, name)
    return mid, low / mid, high / mid


def calibration_lines(cal: dict, round_trip: float, reference: Reference | None = None,
                      h200: Reference | None = None, *, trips=None, paused=None, pause: float | None = None,
                      pipelined: float | None = None, workers: int | None = None, handovers: dict | None = None) -> str:
    """A1.1: this machine's CPUs, FP64 matmul rate (with its BLAS threads) and dispatch overheads
    (``cal`` from :func:`hetlab.real.measure.calibrate`, ``round_trip`` in seconds; ``trips``: the batches of
    single trips it is the median of, whose batch medians' range is printed), then the same figures of the
    stored machines.

    ``pipelined`` (seconds): the pipelined process-pool O_s measured on the appendix's pool of ``workers``
    workers, printed in place of ``cal``'s (what queued tasks pay in A1.3 and A1.4). ``paused``: the batches of
    single trips each taken after an idle pause of ``pause`` seconds (:func:`hetlab.real.measure.round_trips`
    with ``pause``), whose median is printed beside the back-to-back trip. ``handovers``: the hand-overs of
    A1.4's executor (:func:`hetlab.real.measure.handovers`, waits of ``pause`` seconds), what A1.4's released and
    queued tasks pay and how much longer every task lasts, with the spread of the batches' medians."""
    needed = {"cpus", "matmul_gflops", "thread_overhead_s", "process_overhead_s"}
    if not isinstance(cal, dict) or not needed <= set(cal):
        raise TypeError(f"cal must be the dict returned by hetlab.real.measure.calibrate(), got {cal!r:.80}")
    round_trip = check_positive("round_trip", round_trip)
    pipelined = None if pipelined is None else check_positive("pipelined", pipelined, high=1.0)
    workers = None if workers is None else check_int("workers", workers, low=1, high=4096)
    pause = None if pause is None else check_positive("pause", pause, high=0.1)
    band = None if paused is None else _band(paused, "paused")
    if (pipelined is None) != (workers is None):
        raise ValueError("pipelined and workers go together: the pipelined O_s and the pool size it was measured on")
    if (paused is None and handovers is None) != (pause is None):
        raise ValueError("paused or handovers go with pause: the idle pause before each trip, the wait of each task")

    def line(c: dict, trip: float | None, pipe: float | None = None) -> str:
        blas = c.get("blas_threads")
        text = (f"{c['cpus']} 个可用 CPU；FP64 矩阵乘 {c['matmul_gflops']:.0f} GFLOP/s"
                + (f"（BLAS 用 {blas} 个线程）" if blas else "")
                + f"；派发开销 O_s：线程池 {_us(c['thread_overhead_s'])}，"
                f"进程池 {_us(pipe or c['process_overhead_s'])}")
        return text + (f"，进程池单次往返 {_us(trip)}" if trip else "")

    def spread(batches, what: str) -> str:
        mid, low, high = _band(batches, "paused" if batches is paused else "trips")
        count = sum(len(b) for b in batches)
        return (f"  {what}是 {len(batches)} 批共 {count} 次逐次计时的中位数；各批自己的中位数在 "
                f"{_us(mid * low)} 到 {_us(mid * high)} 之间，即总中位数的 {low:.2f} 到 {high:.2f} 倍")

    os_ = pipelined or cal["process_overhead_s"]
    pool = (" " if pipelined is None else
            f"（A1.3、A1.4 的 {workers} 个工作进程上三次 200 个空任务中最快的一次）")
    lines = ["本机：" + line(cal, round_trip, pipelined),
             f"  进程池的单次往返是流水线 O_s{pool}的 {round_trip / os_:.1f} 倍，"
             f"进程池的 O_s 是线程池的 {os_ / cal['thread_overhead_s']:.1f} 倍"]
    if trips is not None:
        lines.append(spread(trips, "单次往返"))
    if band is not None:
        mid = band[0]
        lines.append(f"  每次往返前先空闲 {pause * 1e3:.1f} 毫秒（A1.4 任务的中位长度）：单次往返 {_us(mid)}，"
                     f"是一次接一次的 {mid / round_trip:.1f} 倍；A1.4 里被释放的任务付它")
        lines.append(spread(paused, "空闲后的单次往返"))
    if handovers is not None:
        typical, low, high = handover_costs(handovers)
        count, batches = len(handovers["released"][0]) + 1, len(handovers["released"])
        lines += [f"  A1.4 的执行器上的交接（{count} 个各等 {pause * 1e3:.1f} 毫秒的任务，{batches} 批）："
                  f"一条链上被释放的任务 {_us(typical.released)}，互不依赖、排队的任务 {_us(typical.queued)}，"
                  f"每个任务比设定的等待长 {_us(typical.stretch)}",
                  f"  各批中位数的范围：释放交接 {_us(low.released)} 到 {_us(high.released)}，排队交接 "
                  f"{_us(low.queued)} 到 {_us(high.queued)}，拉长 {_us(low.stretch)} 到 {_us(high.stretch)}；"
                  "A1.4 按它们定允许范围"]
    for ref in (_ref(reference), _ref(h200, "h200")):
        if ref is None or not ref.calibration:
            continue
        c = ref.calibration
        if c.get("handovers"):              # recorded as A1.1 measures now: the executor's own hand-overs
            typical = handover_costs(c["handovers"])[0]
            text = (line(c, c["round_trip_median_s"], c["pipelined_s"])
                    + f"；释放交接 {_us(typical.released)}，排队交接 {_us(typical.queued)}，每个任务拉长 "
                    f"{_us(typical.stretch)}" + (f"（{c['handovers_note']}）" if c.get("handovers_note") else ""))
        elif c.get("paused_trip_s"):        # recorded as A1.1 measured before: medians of single trips
            text = (line(c, c["round_trip_median_s"], c["pipelined_s"])
                    + f"；空闲 {c['pause_s'] * 1e3:.1f} 毫秒后的单次往返 {_us(c['paused_trip_s'])}，"
                    f"是一次接一次的 {c['paused_trip_s'] / c['round_trip_median_s']:.1f} 倍")
        else:
            text = line(c, c.get("round_trip_s"))
            if c.get("round_trip_s"):
                # older readings time the round trip as one mean of consecutive trips in one pool
                text += "（一个池子里连续 200 次的均值，不是逐次计时的中位数）"
        lines.append(f"参照 · {ref.label}：" + text)
    return "\n".join(lines)


