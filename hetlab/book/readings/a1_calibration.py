"""Appendix A1.1 (calibration): the figures every later prediction of the appendix is made from, printed
next to the stored machines' (:mod:`hetlab.book.reference`): the pool's pipelined O_s (A1.3) and the
hand-overs of the executor A1.4 runs, calibrated on graphs like A1.4's (:func:`hetlab.real.measure.handovers`),
whose means are A1.4's costs (:func:`handover_costs`) and whose spread its prediction interval draws from.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetlab._validate import check_instance, check_int, check_nonnegative, check_positive, check_sequence
from hetlab.book.reference import Reference

__all__ = ["Costs", "handover_costs", "calibration_lines"]


def _refs(reference) -> list[Reference]:
    """``reference``: None, one :class:`~hetlab.book.reference.Reference`, or a tuple or list of them."""
    items = reference if isinstance(reference, (tuple, list)) else [reference]
    return [check_instance("reference", r, Reference) for r in items if r is not None]


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


def _samples(handovers: dict, key: str) -> list[list[float]]:
    """One list of non-negative seconds per calibration graph for ``key`` of :func:`handovers`' dict."""
    return [[check_nonnegative(key, t, high=1.0) for t in check_sequence(key, b, empty=True)]
            for b in check_sequence(key, handovers[key])]


def _check_handovers(handovers) -> dict[str, list[list[float]]]:
    """``handovers`` (:func:`hetlab.real.measure.handovers`) checked: three kinds, one list per graph each, at
    least 3 graphs, some released gaps and some stretches."""
    if not isinstance(handovers, dict) or not {"released", "queued", "stretch"} <= set(handovers):
        raise TypeError(f"handovers must be the dict of hetlab.real.measure.handovers(), got {handovers!r:.80}")
    rows = {k: _samples(handovers, k) for k in ("released", "queued", "stretch")}
    counts = {k: len(v) for k, v in rows.items()}
    if len(set(counts.values())) != 1 or counts["released"] < 3:
        raise ValueError(f"handovers must hold one entry per calibration graph (at least 3) for each kind, "
                         f"got {counts}")
    for k in ("released", "stretch"):
        if not any(rows[k]):
            raise ValueError(f"handovers[{k!r}] holds no value: the calibration graphs had no such task")
    return rows


def handover_costs(handovers: dict) -> Costs:
    """The typical :class:`Costs` from :func:`hetlab.real.measure.handovers`: each kind's **mean** over all
    calibration graphs (the extra time adds the hand-overs up, and a sum follows the mean, not the median; a
    floor of 1 µs keeps a hand-over positive). Where no calibration task queued (many workers), a queued task
    is charged the released mean: it cannot wait longer than a task whose worker sat idle.

    >>> h = {"released": ((8e-4, 6e-4), (1e-3,), (6e-4,)), "queued": ((9e-5,), (), (1.2e-4,)),
    ...      "stretch": ((1e-4,), (8e-5,), (9e-5,))}
    >>> c = handover_costs(h)
    >>> round(c.released * 1e6), round(c.queued * 1e6), round(c.stretch * 1e6)
    (750, 105, 90)
    """
    rows = _check_handovers(handovers)
    mean = {k: float(np.mean([t for r in v for t in r])) if any(v) else None for k, v in rows.items()}
    floor = 1e-6
    queued = mean["queued"] if mean["queued"] is not None else mean["released"]
    return Costs(max(floor, mean["released"]), max(floor, queued), mean["stretch"])


def _us(seconds: float) -> str:
    """Microseconds, with a decimal under 10 µs: a ratio printed beside two of them reads right (review A1-13:
    "9.6 倍" beside 81 and 8 µs).

    >>> _us(6.94e-6), _us(61.4e-6)
    ('6.9 µs', '61 µs')
    """
    us = seconds * 1e6
    return f"{us:.1f} µs" if us < 9.95 else f"{us:.0f} µs"


def _handover_text(handovers: dict) -> str:
    """The typical hand-overs (:func:`handover_costs`) with how many calibration tasks each mean is over."""
    rows, typical = _check_handovers(handovers), handover_costs(handovers)
    count = {k: sum(len(r) for r in v) for k, v in rows.items()}
    queued = (f"排队的 {_us(typical.queued)}（{count['queued']} 个）" if count["queued"]
              else "没有排队的任务（按释放交接计）")
    return (f"被释放的任务平均 {_us(typical.released)}（{count['released']} 个），{queued}，"
            f"每个任务平均拉长 {_us(typical.stretch)}")


def calibration_lines(cal: dict, reference: Reference | None = None, h200: Reference | None = None, *,
                      pipelined: float | None = None, workers: int | None = None,
                      handovers: dict | None = None) -> str:
    """A1.1: this machine's CPUs, FP64 matmul rate (with its BLAS threads) and dispatch overheads (``cal``
    from :func:`hetlab.real.measure.calibrate`), then the same figures of the stored machines.

    ``pipelined`` (seconds): the pipelined process-pool O_s measured on the appendix's pool of ``workers``
    workers, printed in place of ``cal``'s (what A1.3 predicts with). ``handovers``: the hand-overs of A1.4's
    executor on graphs like A1.4's (:func:`hetlab.real.measure.handovers`), whose means A1.4 charges
    (:func:`handover_costs`) and whose spread its prediction interval draws from."""
    needed = {"cpus", "matmul_gflops", "thread_overhead_s", "process_overhead_s"}
    if not isinstance(cal, dict) or not needed <= set(cal):
        raise TypeError(f"cal must be the dict returned by hetlab.real.measure.calibrate(), got {cal!r:.80}")
    pipelined = None if pipelined is None else check_positive("pipelined", pipelined, high=1.0)
    workers = None if workers is None else check_int("workers", workers, low=1, high=4096)
    if (pipelined is None) != (workers is None):
        raise ValueError("pipelined and workers go together: the pipelined O_s and the pool size it was measured on")

    def line(c: dict, pipe: float | None = None) -> str:
        blas = c.get("blas_threads")
        return (f"{c['cpus']} 个可用 CPU；FP64 矩阵乘 {c['matmul_gflops']:.0f} GFLOP/s"
                + (f"（BLAS 用 {blas} 个线程）" if blas else "")
                + f"；派发开销 O_s：线程池 {_us(c['thread_overhead_s'])}，"
                f"进程池 {_us(pipe or c['process_overhead_s'])}")

    os_ = pipelined or cal["process_overhead_s"]
    pool = "" if pipelined is None else f"（{workers} 个工作进程上三次 200 个空任务中最快的一次）"
    lines = ["本机：" + line(cal, pipelined),
             f"  进程池的 O_s{pool}是线程池的 {os_ / cal['thread_overhead_s']:.1f} 倍"]
    if handovers is not None:
        graphs = len(handovers["released"]) if isinstance(handovers, dict) and "released" in handovers else 0
        lines.append(f"  A1.4 的执行器上的交接（{graphs} 张与 A1.4 同类的图，各跑一次）：" + _handover_text(handovers))
    for ref in (_ref(reference), _ref(h200, "h200")):
        if ref is None or not ref.calibration:
            continue
        c = ref.calibration
        text = line(c, c.get("pipelined_s"))
        if c.get("handovers") and isinstance(c["handovers"], dict) and c.get("handovers_graphs"):
            text += "；交接：" + _handover_text(c["handovers"])
            if c.get("handovers_note"):
                text += f"（{c['handovers_note']}）"
        lines.append(f"参照 · {ref.label}：" + text)
    return "\n".join(lines)
